// The dashboard's areas: adding one is adding its page under pages/ and a line here.
import type { FunctionComponent } from 'preact';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { AuditPage } from './pages/audit.tsx';
import { ConfidentialClientsPage } from './pages/confidential-clients.tsx';
import { ConnectedAppsPage } from './pages/connected-apps.tsx';
import { ContradictionsPage } from './pages/contradictions.tsx';
import { InvitationsPage } from './pages/invitations.tsx';
import { MemoriesPage } from './pages/memories.tsx';
import { MembersPage } from './pages/members.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { ProfilePage } from './pages/profile.tsx';
import { TeamsPage } from './pages/teams.tsx';
import type { NEEDS } from './roles.ts';

export interface Area {
  /** Under the dashboard's base path ('' is its home). */
  path: string;
  label: string;
  page: FunctionComponent;
  /** Shown in the navigation only to roles allowed this operation. */
  needs?: keyof typeof NEEDS;
}

export const AREAS: Area[] = [
  { path: '', label: 'Overview', page: OverviewPage },
  { path: '/memories', label: 'Memories', page: MemoriesPage },
  { path: '/contradictions', label: 'Contradictions and questions', page: ContradictionsPage },
  { path: '/members', label: 'Members', page: MembersPage },
  { path: '/invitations', label: 'Invitations', page: InvitationsPage, needs: 'listInvitations' },
  { path: '/teams', label: 'Teams', page: TeamsPage },
  { path: '/api-keys', label: 'API keys', page: ApiKeysPage },
  { path: '/connected-apps', label: 'Connected applications', page: ConnectedAppsPage },
  { path: '/confidential-clients', label: 'Confidential clients', page: ConfidentialClientsPage },
  { path: '/audit', label: 'Audit log', page: AuditPage, needs: 'listAuditEvents' },
  { path: '/profile', label: 'Your profile', page: ProfilePage },
];
