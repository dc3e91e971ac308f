// Who has an e-mail address: the emails index (`auth_user_emails`, one entry per address, written
// insert-if-absent so that of two accounts claiming one address exactly one gets it) read together
// with the account it names. An account's address is written in two steps (the entry, then the
// account), so an entry can outlive a write that died between them: its account is gone, or moved
// to another address. Such an entry does not stand: it names no account for sign-in or linking,
// and the next claim takes it over (compare-and-set). An entry claimed lately stands even before
// its account is written, so a claim in progress is never taken over.
import type { EmailIndexDoc, UserRecord, UsersContext } from './users.ts';

/** Longer than any claim takes between its two writes. */
const CLAIM_SETTLES_MS = 10 * 60_000;

/** The account whose address `email` is now, if any. */
export async function accountWithAddress(ctx: UsersContext, email: string): Promise<UserRecord | undefined> {
  const entry = await ctx.emails.get(email);
  const user = entry && (await ctx.users.get(entry.userId));
  return user?.email === email ? user : undefined;
}

async function stands(ctx: UsersContext, email: string, entry: EmailIndexDoc): Promise<boolean> {
  if (entry.claimedAt !== undefined && ctx.now() - entry.claimedAt < CLAIM_SETTLES_MS) return true;
  return (await ctx.users.get(entry.userId))?.email === email;
}

/** The account that holds `email` (with it, or claiming it now), if any. */
export async function holderOf(ctx: UsersContext, email: string): Promise<string | undefined> {
  const entry = await ctx.emails.get(email);
  return entry && (await stands(ctx, email, entry)) ? entry.userId : undefined;
}

/**
 * Claims `email` for `userId`: true when the account holds it after (already did, or took it:
 * free, or left by a write that died midway); false when another account holds it.
 */
export async function claimAddress(ctx: UsersContext, email: string, userId: string): Promise<boolean> {
  for (;;) {
    const entry: EmailIndexDoc = { _id: email, userId, claimedAt: ctx.now() };
    if (await ctx.emails.put(entry, { expect: null })) return true;
    const held = await ctx.emails.get(email);
    if (!held) continue;
    if (held.userId === userId) return true;
    if (await stands(ctx, email, held)) return false;
    if (await ctx.emails.put(entry, { expect: { userId: held.userId, claimedAt: held.claimedAt ?? null } })) return true;
  }
}

/** Removes the entry of `email` if it names `userId`. */
export async function releaseAddress(ctx: UsersContext, email: string, userId: string): Promise<void> {
  if ((await ctx.emails.get(email))?.userId === userId) await ctx.emails.delete(email);
}
