// The dashboard's areas: adding one is adding its page under pages/ and a line here.
import type { FunctionComponent } from 'preact';
import { lazy } from 'preact-iso';
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

// Areas added after the first screens load on demand, each its own chunk (edge/dashboard/bundle.ts),
// so that the first load stays small as areas are added.
const McpServersPage = lazy(() => import('./pages/mcp-servers.tsx').then((m) => m.McpServersPage));
const McpServerPage = lazy(() => import('./pages/mcp-server.tsx').then((m) => m.McpServerPage));
const WebhooksPage = lazy(() => import('./pages/webhooks.tsx').then((m) => m.WebhooksPage));
const WebhookPage = lazy(() => import('./pages/webhook.tsx').then((m) => m.WebhookPage));
const BillingPage = lazy(() => import('./pages/billing.tsx').then((m) => m.BillingPage));
const InvestigationsPage = lazy(() => import('./pages/investigations.tsx').then((m) => m.InvestigationsPage));
const EntitiesPage = lazy(() => import('./pages/entities.tsx').then((m) => m.EntitiesPage));
const EntityPage = lazy(() => import('./pages/entity.tsx').then((m) => m.EntityPage));
const TeamPage = lazy(() => import('./pages/team.tsx').then((m) => m.TeamPage));
const InvestigationPage = lazy(() => import('./pages/investigation.tsx').then((m) => m.InvestigationPage));

export interface Area {
  /** Under the dashboard's base path ('' is its home). */
  path: string;
  label: string;
  page: FunctionComponent;
  /** Shown in the navigation only to roles allowed this operation. */
  needs?: keyof typeof NEEDS;
  /** One item of the area, at `{path}/:id` (not in the navigation). */
  detail?: FunctionComponent;
}

export const AREAS: Area[] = [
  { path: '', label: 'Overview', page: OverviewPage },
  { path: '/memories', label: 'Memories', page: MemoriesPage },
  { path: '/contradictions', label: 'Contradictions and questions', page: ContradictionsPage },
  { path: '/entities', label: 'Entities', page: EntitiesPage, detail: EntityPage },
  { path: '/members', label: 'Members', page: MembersPage },
  { path: '/invitations', label: 'Invitations', page: InvitationsPage, needs: 'listInvitations' },
  { path: '/teams', label: 'Teams', page: TeamsPage, detail: TeamPage },
  { path: '/api-keys', label: 'API keys', page: ApiKeysPage },
  { path: '/connected-apps', label: 'Connected applications', page: ConnectedAppsPage },
  { path: '/confidential-clients', label: 'Confidential clients', page: ConfidentialClientsPage },
  { path: '/investigations', label: 'Investigations', page: InvestigationsPage, detail: InvestigationPage },
  { path: '/mcp-servers', label: 'MCP servers', page: McpServersPage, detail: McpServerPage },
  { path: '/webhooks', label: 'Webhooks', page: WebhooksPage, detail: WebhookPage, needs: 'listWebhookEndpoints' },
  { path: '/billing', label: 'Billing', page: BillingPage },
  { path: '/audit', label: 'Audit log', page: AuditPage, needs: 'listAuditEvents' },
  { path: '/profile', label: 'Your profile', page: ProfilePage },
];
