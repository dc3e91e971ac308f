// Accepting an invitation at `{auth_url}/invitations/<token>`, the link e-mailed by the Agents
// API's createInvitation. The page offers both ways in, whatever the address: sign in with the
// invited address's password, or create an account for it. Either way the account must have the
// invited address; a new account's address counts as verified (the link was mailed to it). The
// invitations service then makes the account a member with the invited role and uses the link up.
// The page never says whether the address has an account, before a correct password: "I am new"
// answers one page ("Check your e-mail") for an address that has one (nothing is created) as for
// a new one (the account is created and joins), and when the organization is full (a new account
// is created but cannot join yet); and in every case the link it was given stops working, as an
// accepted link does: when no one joined, the invitation gets a new link, mailed to the address
// with what happened (invitation-mail.ts), so opening the old link again shows the same "not
// valid" page whatever the address. A wrong password is the same message whether or not the
// account exists, full organization or not, and leaves the link as it was. With social sign-in
// configured, the page also offers "Continue with <provider>" (invitation-social.ts): an identity
// whose provider verified the invited address proves it as the password does, and is answered
// as a correct password is.
import { Code, ConnectError } from '@connectrpc/connect';
import type { Invitation } from '../../../gen/mindgate/agents/v1/invitations_pb.js';
import { roleName } from '../../api/access.ts';
import { escapeHtml } from '../../http/escape-html.ts';
import type { RouteContext, Router } from '../../http/router.ts';
import { AccountError, AccountExistsError, MIN_PASSWORD_LENGTH, type Account } from '../accounts.ts';
import { errorBox, layout, messagePage } from '../pages.ts';
import { joinMailNotice, mailAlreadyRegistered, mailCreatedOrganizationFull, mailJoined, type JoinMail } from './invitation-mail.ts';
import { readForm, refuseForm, send, type InteractionKit } from './kit.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const GONE = 'This invitation link is not valid: it was used, replaced, withdrawn or has expired. Ask for a new one.';

export interface Invited {
  invitation: Invitation;
  organizationName: string;
}

export async function invitationOf(kit: InteractionKit, token: string): Promise<Invited | undefined> {
  if (!TOKEN.test(token)) return undefined;
  try {
    const res = await kit.app.clients.invitations.getInvitationByToken({ token });
    return { invitation: res.invitation!, organizationName: res.organizationName };
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
    throw err;
  }
}

function invitationPage(kit: InteractionKit, invited: Invited, token: string, csrf: string, error?: string): string {
  const org = escapeHtml(invited.organizationName);
  const email = escapeHtml(invited.invitation.email);
  const role = escapeHtml(roleName(invited.invitation.role) ?? 'member');
  const form = (action: string, fields: string, button: string) =>
    `<form method="post" action="/invitations/${token}" novalidate><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><input type="hidden" name="action" value="${action}">${fields}<button type="submit">${button}</button></form>`;
  const social = kit.social
    ? `<p class="or">or</p><form method="post" action="/invitations/${token}/social"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><button type="submit" class="secondary">Continue with ${escapeHtml(kit.social.displayName)}</button></form>`
    : '';
  return layout(
    `Join ${invited.organizationName}`,
    `<h1>Join ${org}</h1>
<p>You are invited to join <strong>${org}</strong> as <strong>${role}</strong>, with the address <strong>${email}</strong>.</p>
${errorBox(error)}
<h2>I have an account</h2>
${form('sign-in', `<label for="password">Password for ${email}</label><input id="password" name="password" type="password" autocomplete="current-password" required>`, 'Sign in and join')}
<h2>I am new</h2>
${form(
  'sign-up',
  `<label for="name">Your name</label><input id="name" name="name" autocomplete="name"><label for="new-password">Choose a password (at least ${MIN_PASSWORD_LENGTH} characters)</label><input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">`,
  'Create my account and join',
)}
${social}`,
  );
}

/**
 * "I am new": the account created for the invited address (verified by the link), or
 * 'registered' when the address already has one.
 */
async function newAccountFor(kit: InteractionKit, invited: Invited, form: URLSearchParams): Promise<Account | 'registered'> {
  const email = invited.invitation.email;
  try {
    return await kit.accounts.signUp({ email, password: form.get('password') ?? '', name: form.get('name') ?? '', emailVerified: true });
  } catch (err) {
    if (err instanceof AccountExistsError) return 'registered';
    throw err;
  }
}

/** What `work` gives, or undefined once the page was answered again with the person's mistake (a wrong password, a short one). */
async function orFormError<T>(kit: InteractionKit, c: RouteContext, invited: Invited, work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AccountError)) throw err;
    send(c.res, 400, invitationPage(kit, invited, c.params.token, kit.standaloneCsrf(c.req, c.res), err.message));
    return undefined;
  }
}

/** The one page "I am new" answers, whether the account was created or already existed, and joined or not. */
function checkYourMail(c: RouteContext, invited: Invited, mail: JoinMail): void {
  send(c.res, 200, messagePage('Check your e-mail', joinMailNotice(invited.invitation.email, invited.organizationName, mail)));
}

export const gone = (c: RouteContext) => send(c.res, 404, messagePage('Invitation not valid', GONE, 'error'));
const isCode = (err: unknown, code: Code) => err instanceof ConnectError && err.code === code;

/** What "I am new" did: the new account joined; or it did not, because the address has an account or the organization is full. */
async function signUpOutcome(
  kit: InteractionKit,
  c: RouteContext,
  token: string,
  user: Account | 'registered',
): Promise<'joined' | 'registered' | 'full' | 'gone'> {
  if (user === 'registered') return 'registered';
  try {
    return (await accept(kit, c, token, user, 'created')) ? 'joined' : 'gone';
  } catch (err) {
    // The plan's member limit: the account stays, and joins from the new link after an upgrade.
    if (isCode(err, Code.ResourceExhausted)) return 'full';
    throw err;
  }
}

/**
 * "I am new": one page whatever happened, and the link given ends in every case. A new account
 * that joined used it up; otherwise the invitation gets a new link, which only the address's
 * e-mail carries, with what happened.
 */
async function answerSignUp(kit: InteractionKit, c: RouteContext, token: string, invited: Invited, user: Account | 'registered') {
  const outcome = await signUpOutcome(kit, c, token, user);
  if (outcome === 'gone') return gone(c);
  if (outcome === 'joined') return checkYourMail(c, invited, await mailJoined(kit, invited));
  let replaced: Awaited<ReturnType<typeof kit.app.clients.invitations.replaceInvitationLink>>;
  try {
    replaced = await kit.app.clients.invitations.replaceInvitationLink({ token });
  } catch (err) {
    if (isCode(err, Code.NotFound)) return gone(c);
    throw err;
  }
  const input = { ...invited, invitation: replaced.invitation!, link: `${kit.issuer}/invitations/${replaced.token}` };
  const mail = outcome === 'registered' ? await mailAlreadyRegistered(kit, input) : await mailCreatedOrganizationFull(kit, input);
  checkYourMail(c, invited, mail);
}

/** Accepts the invitation for the account and records the step; false when the link is no longer valid. */
async function accept(
  kit: InteractionKit,
  c: RouteContext,
  token: string,
  user: Account,
  account: 'created' | 'existing',
): Promise<boolean> {
  let res: Awaited<ReturnType<typeof kit.app.clients.invitations.acceptInvitation>>;
  try {
    res = await kit.app.clients.invitations.acceptInvitation({ token, userId: user.id, userEmail: user.email });
  } catch (err) {
    if (isCode(err, Code.NotFound)) return false;
    throw err;
  }
  const organizationId = res.membership!.organizationId;
  await kit.recordStep(c, {
    organizationId,
    userId: user.id,
    action: 'acceptInvitation',
    target: `/organizations/${organizationId}/members/${user.id}`,
    details: {
      role: roleName(res.membership!.role) ?? 'member',
      invitation_id: res.invitation!.invitationId,
      team_ids: res.teamIds.join(','),
      account,
      email: user.email,
    },
  });
  return true;
}

/**
 * "I have an account", the password right (or a social identity that proved the address): the
 * account joins, or hears the organization is full, since the address was proved.
 */
export async function answerSignIn(
  kit: InteractionKit,
  c: RouteContext,
  token: string,
  invited: Invited,
  user: Account,
  account: 'created' | 'existing' = 'existing',
) {
  let accepted: boolean;
  try {
    accepted = await accept(kit, c, token, user, account);
  } catch (err) {
    // The plan's member limit: the link stays valid for after an upgrade.
    if (isCode(err, Code.ResourceExhausted))
      return send(c.res, 403, messagePage(`${invited.organizationName} is full`, `${(err as ConnectError).rawMessage}.`, 'error'));
    throw err;
  }
  if (!accepted) return gone(c);
  const org = invited.organizationName;
  send(
    c.res,
    200,
    messagePage(
      `You joined ${org}`,
      `You are now ${roleName(invited.invitation.role)} of ${org}. Sign in from your application (an MCP client, the dashboard or the CLI) and choose ${org}.`,
    ),
  );
}

export function registerInvitationRoutes(router: Router, kit: InteractionKit): void {
  router.get('/invitations/:token', async (c: RouteContext) => {
    const invited = await invitationOf(kit, c.params.token);
    if (!invited) return gone(c);
    // A GET only shows the forms, so link scanners in mail systems cannot use the link up.
    send(c.res, 200, invitationPage(kit, invited, c.params.token, kit.standaloneCsrf(c.req, c.res)));
  });

  router.post('/invitations/:token', async (c: RouteContext) => {
    const form = await readForm(c.req);
    if (!kit.checkStandaloneCsrf(c.req, form)) return refuseForm(c.res);
    const token = c.params.token;
    const invited = await invitationOf(kit, token);
    if (!invited) return gone(c);
    if (form.get('action') === 'sign-up') {
      const user = await orFormError(kit, c, invited, () => newAccountFor(kit, invited, form));
      if (user) await answerSignUp(kit, c, token, invited, user);
      return;
    }
    const user = await orFormError(kit, c, invited, () => kit.accounts.signIn(invited.invitation.email, form.get('password') ?? ''));
    if (user) await answerSignIn(kit, c, token, invited, user);
  });
}
