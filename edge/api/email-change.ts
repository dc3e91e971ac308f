// Changing the signed-in user's e-mail address (POST /users/me/email-change): the agents service
// checks the password and issues a single-use token (UsersService.CreateEmailChange); this route
// mails the link to the new address, to the authorization server's /verify-email page, which
// makes the change (and tells the old address, oauth/interactions/account-routes.ts). When
// another account has the address, the address gets a notice instead and the caller the same
// answer, so that the operation does not tell which addresses have accounts.
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { CreateEmailChangeResponse } from '../../gen/mindgate/agents/v1/users_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { callerOf } from './access.ts';
import { setAuditOrganizations } from './audit.ts';
import { errors, json, notFoundAs404, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';
import { organizationsOf } from './users.ts';

export const RequestEmailChangeSchema = z
  .object({
    new_email: z
      .string({ error: 'must be a string' })
      .min(1, { error: 'must not be empty' })
      .max(254, { error: 'must be at most 254 characters' })
      .meta({ description: 'The address to move the account to.', example: 'ada.king@example.com' }),
    current_password: z
      .string({ error: 'must be a string' })
      .max(1_024, { error: 'must be at most 1024 characters' })
      .meta({ description: "The account's password (wrong guesses count as failed sign-ins)." }),
  })
  .strict()
  .meta({ title: 'RequestEmailChange' });

const EmailChangeSchema = z
  .object({
    new_email: z.string().meta({ description: 'The address the link was sent to (lower case).' }),
    expires_at: z.string().meta({ description: 'Until when the link works.' }),
  })
  .meta({ title: 'EmailChange' });

/** The service's refusal of a field, as a 422 on that field of the body. */
function fieldRefusal(err: unknown): never {
  if (err instanceof ConnectError && err.code === Code.InvalidArgument) {
    const [field, ...rest] = err.rawMessage.split(': ');
    if (field === 'current_password' || field === 'new_email') {
      throw new RequestValidationError([{ type: 'value_error', loc: ['body', field], msg: rest.join(': ') }]);
    }
  }
  throw err;
}

/** The link to the new address, or, when another account has it, a notice without one. */
async function mailNewAddress(ctx: AppContext, change: CreateEmailChangeResponse): Promise<void> {
  const name = change.user!.name;
  if (change.addressTaken) {
    await ctx.mail.send({
      purpose: 'email-change-taken',
      to: change.newEmail,
      subject: 'Someone asked to use this address on Mindgate',
      text: `Hello,\n\nSomeone asked to use this address for a Mindgate account. It already has one, so nothing was changed and no account was moved to it.\n\nYou need not do anything.\n`,
    });
    return;
  }
  // `purpose` only words the page the link opens; what the token does is the service's to say.
  const link = `${ctx.config.publicUrls.auth}/verify-email?token=${change.token}&purpose=change`;
  await ctx.mail.send({
    purpose: 'email-change',
    to: change.newEmail,
    subject: 'Confirm your new e-mail address for Mindgate',
    text: `Hello ${name},\n\nYou asked to sign in to Mindgate with this address from now on. Confirm your new address by opening this link within 24 hours:\n\n${link}\n\nUntil then you keep signing in with your current address. If you did not ask for this, ignore this message.\n`,
  });
}

export function requestEmailChangeRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/users/me/email-change',
      operationId: 'requestEmailChange',
      summary: 'Change my e-mail address',
      description:
        "Mails a link to `new_email` that, opened within 24 hours, moves the account to that address (verified; the account's ETag changes; the old address no longer signs in and gets a notice). Needs `current_password` (422 on `body.current_password` when wrong; wrong guesses count as failed sign-ins and are throttled, 429). 409 `password-required` for an account that signs in only through a social identity provider (set a password first). 422 on `body.new_email` for a malformed address or the account's own. The answer is the same whether or not another account has the address (that address is mailed a notice instead of a link). Recorded in the audit log of every organization the user belongs to.",
      tags: ['Users'],
      responses: {
        '202': json(EmailChangeSchema, 'The link is on its way to the new address.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, RequestEmailChangeSchema, limit);
        const userId = callerOf(c).subject;
        const request = { userId, newEmail: body.new_email, currentPassword: body.current_password };
        const change = await notFoundAs404(() => ctx.clients.users.createEmailChange(request).catch(fieldRefusal));
        await mailNewAddress(ctx, change);
        setAuditOrganizations(c, await organizationsOf(ctx, userId), '/users/me');
        sendJson(c.res, 202, { new_email: change.newEmail, expires_at: new Date(timestampMs(change.expireTime!)).toISOString() });
      },
    }),
    body: RequestEmailChangeSchema,
  };
}
