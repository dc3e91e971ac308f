// The signed-in session every screen reads: the API client, the account, and the organization
// the token acts for with the caller's role in it (from /users/me/memberships, `current`).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.ts';
import type { Role } from './roles.ts';
import type { DashboardSettings } from './settings.ts';

export interface Account {
  id: string;
  email: string;
  email_verified: boolean;
  name: string;
  has_password: boolean;
}

export interface Membership {
  organization_id: string;
  organization_name: string;
  organization_slug: string | null;
  role: Role;
  current: boolean;
  /** The operator's organization (OPERATOR_ORGANIZATION_ID). */
  operator: boolean;
  joined_at: string | null;
}

export interface Session {
  settings: DashboardSettings;
  api: Api;
  me: Account;
  meEtag: string | null;
  memberships: Membership[];
  /** The organization the token acts for. */
  organization: Membership;
  /** Reads the account and memberships again (after a profile change, say). */
  reload(): Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in session');
  return session;
}
