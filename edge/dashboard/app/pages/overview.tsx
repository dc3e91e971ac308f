// Home: the organization, its plan and usage against the plan, the newest memories and the open
// contradictions and questions (each linking to its screen), and how to connect an MCP client.
import { deferred } from '../deferred.tsx';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { Page, ProblemAlert, useResource, when } from '../ui.tsx';
import { BrainAtAGlance } from './overview-brain.tsx';

// The snippets (every client's configuration) load on demand: they are below the first screen.
const McpSnippets = deferred(() => import('../mcp-snippets.tsx').then((m) => m.McpSnippets));

interface Organization {
  id: string;
  name: string;
  slug: string | null;
  brain_id: string;
  role: string | null;
}

interface Quantity {
  used: number;
  limit: number | null;
}

interface Usage {
  plan: string;
  period: { start: string; end: string };
  memories: Quantity;
  members: Quantity;
  runs: Quantity;
  api_calls: Quantity;
}

interface Subscription {
  plan_name: string;
  status: 'trialing' | 'active' | 'past_due';
  trial_end: string | null;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
}

const DAY_MS = 86_400_000;

/** "Professional, trial: 14 days left", "Starter", "Professional (payment past due)". */
function planLine(s: Subscription): string {
  if (s.status === 'trialing' && s.trial_end) {
    const days = Math.max(0, Math.ceil((Date.parse(s.trial_end) - Date.now()) / DAY_MS));
    return `${s.plan_name}, trial: ${days} day${days === 1 ? '' : 's'} left`;
  }
  const state = s.status === 'past_due' ? ' (payment past due)' : '';
  const ending = s.cancel_at_period_end && s.current_period_end ? `, ends ${when(s.current_period_end)}` : '';
  return `${s.plan_name}${state}${ending}`;
}

interface RecentEvent {
  id: string;
  actor: { kind: string; id: string };
  action: string;
  outcome: string;
  created_at: string | null;
}

/** The last changes, for those who may read the audit log. */
function RecentActivity({ path, audit }: { path: string; audit: string }) {
  const recent = useResource<{ events: RecentEvent[] }>(`${path}/audit-events?page_size=5`);
  return (
    <>
      <h2>Recent activity</h2>
      <ProblemAlert problem={recent.problem} />
      <ul class="activity">
        {recent.data?.events.map((e) => (
          <li key={e.id}>
            {when(e.created_at)}: {e.action} by {e.actor.kind} <code>{e.actor.id}</code> ({e.outcome})
          </li>
        ))}
      </ul>
      <p>
        <a href={audit}>The whole audit log</a>
      </p>
    </>
  );
}

function amount(q: Quantity): string {
  return q.limit === null ? `${q.used} (no limit)` : `${q.used} of ${q.limit}`;
}

export function OverviewPage() {
  const { organization, settings } = useSession();
  const base = `/organizations/${organization.organization_id}`;
  const org = useResource<Organization>(base);
  const usage = useResource<Usage>(`${base}/usage`);
  const subscription = useResource<Subscription>(`${base}/subscription`);
  return (
    <Page title="Overview">
      <ProblemAlert problem={org.problem ?? usage.problem ?? subscription.problem} />
      {org.data && (
        <dl class="facts">
          <dt>Organization</dt>
          <dd>{org.data.name}</dd>
          <dt>Slug</dt>
          <dd>{org.data.slug ?? '—'}</dd>
          <dt>Your role</dt>
          <dd>{org.data.role ?? '—'}</dd>
          <dt>Organization id</dt>
          <dd>
            <code>{org.data.id}</code>
          </dd>
        </dl>
      )}
      {usage.data && (
        <>
          <h2>Plan and usage</h2>
          <dl class="facts">
            <dt>Plan</dt>
            <dd>{subscription.data ? planLine(subscription.data) : usage.data.plan}</dd>
            <dt>Memories</dt>
            <dd>{amount(usage.data.memories)}</dd>
            <dt>Members</dt>
            <dd>{amount(usage.data.members)}</dd>
            <dt>Runs since {when(usage.data.period.start)}</dt>
            <dd>{amount(usage.data.runs)}</dd>
            <dt>API calls since {when(usage.data.period.start)}</dt>
            <dd>{amount(usage.data.api_calls)}</dd>
          </dl>
        </>
      )}
      {/* Asked for once the plan is in: child effects run before their parent's, so these four
          requests would otherwise take the browser's six connections to the API ahead of it. */}
      {(usage.data || usage.problem) && <BrainAtAGlance base={base} />}
      {can(organization.role, 'listAuditEvents') && <RecentActivity path={base} audit={`${settings.basePath}/audit`} />}
      <h2>Connect an MCP client</h2>
      <p>
        The Brain is at <code>{settings.gatewayUrl}/brain/mcp</code> (Streamable HTTP). A client signs in with OAuth, or sends an API key of
        the organization in an <code>X-Api-Key</code> header: a key made under <a href={`${settings.basePath}/api-keys`}>API keys</a> comes
        with these snippets filled in.
      </p>
      <McpSnippets url={`${settings.gatewayUrl}/brain/mcp`} />
    </Page>
  );
}
