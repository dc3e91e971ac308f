// Standalone pages, for people who arrive from the website rather than from an application:
// sign-up, the sign-in explainer, and e-mail verification.
import type { Router } from '../../http/router.ts';
import { AccountError, type Account } from '../accounts.ts';
import { messagePage } from '../pages.ts';
import { readForm, refuseForm, send, type InteractionKit } from './kit.ts';
import { signUp, verificationNotice } from './onboarding.ts';
import { renderSignUp } from './views.ts';

export function registerAccountRoutes(router: Router, kit: InteractionKit): void {
  router.get('/sign-up', (c) => {
    const csrf = kit.standaloneCsrf(c.req, c.res);
    renderSignUp(kit, c, { action: '/sign-up', signInHref: '/sign-in', csrf });
  });
  router.post('/sign-up', async (c) => {
    const form = await readForm(c.req);
    if (!kit.checkStandaloneCsrf(c.req, form)) return refuseForm(c.res);
    const csrf = kit.standaloneCsrf(c.req, c.res);
    const done = await signUp(kit, c, form, (error, field) =>
      renderSignUp(kit, c, { action: '/sign-up', signInHref: '/sign-in', csrf, status: 400, error, field, form }),
    );
    if (!done) return;
    send(
      c.res,
      201,
      messagePage(
        'Your account is ready',
        `${verificationNotice(done.user.email, done.mail)} Connect an application (an MCP client, the CLI) to sign in.`,
      ),
    );
  });
  router.get('/sign-in', (c) => {
    send(
      c.res,
      200,
      messagePage(
        'Sign in from your application',
        'Sign-in starts from an application (an MCP client, the dashboard or the CLI), which sends you here. New? Create an account at /sign-up.',
      ),
    );
  });
  registerVerifyEmail(router, kit);
}

function registerVerifyEmail(router: Router, kit: InteractionKit): void {
  router.get('/verify-email', (c) => {
    const token = c.query.get('token') ?? '';
    const csrf = kit.standaloneCsrf(c.req, c.res);
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) {
      return send(c.res, 400, messagePage('Link not valid', 'This verification link is malformed.', 'error'));
    }
    // A GET only shows a button, so that link scanners in mail systems cannot use up the link.
    // The link of an address change says so (`purpose=change`): the words only, since what the
    // token does is decided when the button is pressed.
    const change = c.query.get('purpose') === 'change';
    const [title, text, button] = change
      ? ['Confirm your new e-mail address', 'Confirm that your account signs in with this address from now on.', 'Use this address']
      : ['Verify your e-mail address', 'Confirm that this address is yours.', 'Verify my address'];
    send(
      c.res,
      200,
      messagePage(title, text).replace(
        '</main>',
        `<form method="post" action="/verify-email"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="token" value="${token}"><button type="submit">${button}</button></form></main>`,
      ),
    );
  });
  router.post('/verify-email', async (c) => {
    const form = await readForm(c.req);
    if (!kit.checkStandaloneCsrf(c.req, form)) return refuseForm(c.res);
    let done: Awaited<ReturnType<typeof kit.accounts.verifyEmail>>;
    try {
      done = await kit.accounts.verifyEmail(form.get('token') ?? '');
    } catch (err) {
      if (!(err instanceof AccountError)) throw err;
      return send(c.res, 409, messagePage('Address not changed', err.message, 'error'));
    }
    if (!done) return send(c.res, 400, messagePage('Link not valid', 'This verification link is unknown, used or expired.', 'error'));
    const { account, previousEmail } = done;
    if (previousEmail === undefined) {
      return send(c.res, 200, messagePage('E-mail address verified', `${account.email} is verified. You can close this page.`));
    }
    await mailAddressChanged(kit, account, previousEmail);
    send(
      c.res,
      200,
      messagePage('E-mail address changed', `Your account's address is now ${account.email}, verified. Sign in with it from now on.`),
    );
  });
}

/** Tells the address an account had that it moved (no link: nothing to do when it was the owner). */
async function mailAddressChanged(kit: InteractionKit, account: Account, previousEmail: string): Promise<void> {
  try {
    await kit.app.mail.send({
      purpose: 'email-changed',
      to: previousEmail,
      subject: 'Your Mindgate e-mail address was changed',
      text: `Hello ${account.name},

Your Mindgate account now signs in with ${account.email} instead of this address.

If you did not make this change, contact your organization's administrator at once.
`,
    });
  } catch (err) {
    // The change stands; the notice could not even be queued.
    kit.app.logger.error({ err: (err as Error).message, userId: account.id }, 'address-change notice could not be queued');
  }
}
