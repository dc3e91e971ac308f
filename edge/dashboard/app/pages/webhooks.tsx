// Webhooks: the organization's endpoints with their state; admins and owners create one (its
// signing secret shown once). Each opens on its own page (webhook.tsx) with its delivery log.
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { SecretOnce } from '../secret-once.tsx';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

export interface WebhookEndpoint {
  id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: 'failing' | null;
  secret_prefix: string;
  previous_secret_expires_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  failing_since: string | null;
  consecutive_failures: number;
  last_success_at: string | null;
}

export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

interface EventType {
  type: string;
  description: string;
}

export function stateOf(e: WebhookEndpoint): string {
  if (e.enabled) return e.failing_since ? `enabled, failing since ${when(e.failing_since)}` : 'enabled';
  return e.disabled_reason === 'failing' ? 'disabled after failing' : 'disabled';
}

/** The event types to send, as checkboxes: every type ("*"), or those picked from the catalogue. */
export function EventTypesField({ base, value, onChange }: { base: string; value: string[]; onChange: (v: string[]) => void }) {
  const catalogue = usePaged<EventType>(`${base}/webhook-event-types?page_size=100`, 'event_types');
  const toggle = (type: string, on: boolean) => onChange(on ? [...value.filter((t) => t !== type), type] : value.filter((t) => t !== type));
  return (
    <fieldset class="event-types">
      <legend>Event types</legend>
      <ProblemAlert problem={catalogue.problem} />
      <label>
        <input type="checkbox" checked={value.includes('*')} onChange={(e) => toggle('*', e.currentTarget.checked)} /> Every event type
      </label>
      {catalogue.items.map((t) => (
        <label key={t.type} title={t.description}>
          <input
            type="checkbox"
            checked={value.includes(t.type)}
            disabled={value.includes('*')}
            onChange={(e) => toggle(t.type, e.currentTarget.checked)}
          />{' '}
          <code>{t.type}</code>
        </label>
      ))}
    </fieldset>
  );
}

function CreateEndpoint({ base, after }: { base: string; after: () => void }) {
  const { api } = useSession();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const [shown, setShown] = useState<EndpointWithSecret>();
  const action = useAction(after);
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { url, event_types: types, ...(description ? { description } : {}) };
      const { data } = await api.call<EndpointWithSecret>('POST', `${base}/webhook-endpoints`, {
        body,
        idempotencyKey: crypto.randomUUID(),
      });
      setShown(data);
      setUrl('');
      setDescription('');
      setTypes([]);
      return `Endpoint ${data.endpoint.url} created.`;
    });
  };
  return (
    <>
      <details>
        <summary>Add an endpoint</summary>
        <form onSubmit={create} class="stacked-form">
          <label>
            Endpoint URL
            <input type="url" required maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
          <label>
            Description
            <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
          <EventTypesField base={base} value={types} onChange={setTypes} />
          <button type="submit" disabled={action.busy}>
            Create endpoint
          </button>
        </form>
      </details>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
      {shown && <SecretOnce name={shown.endpoint.url} secret={shown.secret} onDone={() => setShown(undefined)} />}
    </>
  );
}

export function WebhooksPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}`;
  const endpoints = usePaged<WebhookEndpoint>(`${base}/webhook-endpoints`, 'endpoints');
  return (
    <Page title="Webhooks">
      <p>Signed HTTP requests (Standard Webhooks) to your endpoints when something changes in the organization.</p>
      {can(organization.role, 'createWebhookEndpoint') && <CreateEndpoint base={base} after={endpoints.reload} />}
      <ProblemAlert problem={endpoints.problem} />
      <table>
        <caption>Webhook endpoints of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Event types</th>
            <th scope="col">State</th>
            <th scope="col">Last success</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.items.map((e) => (
            <tr key={e.id}>
              <td>
                <a href={`${settings.basePath}/webhooks/${e.id}`}>{e.url}</a>
                {e.description && <span class="meta"> {e.description}</span>}
              </td>
              <td>{e.event_types.join(', ')}</td>
              <td>{stateOf(e)}</td>
              <td>{when(e.last_success_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!endpoints.loading && endpoints.items.length === 0 && !endpoints.problem && <p>No endpoints yet.</p>}
      <MoreButton paged={endpoints} label="More endpoints" />
    </Page>
  );
}
