// User accounts (UsersService): e-mail and password, the display name, and the throttling of
// failed sign-ins. The collections keep the names they had when the authorization server wrote
// them itself (`auth_users`, `auth_user_emails`, `auth_sign_in_attempts`), so existing accounts
// need no migration. Verification tokens and social identities are in user-identities.ts
// (the tokens themselves in email-tokens.ts), changing the address in email-change.ts, deleting
// an account in user-deletion.ts.
import { createHash, randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AuthenticateUserResponseSchema,
  CreateUserResponseSchema,
  GetUserResponseSchema,
  UpdateUserResponseSchema,
  UserSchema,
  type AuthenticateUserRequest,
  type CreateUserRequest,
  type GetUserRequest,
  type UpdateUserRequest,
} from '../../../gen/mindgate/agents/v1/users_pb.js';
import type { EventOutbox } from '../../common/events/outbox.ts';
import { failure, REASON_KEY, REASONS } from '../../common/rpc/reasons.ts';
import { invalid } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { accountWithAddress, claimAddress } from './email-index.ts';
import type { MembershipRecord } from './organizations.ts';
import { checkPasswordOrDummy, hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';
import type { TeamMemberRecord } from './teams.ts';

export interface UserRecord extends RecordDoc {
  email: string;
  emailVerified: boolean;
  name: string;
  /** `scrypt$N$r$p$salt$hash`, absent for accounts created through a social identity only. */
  passwordHash?: string;
  createdAt: number;
  /** Bumped by every change; absent on accounts written before it existed (version 1). */
  version?: number;
  updatedAt?: number;
}

/** An address's account (`_id` is the address), so that an address belongs to one account. */
export interface EmailIndexDoc extends RecordDoc {
  userId: string;
  /** When an account claimed the address (email-index.ts); absent on entries written before. */
  claimedAt?: number;
}

export interface UsersContext {
  users: RecordCollection<UserRecord>;
  emails: RecordCollection<EmailIndexDoc>;
  /** `_id` is `issuer|subject`. */
  social: RecordCollection<EmailIndexDoc>;
  emailTokens: RecordCollection<EmailTokenDoc>;
  attempts: RecordCollection;
  /** Whether an organization still exists: a deleted one keeps its memberships until purged. */
  organizations: RecordCollection;
  memberships: RecordCollection<MembershipRecord>;
  teamMembers: RecordCollection<TeamMemberRecord>;
  /** The service's events: a deleted account's memberships end with member.removed. */
  events: EventOutbox;
  signInAttempts: number;
  signInWindowMs: number;
  now: () => number;
}

export interface EmailTokenDoc extends RecordDoc {
  userId: string;
  /** The account's address when the token was issued: the token works only while it still has it. */
  email: string;
  /** For a change of address (email-change.ts): the address the account moves to. */
  newEmail?: string;
}

const EMAIL =
  /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const USER_ID = /^usr_[0-9a-f]{24}$/;

export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

export function requireEmail(value: string): string {
  const email = normalizeEmail(value);
  if (!isEmail(email)) invalid('email', 'Enter a valid e-mail address.');
  return email;
}

function requirePassword(field: string, password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH) invalid(field, `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (password.length > MAX_PASSWORD_LENGTH) invalid(field, 'The password is too long.');
  return password;
}

export function displayName(name: string, email: string): string {
  return name.trim().slice(0, 200) || email.split('@')[0];
}

export const newUserId = () => `usr_${randomBytes(12).toString('hex')}`;

export function toUser(r: UserRecord) {
  return create(UserSchema, {
    userId: r._id,
    email: r.email,
    emailVerified: r.emailVerified,
    name: r.name,
    hasPassword: r.passwordHash !== undefined,
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt ?? r.createdAt),
    etag: String(r.version ?? 1),
  });
}

/** The account of `userId`, NOT_FOUND otherwise. */
export async function existingUser(ctx: UsersContext, userId: string): Promise<UserRecord> {
  if (!userId) invalid('user_id', 'is required');
  const user = USER_ID.test(userId) ? await ctx.users.get(userId) : undefined;
  if (!user) throw new ConnectError(`user "${userId}" does not exist`, Code.NotFound);
  return user;
}

/** Inserts the account under its address; ALREADY_EXISTS when the address has one. */
export async function insertUser(ctx: UsersContext, user: UserRecord): Promise<UserRecord> {
  if (!(await claimAddress(ctx, user.email, user._id))) {
    throw new ConnectError('An account with this e-mail address already exists. Sign in instead.', Code.AlreadyExists);
  }
  await ctx.users.put(user, { expect: null });
  return user;
}

export async function createUser(ctx: UsersContext, req: CreateUserRequest) {
  const email = requireEmail(req.email);
  const password = requirePassword('password', req.password);
  const now = ctx.now();
  const user = await insertUser(ctx, {
    _id: newUserId(),
    email,
    emailVerified: req.emailVerified,
    name: displayName(req.name, email),
    passwordHash: await hashPassword(password),
    createdAt: now,
    version: 1,
    updatedAt: now,
  });
  return create(CreateUserResponseSchema, { user: toUser(user) });
}

export async function getUser(ctx: UsersContext, req: GetUserRequest) {
  return create(GetUserResponseSchema, { user: toUser(await existingUser(ctx, req.userId)) });
}

const attemptsKey = (email: string) => `email:${createHash('sha256').update(email).digest('hex')}`;

/** The address's failed-attempt counter, cleared with the account (user-deletion.ts). */
export function signInCounterId(email: string): string {
  return attemptsKey(email);
}

/**
 * Checks a password for an address, counting failures per address: past the allowance the
 * answer is RESOURCE_EXHAUSTED (with retry-after), even for the right password.
 */
async function checkThrottled(ctx: UsersContext, email: string, password: string, user: UserRecord | undefined): Promise<boolean> {
  const key = attemptsKey(email);
  const current = await ctx.attempts.get(key);
  if (current && (current.count as number) >= ctx.signInAttempts) {
    const retryAfter = Math.max(1, Math.ceil(((current.expiresAt ?? ctx.now()) - ctx.now()) / 1000));
    throw new ConnectError('Too many failed sign-in attempts. Wait a few minutes and try again.', Code.ResourceExhausted, {
      [REASON_KEY]: REASONS.signInThrottled,
      'retry-after': String(retryAfter),
    });
  }
  const ok = await checkPasswordOrDummy(password, user?.passwordHash);
  if (!ok) await ctx.attempts.increment(key, 'count', 1, { expiresAt: ctx.now() + ctx.signInWindowMs });
  return ok;
}

export async function authenticateUser(ctx: UsersContext, req: AuthenticateUserRequest) {
  const email = normalizeEmail(req.email);
  const user = isEmail(email) ? await accountWithAddress(ctx, email) : undefined;
  if (!(await checkThrottled(ctx, email, req.password.slice(0, MAX_PASSWORD_LENGTH), user)) || !user) {
    throw failure('The e-mail address or the password is not correct.', Code.Unauthenticated, REASONS.invalidCredentials);
  }
  return create(AuthenticateUserResponseSchema, { user: toUser(user) });
}

/**
 * INVALID_ARGUMENT "current_password: ..." unless `password` is the account's; a wrong guess
 * counts as a failed sign-in of the account's address, and is throttled the same way.
 */
export async function requireCurrentPassword(ctx: UsersContext, user: UserRecord, password: string): Promise<void> {
  if (!(await checkThrottled(ctx, user.email, password.slice(0, MAX_PASSWORD_LENGTH), user))) {
    invalid('current_password', 'is not your current password');
  }
}

/** The new password hash, once the current password (when the account has one) is checked. */
async function newPasswordHash(ctx: UsersContext, user: UserRecord, req: UpdateUserRequest): Promise<string | undefined> {
  if (req.newPassword === undefined) return undefined;
  const password = requirePassword('new_password', req.newPassword);
  if (user.passwordHash) await requireCurrentPassword(ctx, user, req.currentPassword);
  return hashPassword(password);
}

export async function updateUser(ctx: UsersContext, req: UpdateUserRequest) {
  const current = await existingUser(ctx, req.userId);
  const version = current.version ?? 1;
  if (req.etag !== '' && req.etag !== String(version)) {
    throw failure('the account changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  if (req.name !== undefined && (req.name.trim() === '' || req.name.length > 200)) invalid('name', 'must be 1-200 characters');
  const passwordHash = (await newPasswordHash(ctx, current, req)) ?? current.passwordHash;
  const next: UserRecord = {
    ...current,
    name: req.name === undefined ? current.name : req.name.trim(),
    passwordHash,
    version: version + 1,
    updatedAt: ctx.now(),
  };
  if (!(await ctx.users.put(next, { expect: { version: current.version ?? null } }))) {
    throw failure('the account changed since it was read: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return create(UpdateUserResponseSchema, { user: toUser(next) });
}
