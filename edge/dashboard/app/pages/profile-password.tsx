// Changing one's password from the profile page (PATCH /users/me with `new_password`, under the
// account's ETag): with the current password, or, for an account that signs in only through a
// social identity provider, setting a first one (which changing the e-mail address then needs).
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';

/** The account's current password, which changing the password or the e-mail address asks for. */
export function CurrentPassword({ value, set }: { value: string; set: (value: string) => void }) {
  return (
    <label>
      Current password
      <input type="password" required autocomplete="current-password" value={value} onInput={(e) => set(e.currentTarget.value)} />
    </label>
  );
}

export function ChangePassword() {
  const { api, me, meEtag, reload } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const action = useAction(() => void reload());
  const title = me.has_password ? 'Change password' : 'Set a password';
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = me.has_password ? { new_password: next, current_password: current } : { new_password: next };
      await api.call('PATCH', '/users/me', { body, ifMatch: meEtag ?? undefined });
      setCurrent('');
      setNext('');
      return me.has_password ? 'Your password was changed.' : 'Your password is set: you can also sign in with your e-mail address and it.';
    });
  };
  return (
    <section aria-labelledby="profile-password">
      <h2 id="profile-password">{title}</h2>
      <form onSubmit={save} class="inline-form">
        {me.has_password && <CurrentPassword value={current} set={setCurrent} />}
        <label>
          New password
          <input
            type="password"
            required
            minLength={10}
            maxLength={1024}
            autocomplete="new-password"
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          {title}
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </section>
  );
}
