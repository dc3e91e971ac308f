// Alerts: the alert events monitoring systems sent (one per occurrence of an alert, from firing to
// resolved), newest first, by status; each opens on its own page (alert-event.tsx) with its
// labels, the investigation it opened, and what members do about it. Sources and rules have
// their own screens (alert-sources.tsx, alert-rules.tsx).
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, usePaged, when } from '../ui.tsx';

export interface AlertEvent {
  id: string;
  source_id: string;
  status: 'firing' | 'acknowledged' | 'snoozed' | 'resolved';
  title: string;
  severity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  fingerprint: string;
  group_key: string;
  generator_url: string;
  count: number;
  thread_id: string | null;
  run_id: string | null;
  rule_id: string | null;
  acknowledged_by: string | null;
  resolved_by: string | null;
  note: string;
  starts_at: string | null;
  last_seen_at: string | null;
  ends_at: string | null;
  acknowledged_at: string | null;
  snoozed_until: string | null;
  created_at: string | null;
}

const STATUSES = ['firing', 'acknowledged', 'snoozed', 'resolved'] as const;

/** The filters as the list's query: status, severity and source, each when set. */
function filterQuery(f: { status: string; severity: string; source: string }): string {
  const q = new URLSearchParams({ page_size: '25' });
  if (f.status) q.set('status', f.status);
  if (f.severity) q.set('severity', f.severity);
  if (f.source) q.set('source_id', f.source);
  return q.toString();
}

export function AlertsPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}`;
  const [filter, setFilter] = useState({ status: '', severity: '', source: '' });
  const [severity, setSeverity] = useState('');
  const sources = usePaged<{ id: string; name: string }>(`${base}/alert-sources?page_size=100`, 'sources');
  const events = usePaged<AlertEvent>(`${base}/alert-events?${filterQuery(filter)}`, 'alert_events');
  return (
    <Page title="Alerts">
      <p>
        Alerts arrive at an <a href={`${settings.basePath}/alert-sources`}>alert source</a>;{' '}
        <a href={`${settings.basePath}/alert-rules`}>alert rules</a> decide which open an investigation.
      </p>
      <form
        class="inline-form"
        aria-label="Filter the alerts"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ ...filter, severity: severity.trim() });
        }}
      >
        <label>
          Status
          <select value={filter.status} onChange={(e) => setFilter({ ...filter, status: e.currentTarget.value })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <select value={filter.source} onChange={(e) => setFilter({ ...filter, source: e.currentTarget.value })}>
            <option value="">any</option>
            {sources.items.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <input maxLength={50} value={severity} onInput={(e) => setSeverity(e.currentTarget.value)} placeholder="any" />
        </label>
        <button type="submit">Filter</button>
        <button type="button" onClick={events.reload}>
          Refresh the alerts
        </button>
      </form>
      <ProblemAlert problem={events.problem} />
      <table>
        <caption>Alert events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Alert</th>
            <th scope="col">Source</th>
            <th scope="col">Severity</th>
            <th scope="col">Status</th>
            <th scope="col">Times</th>
            <th scope="col">Last seen</th>
            <th scope="col">Investigation</th>
          </tr>
        </thead>
        <tbody>
          {events.items.map((a) => (
            <tr key={a.id}>
              <td>
                <a href={`${settings.basePath}/alerts/${a.id}`}>{a.title}</a>
              </td>
              <td>{sources.items.find((s) => s.id === a.source_id)?.name ?? a.source_id}</td>
              <td>{a.severity || '—'}</td>
              <td>{a.status}</td>
              <td>{a.count}</td>
              <td>{when(a.last_seen_at)}</td>
              <td>{a.thread_id ? <a href={`${settings.basePath}/investigations/${a.thread_id}`}>Investigation of {a.title}</a> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!events.loading && events.items.length === 0 && !events.problem && (
        <p>No alerts{filter.status || filter.severity || filter.source ? ' that fit the filter' : ''}.</p>
      )}
      <MoreButton paged={events} label="Older alerts" />
    </Page>
  );
}
