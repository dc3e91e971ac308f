// One alert event: what was sent (title, severity, labels, annotations, the link back to the
// monitoring system), how often, the investigation it opened; members acknowledge it, snooze it
// until a time, or resolve it by hand (confirmed), each at the version shown (If-Match).
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import type { AlertEvent } from './alerts.tsx';

function Pairs({ title, pairs }: { title: string; pairs: Record<string, string> }) {
  const entries = Object.entries(pairs);
  return (
    <table>
      <caption>{title}</caption>
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">
              <code>{k}</code>
            </th>
            <td>{v}</td>
          </tr>
        ))}
        {entries.length === 0 && (
          <tr>
            <td>none</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

/** datetime-local's value for a time `hours` from now, in local time. */
function localIn(hours: number): string {
  const d = new Date(Date.now() + hours * 3_600_000);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function Handle({ path, alert, etag, changed }: { path: string; alert: AlertEvent; etag: string | null; changed: () => void }) {
  const { api } = useSession();
  const [until, setUntil] = useState(localIn(4));
  const action = useAction(changed);
  const act = (verb: 'acknowledge' | 'resolve' | 'snooze', done: string, body?: object) =>
    void action.run(async () => {
      await api.call('POST', `${path}/${verb}`, { body, ifMatch: etag ?? undefined });
      return done;
    });
  const resolve = () => {
    if (!confirmed(`Resolve “${alert.title}” by hand? Its investigation is told; a new firing opens a new alert.`)) return;
    act('resolve', 'Alert resolved.');
  };
  return (
    <>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
      {alert.status !== 'resolved' && (
        <div class="inline-form">
          {alert.status === 'firing' && (
            <button type="button" onClick={() => act('acknowledge', 'Alert acknowledged.')} disabled={action.busy}>
              Acknowledge
            </button>
          )}
          <label>
            Snooze until
            <input type="datetime-local" required value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
          </label>
          <button
            type="button"
            onClick={() => act('snooze', 'Alert snoozed.', { until: new Date(until).toISOString() })}
            disabled={action.busy}
          >
            Snooze
          </button>
          <button type="button" class="danger" onClick={resolve} disabled={action.busy}>
            Resolve
          </button>
        </div>
      )}
    </>
  );
}

function Facts({ alert: a }: { alert: AlertEvent }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        {a.status}
        {a.status === 'snoozed' && ` until ${when(a.snoozed_until)}`}
        {a.acknowledged_by && ` (acknowledged by ${a.acknowledged_by}, ${when(a.acknowledged_at)})`}
        {a.resolved_by && ` (resolved by ${a.resolved_by})`}
      </dd>
      <dt>Severity</dt>
      <dd>{a.severity || '—'}</dd>
      <dt>Seen</dt>
      <dd>
        {a.count} time(s), from {when(a.starts_at)} to {when(a.last_seen_at)}
      </dd>
      <dt>Fingerprint</dt>
      <dd>
        <code>{a.fingerprint}</code>
      </dd>
      {a.note && (
        <>
          <dt>Note</dt>
          <dd>{a.note}</dd>
        </>
      )}
    </dl>
  );
}

export function AlertEventPage() {
  const { settings, organization } = useSession();
  const { params } = useRoute();
  const path = `/organizations/${organization.organization_id}/alert-events/${params.id}`;
  const [version, setVersion] = useState(0);
  const { data: alert, etag, problem } = useResource<AlertEvent>(path, version);
  return (
    <Page title={alert ? alert.title : 'Alert'}>
      <p>
        <a href={`${settings.basePath}/alerts`}>All alerts</a>
      </p>
      <ProblemAlert problem={problem} />
      {alert && (
        <>
          <Facts alert={alert} />
          {alert.thread_id && (
            <p>
              <a href={`${settings.basePath}/investigations/${alert.thread_id}`}>Open the investigation</a>
            </p>
          )}
          {/^https?:\/\//.test(alert.generator_url) && (
            <p>
              <a href={alert.generator_url} rel="noreferrer noopener">
                Where it fired
              </a>
            </p>
          )}
          {can(organization.role, 'acknowledgeAlertEvent') && (
            <Handle path={path} alert={alert} etag={etag} changed={() => setVersion((v) => v + 1)} />
          )}
          <Pairs title="Labels" pairs={alert.labels} />
          <Pairs title="Annotations" pairs={alert.annotations} />
        </>
      )}
    </Page>
  );
}
