// What the invitation page's "I am new" sends to the invited address. The page itself answers the
// same whether or not the address already had an account, and whether or not the organization had
// room (it never tells); the e-mail, which only the address's owner reads, says which it was and
// what to do next, with the invitation's new link when no one joined (the page's link is ended).
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Invitation } from '../../../gen/mindgate/agents/v1/invitations_pb.js';
import { roleName } from '../../api/access.ts';
import type { InteractionKit } from './kit.ts';

/** How the message went: delivered, queued for a retry, or not even written. */
export type JoinMail = 'sent' | 'queued' | 'failed';

interface JoinMailInput {
  invitation: Invitation;
  organizationName: string;
  /** The invitation's new link, to sign in from and join. */
  link: string;
}

async function sendJoinMail(kit: InteractionKit, to: string, subject: string, text: string): Promise<JoinMail> {
  try {
    return (await kit.app.mail.send({ purpose: 'invitation-join', to, subject, text })).status;
  } catch (err) {
    kit.app.logger.error({ err: (err as Error).message }, 'invitation mail could not be queued');
    return 'failed';
  }
}

/** A new account was created from the link and joined the organization. */
export function mailJoined(kit: InteractionKit, input: Omit<JoinMailInput, 'link'>): Promise<JoinMail> {
  const { invitation, organizationName: org } = input;
  return sendJoinMail(
    kit,
    invitation.email,
    `You joined ${org} on Mindgate`,
    `Your Mindgate account for ${invitation.email} was created and you joined ${org} as ${roleName(invitation.role)}.\n\n` +
      `Sign in from your application (an MCP client, the dashboard or the CLI) with this address and the password you chose, and choose ${org}.\n\n` +
      'If you did not do this, reply to the person who invited you.\n',
  );
}

/** "I am new" for an address that has an account: nothing was created; the owner is told how to join. */
export function mailAlreadyRegistered(kit: InteractionKit, input: JoinMailInput): Promise<JoinMail> {
  const { invitation, organizationName: org, link } = input;
  return sendJoinMail(
    kit,
    invitation.email,
    `Joining ${org} on Mindgate: you already have an account`,
    `Someone, probably you, chose "I am new" on the invitation to join ${org} as ${roleName(invitation.role)}, but ${invitation.email} already has a Mindgate account. ` +
      'No account was created and the password entered was not kept.\n\n' +
      `The link you used no longer works. To join ${org}, open this one and choose "I have an account", with your current password:\n\n${link}\n\n` +
      'If you did not do this, ignore this message: nothing changed.\n',
  );
}

/** A new account was created from the link, but the organization has no room: it joins later, from the new link. */
export function mailCreatedOrganizationFull(kit: InteractionKit, input: JoinMailInput): Promise<JoinMail> {
  const { invitation, organizationName: org, link } = input;
  const until = invitation.expireTime ? ` until ${timestampDate(invitation.expireTime).toUTCString()}` : '';
  return sendJoinMail(
    kit,
    invitation.email,
    `Joining ${org} on Mindgate: your account is ready, ${org} is full for now`,
    `Your Mindgate account for ${invitation.email} was created, but ${org} already has as many members as its plan allows, so you have not joined it yet. ` +
      `The invitation to join as ${roleName(invitation.role)} stays open${until}; the link you used no longer works.\n\n` +
      `Once there is room (ask the person who invited you), open the invitation again and choose "I have an account", with the password you chose:\n\n${link}\n\n` +
      'If you did not do this, reply to the person who invited you.\n',
  );
}

/** The page's one answer for every case: the e-mail says which. */
export function joinMailNotice(email: string, organizationName: string, mail: JoinMail): string {
  if (mail === 'sent') return `We sent a message to ${email} about joining ${organizationName}. Open it to continue.`;
  if (mail === 'queued')
    return `We could not send the message about joining ${organizationName} to ${email} yet; we will keep trying for a few hours. Open it to continue.`;
  return `We could not send the message about joining ${organizationName} to ${email}.`;
}
