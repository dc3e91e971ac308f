// The single-use e-mail tokens behind the links the platform mails (verifying an address,
// moving an account to a new one): 32 random bytes, valid 24 hours, only their SHA-256 stored in
// `auth_email_tokens` with the account and the address they were issued for.
import { createHash, randomBytes } from 'node:crypto';
import type { EmailTokenDoc, UsersContext } from './users.ts';

export const EMAIL_TOKEN_TTL_MS = 24 * 3600 * 1000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Stores a new token's hash with `fields`; returns the token (for the link) and its expiry. */
export async function issueEmailToken(
  ctx: UsersContext,
  fields: Pick<EmailTokenDoc, 'userId' | 'email' | 'newEmail'>,
): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = ctx.now() + EMAIL_TOKEN_TTL_MS;
  await ctx.emailTokens.put({ ...fields, _id: hashOf(token), expiresAt });
  return { token, expiresAt };
}

/** Uses the token up: its record, once, for exactly one caller; undefined when unknown, used or expired. */
export async function takeEmailToken(ctx: UsersContext, token: string): Promise<EmailTokenDoc | undefined> {
  if (!TOKEN.test(token)) return undefined;
  return ctx.emailTokens.take(hashOf(token));
}
