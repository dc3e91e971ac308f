// User accounts of the authorization server: e-mail and password (scrypt), e-mail verification,
// and identities from a social OpenID Connect provider. Accounts are the authorization server's
// own records (collections `auth_users`, `auth_user_emails`, `auth_social_identities`,
// `auth_email_tokens`); organizations and memberships belong to the agents service.
import { createHash, randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

export interface UserRecord extends RecordDoc {
  email: string;
  emailVerified: boolean;
  name: string;
  /** `scrypt$N$r$p$salt$hash`, absent for accounts created through a social identity only. */
  passwordHash?: string;
  createdAt: number;
}

interface EmailIndexDoc extends RecordDoc {
  userId: string;
}

interface EmailTokenDoc extends RecordDoc {
  userId: string;
  email: string;
}

/** The account could not be created or signed in; the message is safe to show on the page. */
export class AccountError extends Error {
  readonly field?: string;
  constructor(message: string, field?: string) {
    super(message);
    this.name = 'AccountError';
    this.field = field;
  }
}

export class ThrottledError extends AccountError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('Too many failed sign-in attempts. Wait a few minutes and try again.');
    this.name = 'ThrottledError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface AccountsOptions {
  records: RecordStore;
  now: () => number;
  signInAttempts: number;
  signInWindowSeconds: number;
}

const SCRYPT = { N: 16_384, r: 8, p: 1 };
const EMAIL =
  /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export const MIN_PASSWORD_LENGTH = 10;
const EMAIL_TOKEN_TTL_MS = 24 * 3600 * 1000;

export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

async function checkPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt') return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return timingSafeEqual(expected, actual);
}

// Compared against when the e-mail is unknown, so that both paths cost one scrypt.
const DUMMY_HASH = hashPassword(randomUUID());

export type Accounts = ReturnType<typeof createAccounts>;

export function createAccounts(options: AccountsOptions) {
  const users = options.records.collection<UserRecord>('auth_users');
  const emails = options.records.collection<EmailIndexDoc>('auth_user_emails');
  const social = options.records.collection<EmailIndexDoc>('auth_social_identities');
  const emailTokens = options.records.collection<EmailTokenDoc>('auth_email_tokens');
  const attempts = options.records.collection('auth_sign_in_attempts');

  async function insertUser(user: UserRecord): Promise<UserRecord> {
    if (!(await emails.put({ _id: user.email, userId: user._id }, { expect: null }))) {
      throw new AccountError('An account with this e-mail address already exists. Sign in instead.', 'email');
    }
    await users.put(user, { expect: null });
    return user;
  }

  return {
    get: (userId: string) => users.get(userId),

    async signUp(input: { email: string; password: string; name: string }): Promise<UserRecord> {
      const email = normalizeEmail(input.email);
      if (!isEmail(email)) throw new AccountError('Enter a valid e-mail address.', 'email');
      if (input.password.length < MIN_PASSWORD_LENGTH) {
        throw new AccountError(`Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`, 'password');
      }
      if (input.password.length > 1_024) throw new AccountError('The password is too long.', 'password');
      const name = input.name.trim().slice(0, 200) || email.split('@')[0];
      return insertUser({
        _id: `usr_${randomBytes(12).toString('hex')}`,
        email,
        emailVerified: false,
        name,
        passwordHash: await hashPassword(input.password),
        createdAt: options.now(),
      });
    },

    /** Checks e-mail and password; failures are counted per address and throttled. */
    async signIn(emailInput: string, password: string): Promise<UserRecord> {
      const email = normalizeEmail(emailInput);
      const key = `email:${createHash('sha256').update(email).digest('hex')}`;
      const windowMs = options.signInWindowSeconds * 1000;
      const current = await attempts.get(key);
      if (current && (current.count as number) >= options.signInAttempts) {
        throw new ThrottledError(Math.max(1, Math.ceil(((current.expiresAt ?? options.now()) - options.now()) / 1000)));
      }
      const index = isEmail(email) ? await emails.get(email) : undefined;
      const user = index ? await users.get(index.userId) : undefined;
      const ok = user?.passwordHash
        ? await checkPassword(password, user.passwordHash)
        : await checkPassword(password, await DUMMY_HASH).then(() => false);
      if (!ok || !user) {
        await attempts.increment(key, 'count', 1, { expiresAt: options.now() + windowMs });
        throw new AccountError('The e-mail address or the password is not correct.');
      }
      return user;
    },

    /** A single-use token for the verification link; only its hash is stored. */
    async createEmailToken(user: UserRecord): Promise<string> {
      const token = randomBytes(32).toString('base64url');
      await emailTokens.put({
        _id: createHash('sha256').update(token).digest('hex'),
        userId: user._id,
        email: user.email,
        expiresAt: options.now() + EMAIL_TOKEN_TTL_MS,
      });
      return token;
    },

    /** Marks the address verified; undefined for an unknown, used or expired token. */
    async verifyEmail(token: string): Promise<UserRecord | undefined> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
      const doc = await emailTokens.take(createHash('sha256').update(token).digest('hex'));
      if (!doc) return undefined;
      const user = await users.get(doc.userId);
      if (!user || user.email !== doc.email) return undefined;
      const verified = { ...user, emailVerified: true };
      await users.put(verified);
      return verified;
    },

    /**
     * The account of a social identity, created on first use. An existing account is linked by
     * e-mail only when both sides have verified the address, so an unverified claim at either
     * end can never take over an account.
     */
    async fromSocialIdentity(input: {
      issuer: string;
      subject: string;
      email?: string;
      emailVerified: boolean;
      name?: string;
    }): Promise<{ user: UserRecord; created: boolean }> {
      const identityId = `${input.issuer}|${input.subject}`;
      const linked = await social.get(identityId);
      if (linked) {
        const user = await users.get(linked.userId);
        if (user) return { user, created: false };
      }
      const email = input.email ? normalizeEmail(input.email) : undefined;
      if (!email || !isEmail(email)) throw new AccountError('The identity provider did not share an e-mail address.');
      const index = await emails.get(email);
      let user: UserRecord;
      let created = false;
      if (index) {
        const existing = await users.get(index.userId);
        if (!existing?.emailVerified || !input.emailVerified) {
          throw new AccountError('An account with this e-mail address exists. Sign in with your password and verify your address first.');
        }
        user = existing;
      } else {
        user = await insertUser({
          _id: `usr_${randomBytes(12).toString('hex')}`,
          email,
          emailVerified: input.emailVerified,
          name: (input.name ?? '').trim().slice(0, 200) || email.split('@')[0],
          createdAt: options.now(),
        });
        created = true;
      }
      await social.put({ _id: identityId, userId: user._id });
      return { user, created };
    },
  };
}
