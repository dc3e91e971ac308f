// One webhook endpoint: its state and failure streak; enable or disable it, change its URL and
// event types (sent with If-Match), rotate its secret (the new one shown once), send it a test
// event, delete it, send its failed deliveries of a time range again (webhook-redeliver.tsx); and
// its delivery log, newest first, each delivery with its attempts (status, latency, error, the
// start of the answer) and a redelivery.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { SecretOnce } from '../secret-once.tsx';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { RedeliverRange } from './webhook-redeliver.tsx';
import { type EndpointWithSecret, EventTypesField, stateOf, type WebhookEndpoint } from './webhooks.tsx';

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string | null;
}

interface Attempt {
  number: number;
  started_at: string | null;
  response_status: number | null;
  response_body: string;
  latency_ms: number;
  error: string | null;
}

function Attempts({ path }: { path: string }) {
  const detail = useResource<{ payload: string; attempts: Attempt[] }>(path);
  if (detail.problem) return <ProblemAlert problem={detail.problem} />;
  if (!detail.data) return <p>Loading the attempts…</p>;
  return (
    <div class="panel">
      <p>
        Body sent: <code>{detail.data.payload}</code>
      </p>
      <table>
        <caption>Attempts</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">When</th>
            <th scope="col">Answer</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {detail.data.attempts.map((a) => (
            <tr key={a.number}>
              <td>{a.number}</td>
              <td>{when(a.started_at)}</td>
              <td>
                {a.response_status ? `HTTP ${a.response_status}` : 'no answer'}
                {a.error && `: ${a.error}`}
                {a.response_body && <code class="meta"> {a.response_body.slice(0, 200)}</code>}
              </td>
              <td>{a.latency_ms} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeliveryLog({ base, endpointId }: { base: string; endpointId: string }) {
  const { api, organization } = useSession();
  const [status, setStatus] = useState('');
  const [open, setOpen] = useState<string>();
  const query = new URLSearchParams({ endpoint_id: endpointId, page_size: '25', ...(status ? { status } : {}) });
  const deliveries = usePaged<Delivery>(`${base}/webhook-deliveries?${query}`, 'deliveries');
  const action = useAction(deliveries.reload);
  const mayRedeliver = can(organization.role, 'redeliverWebhookDelivery');
  const redeliver = (d: Delivery) =>
    void action.run(async () => {
      await api.call('POST', `${base}/webhook-deliveries/${d.id}/redeliver`);
      return `Delivery of ${d.event_type} queued again.`;
    });
  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <div class="inline-form">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="pending">pending</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <button type="button" onClick={deliveries.reload}>
          Refresh the log
        </button>
      </div>
      <ProblemAlert problem={deliveries.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.items.map((d) => (
            <Fragment key={d.id}>
              <tr>
                <td>
                  <code>{d.event_type}</code>
                </td>
                <td>{d.status}</td>
                <td>{d.attempts}</td>
                <td>
                  {d.last_status_code ? `HTTP ${d.last_status_code}` : '—'}
                  {d.last_error && `: ${d.last_error}`}
                </td>
                <td>{when(d.created_at)}</td>
                <td>
                  <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
                    Attempts of {d.event_type}
                  </button>{' '}
                  {mayRedeliver && (
                    <button type="button" onClick={() => redeliver(d)}>
                      Redeliver {d.event_type}
                    </button>
                  )}
                </td>
              </tr>
              {open === d.id && (
                <tr>
                  <td colSpan={6}>
                    <Attempts path={`${base}/webhook-deliveries/${d.id}`} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
      {!deliveries.loading && deliveries.items.length === 0 && !deliveries.problem && <p>No deliveries.</p>}
      <MoreButton paged={deliveries} label="Older deliveries" />
    </section>
  );
}

function EditEndpoint({ base, endpoint, save }: { base: string; endpoint: WebhookEndpoint; save: (patch: object, done: string) => void }) {
  const [url, setUrl] = useState(endpoint.url);
  const [description, setDescription] = useState(endpoint.description);
  const [types, setTypes] = useState(endpoint.event_types);
  useEffect(() => {
    setUrl(endpoint.url);
    setDescription(endpoint.description);
    setTypes(endpoint.event_types);
  }, [endpoint]);
  const submit = (e: Event) => {
    e.preventDefault();
    save({ url, description, event_types: types }, 'Endpoint saved.');
  };
  return (
    <details>
      <summary>Edit the endpoint</summary>
      <form onSubmit={submit} class="stacked-form">
        <label>
          Endpoint URL
          <input type="url" required maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <EventTypesField base={base} value={types} onChange={setTypes} />
        <button type="submit">Save the endpoint</button>
      </form>
    </details>
  );
}

function Facts({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <dl class="facts">
      <dt>State</dt>
      <dd>{stateOf(endpoint)}</dd>
      <dt>Event types</dt>
      <dd>{endpoint.event_types.join(', ')}</dd>
      <dt>Signing secret</dt>
      <dd>
        <code>{endpoint.secret_prefix}…</code>
        {endpoint.previous_secret_expires_at && ` (the previous one signs too until ${when(endpoint.previous_secret_expires_at)})`}
      </dd>
      <dt>Failures in a row</dt>
      <dd>{endpoint.consecutive_failures}</dd>
      <dt>Last success</dt>
      <dd>{when(endpoint.last_success_at)}</dd>
      <dt>Created</dt>
      <dd>{when(endpoint.created_at)}</dd>
    </dl>
  );
}

export function WebhookPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const { route } = useLocation();
  const base = `/organizations/${organization.organization_id}`;
  const path = `${base}/webhook-endpoints/${params.id}`;
  const [version, setVersion] = useState(0);
  const { data: endpoint, etag, problem } = useResource<WebhookEndpoint>(path, version);
  const [shown, setShown] = useState<EndpointWithSecret>();
  const action = useAction(() => setVersion((v) => v + 1));
  const mayEdit = can(organization.role, 'updateWebhookEndpoint');
  const save = (patch: object, done: string) =>
    void action.run(async () => {
      await api.call('PATCH', path, { body: patch, ifMatch: etag ?? undefined });
      return done;
    });
  const rotate = () => {
    if (!confirmed('Rotate the signing secret? The current one keeps signing for the overlap only.')) return;
    void action.run(async () => {
      const { data } = await api.call<EndpointWithSecret>('POST', `${path}/rotate-secret`, { body: {} });
      setShown(data);
      return 'Secret rotated.';
    });
  };
  const test = () =>
    void action.run(async () => {
      await api.call('POST', `${path}/test`);
      return 'A webhook.test event is on its way.';
    });
  const remove = () => {
    if (!confirmed('Delete this endpoint? Its pending deliveries end as failed.')) return;
    void action.run(async () => {
      await api.call('DELETE', path);
      route(`${settings.basePath}/webhooks`);
      return 'Endpoint deleted.';
    });
  };
  return (
    <Page title="Webhook endpoint">
      <p>
        <a href={`${settings.basePath}/webhooks`}>All webhook endpoints</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {shown && <SecretOnce name={shown.endpoint.url} secret={shown.secret} onDone={() => setShown(undefined)} />}
      {endpoint && (
        <>
          <p>
            <code>{endpoint.url}</code> {endpoint.description}
          </p>
          <Facts endpoint={endpoint} />
          {mayEdit && (
            <p>
              <button
                type="button"
                onClick={() => save({ enabled: !endpoint.enabled }, `Endpoint ${endpoint.enabled ? 'disabled' : 'enabled'}.`)}
              >
                {endpoint.enabled ? 'Disable the endpoint' : 'Enable the endpoint'}
              </button>{' '}
              <button type="button" onClick={test}>
                Send a test event
              </button>{' '}
              {can(organization.role, 'rotateWebhookEndpointSecret') && (
                <button type="button" onClick={rotate}>
                  Rotate the secret
                </button>
              )}{' '}
              <button type="button" class="danger" onClick={remove}>
                Delete the endpoint
              </button>
            </p>
          )}
          {mayEdit && <EditEndpoint base={base} endpoint={endpoint} save={save} />}
          {can(organization.role, 'redeliverWebhookEndpoint') && <RedeliverRange path={path} requeued={() => setVersion((v) => v + 1)} />}
          <DeliveryLog key={version} base={base} endpointId={endpoint.id} />
        </>
      )}
    </Page>
  );
}
