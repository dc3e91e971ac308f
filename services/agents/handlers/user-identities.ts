// How an account proves who it is, besides its password: the e-mail verification link (a
// single-use token valid 24 hours, only its SHA-256 stored, in `auth_email_tokens`) and
// identities from a social OpenID Connect provider (`auth_social_identities`).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateEmailVerificationResponseSchema,
  SignInWithSocialIdentityResponseSchema,
  VerifyEmailResponseSchema,
  type CreateEmailVerificationRequest,
  type SignInWithSocialIdentityRequest,
  type VerifyEmailRequest,
} from '../../../gen/mindgate/agents/v1/users_pb.js';
import { invalid, requireText } from '../../common/rpc/validate.ts';
import { moveToNewAddress } from './email-change.ts';
import { accountWithAddress } from './email-index.ts';
import { issueEmailToken, takeEmailToken } from './email-tokens.ts';
import {
  displayName,
  existingUser,
  insertUser,
  isEmail,
  newUserId,
  normalizeEmail,
  toUser,
  type UserRecord,
  type UsersContext,
} from './users.ts';

export async function createEmailVerification(ctx: UsersContext, req: CreateEmailVerificationRequest) {
  const user = await existingUser(ctx, req.userId);
  const { token, expiresAt } = await issueEmailToken(ctx, { userId: user._id, email: user.email });
  return create(CreateEmailVerificationResponseSchema, { token, expireTime: timestampFromMs(expiresAt) });
}

/**
 * Uses a link's token: verifies the account's address, or, for a token from CreateEmailChange,
 * moves the account to the new one (email-change.ts). A token of an address the account no
 * longer has is refused like an unknown one.
 */
export async function verifyEmail(ctx: UsersContext, req: VerifyEmailRequest) {
  const gone = () => new ConnectError('this verification link is unknown, used or expired', Code.NotFound);
  const doc = await takeEmailToken(ctx, req.token);
  if (!doc) throw gone();
  const user = await ctx.users.get(doc.userId);
  if (!user || user.email !== doc.email) throw gone();
  if (doc.newEmail !== undefined) {
    const moved = await moveToNewAddress(ctx, user, doc.newEmail);
    if (!moved) throw gone();
    return create(VerifyEmailResponseSchema, { user: toUser(moved), previousEmail: user.email });
  }
  const verified: UserRecord = { ...user, emailVerified: true, version: (user.version ?? 1) + 1, updatedAt: ctx.now() };
  await ctx.users.put(verified);
  return create(VerifyEmailResponseSchema, { user: toUser(verified) });
}

/** The account an address belongs to, when both sides verified it; otherwise a new account. */
async function accountForAddress(ctx: UsersContext, req: SignInWithSocialIdentityRequest, email: string) {
  const existing = await accountWithAddress(ctx, email);
  if (existing) {
    if (!existing.emailVerified || !req.emailVerified) {
      throw new ConnectError(
        'An account with this e-mail address exists. Sign in with your password and verify your address first.',
        Code.FailedPrecondition,
      );
    }
    return { user: existing, created: false };
  }
  const now = ctx.now();
  const user = await insertUser(ctx, {
    _id: newUserId(),
    email,
    emailVerified: req.emailVerified,
    name: displayName(req.name, email),
    createdAt: now,
    version: 1,
    updatedAt: now,
  });
  return { user, created: true };
}

/**
 * The account of a social identity, created on first use. An existing account is linked by
 * e-mail only when both sides have verified the address, so an unverified claim at either end
 * can never take over an account.
 */
export async function signInWithSocialIdentity(ctx: UsersContext, req: SignInWithSocialIdentityRequest) {
  const issuer = requireText('issuer', req.issuer, 500, { required: true });
  const subject = requireText('subject', req.subject, 500, { required: true });
  const identityId = `${issuer}|${subject}`;
  const linked = await ctx.social.get(identityId);
  const known = linked ? await ctx.users.get(linked.userId) : undefined;
  if (known) return create(SignInWithSocialIdentityResponseSchema, { user: toUser(known), created: false });
  const email = normalizeEmail(req.email);
  if (!email || !isEmail(email)) invalid('email', 'The identity provider did not share an e-mail address.');
  const { user, created } = await accountForAddress(ctx, req, email);
  await ctx.social.put({ _id: identityId, userId: user._id });
  return create(SignInWithSocialIdentityResponseSchema, { user: toUser(user), created });
}
