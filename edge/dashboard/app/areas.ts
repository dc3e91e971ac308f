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
const PlaybooksPage = lazy(() => import('./pages/playbooks.tsx').then((m) => m.PlaybooksPage));
const PlaybookPage = lazy(() => import('./pages/playbook.tsx').then((m) => m.PlaybookPage));
const JobsPage = lazy(() => import('./pages/jobs.tsx').then((m) => m.JobsPage));
const JobPage = lazy(() => import('./pages/job.tsx').then((m) => m.JobPage));
const AlertsPage = lazy(() => import('./pages/alerts.tsx').then((m) => m.AlertsPage));
const AlertEventPage = lazy(() => import('./pages/alert-event.tsx').then((m) => m.AlertEventPage));
const AlertSourcesPage = lazy(() => import('./pages/alert-sources.tsx').then((m) => m.AlertSourcesPage));
const AlertRulesPage = lazy(() => import('./pages/alert-rules.tsx').then((m) => m.AlertRulesPage));
const EvaluationDatasetsPage = lazy(() => import('./pages/evaluation-datasets.tsx').then((m) => m.EvaluationDatasetsPage));
const EvaluationDatasetPage = lazy(() => import('./pages/evaluation-dataset.tsx').then((m) => m.EvaluationDatasetPage));
const EvaluationsPage = lazy(() => import('./pages/evaluations.tsx').then((m) => m.EvaluationsPage));
const EvaluationPage = lazy(() => import('./pages/evaluation.tsx').then((m) => m.EvaluationPage));
const RunsPage = lazy(() => import('./pages/runs.tsx').then((m) => m.RunsPage));
const RunPage = lazy(() => import('./pages/run.tsx').then((m) => m.RunPage));
const SeedingPage = lazy(() => import('./pages/seeding.tsx').then((m) => m.SeedingPage));
const SeedingRunPage = lazy(() => import('./pages/seeding-run.tsx').then((m) => m.SeedingRunPage));
const GatewayKeysPage = lazy(() => import('./pages/gateway-keys.tsx').then((m) => m.GatewayKeysPage));
const OrganizationPage = lazy(() => import('./pages/organization.tsx').then((m) => m.OrganizationPage));

export interface Area {
  /** Under the dashboard's base path ('' is its home). */
  path: string;
  label: string;
  page: FunctionComponent;
  /** Shown in the navigation only to roles allowed this operation. */
  needs?: keyof typeof NEEDS;
  /** Shown only in the operator's organization (OPERATOR_ORGANIZATION_ID). */
  operatorOnly?: boolean;
  /** One item of the area, at `{path}/:id` (not in the navigation). */
  detail?: FunctionComponent;
  /** The heading it is listed under in the navigation. */
  group: string;
}

export const AREAS: Area[] = [
  { group: 'Home', path: '', label: 'Overview', page: OverviewPage },
  { group: 'The Brain', path: '/memories', label: 'Memories', page: MemoriesPage },
  { group: 'The Brain', path: '/contradictions', label: 'Contradictions and questions', page: ContradictionsPage },
  { group: 'The Brain', path: '/entities', label: 'Entities', page: EntitiesPage, detail: EntityPage },
  { group: 'The Brain', path: '/seeding', label: 'Seeding runs', page: SeedingPage, detail: SeedingRunPage },
  { group: 'Agents', path: '/investigations', label: 'Investigations', page: InvestigationsPage, detail: InvestigationPage },
  { group: 'Agents', path: '/runs', label: 'Runs', page: RunsPage, detail: RunPage },
  { group: 'Agents', path: '/playbooks', label: 'Playbooks', page: PlaybooksPage, detail: PlaybookPage },
  { group: 'Agents', path: '/jobs', label: 'Scheduled jobs', page: JobsPage, detail: JobPage },
  { group: 'Agents', path: '/alerts', label: 'Alerts', page: AlertsPage, detail: AlertEventPage },
  { group: 'Agents', path: '/alert-sources', label: 'Alert sources', page: AlertSourcesPage },
  { group: 'Agents', path: '/alert-rules', label: 'Alert rules', page: AlertRulesPage },
  { group: 'Agents', path: '/mcp-servers', label: 'MCP servers', page: McpServersPage, detail: McpServerPage },
  {
    group: 'Evaluation',
    path: '/evaluation-datasets',
    label: 'Evaluation datasets',
    page: EvaluationDatasetsPage,
    detail: EvaluationDatasetPage,
  },
  { group: 'Evaluation', path: '/evaluations', label: 'Evaluations', page: EvaluationsPage, detail: EvaluationPage },
  { group: 'Organization', path: '/organization', label: 'Organization settings', page: OrganizationPage },
  { group: 'Organization', path: '/members', label: 'Members', page: MembersPage },
  { group: 'Organization', path: '/invitations', label: 'Invitations', page: InvitationsPage, needs: 'listInvitations' },
  { group: 'Organization', path: '/teams', label: 'Teams', page: TeamsPage, detail: TeamPage },
  { group: 'Organization', path: '/webhooks', label: 'Webhooks', page: WebhooksPage, detail: WebhookPage, needs: 'listWebhookEndpoints' },
  { group: 'Organization', path: '/billing', label: 'Billing', page: BillingPage },
  { group: 'Organization', path: '/audit', label: 'Audit log', page: AuditPage, needs: 'listAuditEvents' },
  { group: 'Access', path: '/api-keys', label: 'API keys', page: ApiKeysPage },
  { group: 'Access', path: '/connected-apps', label: 'Connected applications', page: ConnectedAppsPage },
  { group: 'Access', path: '/confidential-clients', label: 'Confidential clients', page: ConfidentialClientsPage },
  { group: 'Access', path: '/gateway-keys', label: 'Gateway keys', page: GatewayKeysPage, needs: 'listGatewayKeys', operatorOnly: true },
  { group: 'You', path: '/profile', label: 'Your profile', page: ProfilePage },
];
