// The interaction's entry page, sign-in and sign-up within an interaction, and its abort.
import type { RouteContext, Router } from '../../http/router.ts';
import { AccountError, ThrottledError } from '../accounts.ts';
import { readForm, refuseForm, type InteractionDetails, type InteractionKit } from './kit.ts';
import { signUp } from './onboarding.ts';
import { renderConsent, renderSignIn, renderSignUp, type SignUpView } from './views.ts';

export function registerLoginRoutes(router: Router, kit: InteractionKit): void {
  router.get('/interaction/:uid', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    if (d.prompt.name === 'login') return renderSignIn(kit, c, d);
    return renderConsent(kit, c, d);
  });
  router.post('/interaction/:uid/sign-in', (c) => signIn(kit, c));
  router.get('/interaction/:uid/sign-up', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    renderSignUp(kit, c, interactionSignUp(kit, d));
  });
  router.post('/interaction/:uid/sign-up', (c) => signUpInInteraction(kit, c));
  router.post('/interaction/:uid/abort', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!kit.checkCsrf(d.uid, form)) return refuseForm(c.res);
    await kit.provider.interactionFinished(
      c.req,
      c.res,
      { error: 'access_denied', error_description: 'The user denied the request.' },
      { mergeWithLastSubmission: false },
    );
  });
}

async function signIn(kit: InteractionKit, c: RouteContext): Promise<void> {
  const d = await kit.details(c);
  if (!d) return;
  const form = await readForm(c.req);
  if (!kit.checkCsrf(d.uid, form)) return refuseForm(c.res);
  const email = form.get('email') ?? '';
  try {
    const user = await kit.accounts.signIn(email, form.get('password') ?? '');
    await kit.provider.interactionFinished(
      c.req,
      c.res,
      { login: { accountId: user.id, amr: ['pwd'] } },
      { mergeWithLastSubmission: false },
    );
  } catch (err) {
    if (err instanceof ThrottledError) {
      return renderSignIn(kit, c, d, {
        status: 429,
        error: err.message,
        email,
        headers: { 'retry-after': String(err.retryAfterSeconds) },
      });
    }
    if (err instanceof AccountError) return renderSignIn(kit, c, d, { status: 400, error: err.message, email });
    throw err;
  }
}

async function signUpInInteraction(kit: InteractionKit, c: RouteContext): Promise<void> {
  const d = await kit.details(c);
  if (!d) return;
  const form = await readForm(c.req);
  if (!kit.checkCsrf(d.uid, form)) return refuseForm(c.res);
  const view = interactionSignUp(kit, d);
  const done = await signUp(kit, c, form, (error, field) => renderSignUp(kit, c, { ...view, status: 400, error, field, form }));
  if (!done) return;
  // The consent page that follows (a new interaction) reads how the verification e-mail went here.
  await kit.provider.interactionFinished(
    c.req,
    c.res,
    { login: { accountId: done.user.id, amr: ['pwd'] }, verificationMail: done.mail },
    { mergeWithLastSubmission: false },
  );
}

function interactionSignUp(kit: InteractionKit, d: InteractionDetails): SignUpView {
  const { uid } = d;
  return {
    action: `/interaction/${uid}/sign-up`,
    signInHref: `/interaction/${uid}`,
    csrf: kit.csrfFor(uid),
    uid,
    returnTo: d.params.redirect_uri,
  };
}
