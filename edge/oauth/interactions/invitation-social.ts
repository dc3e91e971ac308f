// Accepting an invitation with a social identity: "Continue with <provider>" on the invitation
// page starts the provider's code flow (social-client.ts) with a state bound to the link and to
// the browser's standalone CSRF cookie. On return the provider must have verified the invited
// address: that proves the address as a correct password does, so the account of the identity
// (found or created by UsersService.SignInWithSocialIdentity, which links an existing account
// only when both sides verified the address) joins exactly as on "I have an account". Any
// refusal (another or unverified address, the provider's error, a forged, replayed or expired
// state) happens before an account is looked up or created, and leaves the link as it was.
import { Code, ConnectError } from '@connectrpc/connect';
import type { RouteContext, Router } from '../../http/router.ts';
import { AccountError, type Account } from '../accounts.ts';
import { messagePage } from '../pages.ts';
import { answerSignIn, gone, invitationOf, type Invited } from './invitation-routes.ts';
import { readForm, refuseForm, send, type InteractionKit } from './kit.ts';
import type { InvitationState, Social, SocialIdentity } from './social-client.ts';

const AGAIN = 'The invitation link still works: open it again to sign in with a password, create an account, or try again.';

const refused = (c: RouteContext, status: number, title: string, message: string) =>
  send(c.res, status, messagePage(title, `${message} ${AGAIN}`, 'error'));

export function registerInvitationSocialRoutes(router: Router, kit: InteractionKit, social: Social): void {
  router.post('/invitations/:token/social', async (c: RouteContext) => {
    if (!kit.social) return send(c.res, 404, messagePage('Not available', 'Social sign-in is not configured.', 'error'));
    const form = await readForm(c.req);
    if (!kit.checkStandaloneCsrf(c.req, form)) return refuseForm(c.res);
    const token = c.params.token;
    if (!(await invitationOf(kit, token))) return gone(c);
    await social.begin(c.res, { invitation: token, browser: form.get('csrf') ?? '' });
  });
}

/** Why the identity cannot accept the invitation, or undefined when its provider verified the invited address. */
function mismatch(identity: SocialIdentity, invited: Invited): string | undefined {
  const email = identity.email?.trim().toLowerCase();
  if (!email) return 'The identity provider did not share an e-mail address.';
  if (email !== invited.invitation.email) return `This invitation is for another e-mail address than ${email}.`;
  if (!identity.emailVerified) return `The identity provider has not verified ${email}.`;
  return undefined;
}

/** The callback of a flow started on an invitation page. */
export async function finishInvitation(kit: InteractionKit, social: Social, c: RouteContext, saved: InvitationState): Promise<void> {
  // Another browser than the one that pressed the button (a callback URL passed around) is refused.
  if (!kit.checkStandaloneCsrf(c.req, new URLSearchParams({ csrf: saved.browser })))
    return refused(c, 400, 'Sign-in expired', 'This sign-in was started in another browser.');
  if (c.query.get('error')) return refused(c, 400, 'Sign-in cancelled', 'The identity provider did not sign you in.');
  const token = saved.invitation;
  const invited = await invitationOf(kit, token);
  if (!invited) return gone(c);
  let identity: SocialIdentity;
  try {
    identity = await social.identity(c, saved);
  } catch (err) {
    kit.app.logger.warn({ err: (err as Error).message }, 'social sign-in for an invitation failed');
    return refused(c, 502, 'Cannot sign you in', 'The identity provider could not confirm who you are.');
  }
  const wrong = mismatch(identity, invited);
  if (wrong) return refused(c, 403, 'Cannot accept with this identity', wrong);
  let user: Account & { created: boolean };
  try {
    user = await kit.accounts.fromSocialIdentity(identity);
  } catch (err) {
    // An unverified account has the address: the identity proved the address, so this is said as after a correct password.
    if (err instanceof AccountError) return refused(c, 409, 'Cannot sign you in', err.message);
    throw err;
  }
  try {
    await answerSignIn(kit, c, token, invited, user, user.created ? 'created' : 'existing');
  } catch (err) {
    // The identity was linked earlier to an account that has since moved to another address.
    if (err instanceof ConnectError && err.code === Code.PermissionDenied)
      return refused(c, 403, 'Cannot accept with this identity', `Its account has another e-mail address (${user.email}).`);
    throw err;
  }
}
