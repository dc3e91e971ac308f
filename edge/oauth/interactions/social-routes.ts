// Social sign-in through any OpenID Connect provider (social-client.ts): the interaction sends
// the browser to the provider, the callback maps the identity to an account, and a one-time
// ticket brings the browser back under /interaction/<uid> to finish. A flow started from an
// invitation page returns to the same callback and finishes there (invitation-social.ts).
import { randomBytes } from 'node:crypto';
import type { RouteContext, Router } from '../../http/router.ts';
import { AccountError, type Account } from '../accounts.ts';
import { messagePage } from '../pages.ts';
import { finishInvitation } from './invitation-social.ts';
import { redirect, send, type InteractionKit } from './kit.ts';
import { isInvitationState, type Social } from './social-client.ts';

export function registerSocialRoutes(router: Router, kit: InteractionKit, social: Social): void {
  router.get('/interaction/:uid/social', (c) => start(kit, social, c));
  router.get('/social/callback', (c) => callback(kit, social, c));
  router.get('/interaction/:uid/social/complete', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    const ticketId = c.query.get('ticket') ?? '';
    const ticket = /^[A-Za-z0-9_-]{32}$/.test(ticketId) ? await social.tickets.take(ticketId) : undefined;
    if (!ticket || ticket.uid !== d.uid)
      return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
    await kit.provider.interactionFinished(
      c.req,
      c.res,
      { login: { accountId: ticket.userId, amr: ['fed'] } },
      { mergeWithLastSubmission: false },
    );
  });
}

async function start(kit: InteractionKit, social: Social, c: RouteContext): Promise<void> {
  const d = await kit.details(c);
  if (!d) return;
  if (!kit.social) return send(c.res, 404, messagePage('Not available', 'Social sign-in is not configured.', 'error'));
  await social.begin(c.res, { uid: d.uid });
}

async function callback(kit: InteractionKit, social: Social, c: RouteContext): Promise<void> {
  const saved = await social.take(c);
  if (!saved) return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
  if (isInvitationState(saved)) return finishInvitation(kit, social, c, saved);
  if (c.query.get('error')) {
    return send(
      c.res,
      400,
      messagePage('Sign-in cancelled', 'The identity provider did not sign you in. Start again from your application.', 'error'),
    );
  }
  let user: Account;
  try {
    user = await kit.accounts.fromSocialIdentity(await social.identity(c, saved));
  } catch (err) {
    if (err instanceof AccountError) return send(c.res, 409, messagePage('Cannot sign you in', err.message, 'error'));
    kit.app.logger.warn({ err: (err as Error).message }, 'social sign-in failed');
    return send(c.res, 502, messagePage('Cannot sign you in', 'The identity provider could not confirm who you are.', 'error'));
  }
  const ticket = randomBytes(24).toString('base64url');
  await social.tickets.put({ _id: ticket, uid: saved.uid, userId: user.id, expiresAt: kit.app.now() + 5 * 60 * 1000 });
  // Back under /interaction/<uid>, where the browser sends the interaction cookie.
  redirect(c.res, `/interaction/${saved.uid}/social/complete?ticket=${ticket}`);
}
