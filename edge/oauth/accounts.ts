// The authorization server's view of user accounts. Accounts belong to the agents service
// (mindgate.agents.v1.UsersService: passwords, verification tokens, social identities, sign-in
// throttling); this module calls it and turns its refusals into messages the pages can show.
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { User, UsersService } from '../../gen/mindgate/agents/v1/users_pb.js';
import { reasonOf, REASONS } from '../../services/common/rpc/reasons.ts';

/** Page-side length rule, as the service enforces it (services/agents/handlers/passwords.ts). */
export const MIN_PASSWORD_LENGTH = 10;

export interface Account {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
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

/** The address already has an account (a sign-up refused). */
export class AccountExistsError extends AccountError {
  constructor(message: string) {
    super(message, 'email');
    this.name = 'AccountExistsError';
  }
}

export class ThrottledError extends AccountError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = 'ThrottledError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const account = (u: User | undefined): Account => ({ id: u!.userId, email: u!.email, name: u!.name, emailVerified: u!.emailVerified });

/** The service's refusals that a person caused, as page errors; anything else is rethrown. */
function asAccountError(err: unknown): never {
  if (!(err instanceof ConnectError)) throw err;
  const reason = reasonOf(err);
  if (reason === REASONS.signInThrottled) {
    throw new ThrottledError(err.rawMessage, Number(err.metadata.get('retry-after') ?? '60') || 60);
  }
  if (reason === REASONS.invalidCredentials) throw new AccountError(err.rawMessage);
  if (err.code === Code.InvalidArgument) {
    const [field, ...rest] = err.rawMessage.split(': ');
    throw new AccountError(rest.join(': ') || err.rawMessage, field);
  }
  if (err.code === Code.AlreadyExists) throw new AccountExistsError(err.rawMessage);
  if (err.code === Code.FailedPrecondition) throw new AccountError(err.rawMessage);
  throw err;
}

export type Accounts = ReturnType<typeof createAccounts>;

export function createAccounts(users: Client<typeof UsersService>) {
  const call = async (work: () => Promise<{ user?: User }>) => account((await work().catch(asAccountError)).user);
  return {
    /** The account, or undefined when it does not exist (any more). */
    async get(userId: string): Promise<Account | undefined> {
      try {
        return account((await users.getUser({ userId })).user);
      } catch (err) {
        if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) return undefined;
        throw err;
      }
    },
    signUp: (input: { email: string; password: string; name: string; emailVerified?: boolean }) =>
      call(() => users.createUser({ ...input, emailVerified: input.emailVerified ?? false })),
    /** Checks e-mail and password; failures are counted per address and throttled (ThrottledError). */
    signIn: (email: string, password: string) => call(() => users.authenticateUser({ email, password })),
    /** A single-use token for the verification link. */
    async createEmailToken(userId: string): Promise<string> {
      return (await users.createEmailVerification({ userId })).token;
    },
    /**
     * Marks the address verified, or, for a link to a new address, moves the account to it
     * (`previousEmail` is the address it had); undefined for an unknown, used or expired token.
     * AccountError when another account has taken the new address meanwhile.
     */
    async verifyEmail(token: string): Promise<{ account: Account; previousEmail?: string } | undefined> {
      try {
        const res = await users.verifyEmail({ token });
        return { account: account(res.user), previousEmail: res.previousEmail || undefined };
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
        return asAccountError(err);
      }
    },
    /** The account of a social identity, created on first use (linked by e-mail only when both sides verified it); `created` when this call created it. */
    async fromSocialIdentity(input: {
      issuer: string;
      subject: string;
      email?: string;
      emailVerified: boolean;
      name?: string;
    }): Promise<Account & { created: boolean }> {
      const res = await users
        .signInWithSocialIdentity({ ...input, email: input.email ?? '', name: input.name ?? '' })
        .catch(asAccountError);
      return { ...account(res.user), created: res.created };
    },
  };
}
