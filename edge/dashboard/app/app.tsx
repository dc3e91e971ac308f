// Starting the dashboard: finish a sign-in coming back to /app/auth/callback, say so after a
// sign-out, otherwise sign in; then load the account and its organizations and show the screens.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi } from './api.ts';
import { completeSignIn, onSessionEnded, signIn } from './auth.ts';
import { Layout } from './layout.tsx';
import type { Account, Membership, Session } from './session.tsx';
import { SessionContext } from './session.tsx';
import { readSettings } from './settings.ts';
import { ProblemAlert, toProblem } from './ui.tsx';
import type { ProblemDocument } from './api.ts';

type State =
  | { kind: 'starting'; message: string }
  | { kind: 'signed-out'; message: string; problem?: ProblemDocument }
  | { kind: 'ready'; session: Session };

export function App() {
  const settings = useMemo(readSettings, []);
  const api = useMemo(() => createApi(settings), [settings]);
  const [state, setState] = useState<State>({ kind: 'starting', message: 'Loading the dashboard…' });

  useEffect(() => {
    const stop = onSessionEnded(() => setState({ kind: 'signed-out', message: 'Your session has ended. Sign in again to go on.' }));
    const loadSession = async (): Promise<void> => {
      const [me, memberships] = await Promise.all([
        api.call<Account>('GET', '/users/me'),
        api.call<{ memberships: Membership[] }>('GET', '/users/me/memberships?page_size=100'),
      ]);
      const organization = memberships.data.memberships.find((m) => m.current);
      if (!organization) throw new Error('These tokens act for no organization you belong to. Sign in again and pick one.');
      const session: Session = {
        settings,
        api,
        me: me.data,
        meEtag: me.etag,
        memberships: memberships.data.memberships,
        organization,
        reload: loadSession,
      };
      setState({ kind: 'ready', session });
    };
    const start = async () => {
      const here = new URL(location.href);
      if (here.pathname === `${settings.basePath}/signed-out`) {
        setState({ kind: 'signed-out', message: 'You have signed out.' });
        return;
      }
      if (here.pathname === `${settings.basePath}/auth/callback`) {
        setState({ kind: 'starting', message: 'Signing in…' });
        const returnTo = await completeSignIn(settings, here);
        history.replaceState(null, '', returnTo);
        await loadSession();
        return;
      }
      setState({ kind: 'starting', message: 'Taking you to the sign-in page…' });
      await signIn(settings, `${here.pathname}${here.search}`);
    };
    start().catch((err) => setState({ kind: 'signed-out', message: 'The sign-in did not complete.', problem: toProblem(err) }));
    return stop;
  }, [api, settings]);

  if (state.kind === 'ready') {
    return (
      <SessionContext.Provider value={state.session}>
        <Layout />
      </SessionContext.Provider>
    );
  }
  return (
    <main id="main" class="signed-out">
      <h1>Mindgate dashboard</h1>
      <p role="status">{state.message}</p>
      {state.kind === 'signed-out' && (
        <>
          <ProblemAlert problem={state.problem} />
          <button type="button" onClick={() => void signIn(settings, settings.basePath)}>
            Sign in
          </button>
        </>
      )}
    </main>
  );
}
