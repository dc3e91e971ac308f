// Moving an account to a new e-mail address: CreateEmailChange checks the password and issues a
// token for a link mailed to the new address (or, when another account has that address, no
// token: the caller learns nothing, the address gets a notice); VerifyEmail with that token
// (user-identities.ts) calls moveToNewAddress. The emails index (email-index.ts) decides who gets
// an address: of two accounts confirming the same one, exactly one does.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { CreateEmailChangeResponseSchema, type CreateEmailChangeRequest } from '../../../gen/mindgate/agents/v1/users_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid } from '../../common/rpc/validate.ts';
import { claimAddress, holderOf, releaseAddress } from './email-index.ts';
import { EMAIL_TOKEN_TTL_MS, issueEmailToken } from './email-tokens.ts';
import { existingUser, isEmail, normalizeEmail, requireCurrentPassword, toUser, type UserRecord, type UsersContext } from './users.ts';

export async function createEmailChange(ctx: UsersContext, req: CreateEmailChangeRequest) {
  const user = await existingUser(ctx, req.userId);
  if (!user.passwordHash) {
    throw failure(
      'This account signs in through a social identity provider only: set a password first, then change the address.',
      Code.FailedPrecondition,
      REASONS.passwordRequired,
    );
  }
  const newEmail = normalizeEmail(req.newEmail);
  if (!isEmail(newEmail)) invalid('new_email', 'Enter a valid e-mail address.');
  if (newEmail === user.email) invalid('new_email', 'is already your address');
  await requireCurrentPassword(ctx, user, req.currentPassword);
  const answer = { newEmail, user: toUser(user) };
  const holder = await holderOf(ctx, newEmail);
  if (holder && holder !== user._id) {
    return create(CreateEmailChangeResponseSchema, {
      ...answer,
      addressTaken: true,
      expireTime: timestampFromMs(ctx.now() + EMAIL_TOKEN_TTL_MS),
    });
  }
  const { token, expiresAt } = await issueEmailToken(ctx, { userId: user._id, email: user.email, newEmail });
  return create(CreateEmailChangeResponseSchema, { ...answer, token, expireTime: timestampFromMs(expiresAt) });
}

/**
 * Moves `user` (as read with the token, still at the token's address) to `newEmail`, verified,
 * with a new version; frees the old address and deletes the other tokens issued for it. Undefined
 * when the account moved to another address meanwhile (nothing changes); FAILED_PRECONDITION when
 * another account has `newEmail`.
 */
export async function moveToNewAddress(ctx: UsersContext, user: UserRecord, newEmail: string): Promise<UserRecord | undefined> {
  const oldEmail = user.email;
  if (!(await claimAddress(ctx, newEmail, user._id))) {
    throw new ConnectError(
      `Another account has ${newEmail} now, so your address was not changed. Ask for a new link with another address.`,
      Code.FailedPrecondition,
    );
  }
  let current: UserRecord | undefined = user;
  for (;;) {
    if (!current || current.email !== oldEmail) {
      await releaseAddress(ctx, newEmail, user._id);
      return undefined;
    }
    const version = current.version ?? 1;
    const moved: UserRecord = { ...current, email: newEmail, emailVerified: true, version: version + 1, updatedAt: ctx.now() };
    if (await ctx.users.put(moved, { expect: { version: current.version ?? null } })) {
      await releaseAddress(ctx, oldEmail, user._id);
      await ctx.emailTokens.deleteMany({ userId: user._id, email: oldEmail });
      return moved;
    }
    // Changed under us (a new name, a new password): read it again and retry.
    current = await ctx.users.get(user._id);
  }
}
