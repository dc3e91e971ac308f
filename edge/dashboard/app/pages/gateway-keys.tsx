// Gateway keys: the platform operator's X-Gateway-Key credentials, which only owners and admins of
// the operator's organization (OPERATOR_ORGANIZATION_ID) manage; any other organization is told
// so by the API's 403, shown here. Create one (its secret shown once), rotate one with an overlap
// during which the old secret still works (confirmed; the new secret shown once), revoke one
// (confirmed).
import { useState } from 'preact/hooks';
import { SecretOnce } from '../secret-once.tsx';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

interface GatewayKey {
  id: string;
  name: string;
  prefix: string;
  created_by: string;
  created_at: string | null;
  rotated_at: string | null;
  previous_secret_expires_at: string | null;
}

interface KeyWithSecret {
  gateway_key: GatewayKey;
  secret: string;
}

function Usage({ secret }: { secret: string }) {
  const { settings } = useSession();
  return (
    <p>
      Send it as a header to the gateway: <code>X-Gateway-Key: {secret}</code> (at <code>{settings.gatewayUrl}</code>).
    </p>
  );
}

export function GatewayKeysPage() {
  const { api, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/gateway-keys`;
  const keys = usePaged<GatewayKey>(base, 'gateway_keys');
  const action = useAction(keys.reload);
  const [name, setName] = useState('');
  const [overlap, setOverlap] = useState('3600');
  const [shown, setShown] = useState<KeyWithSecret>();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<KeyWithSecret>('POST', base, { body: { name }, idempotencyKey: crypto.randomUUID() });
      setShown(data);
      setName('');
      return `Gateway key ${data.gateway_key.name} created.`;
    });
  };
  const rotate = (k: GatewayKey) => {
    const seconds = Number(overlap);
    if (!confirmed(`Rotate ${k.name}? Its current secret keeps working for ${seconds} s more, then stops.`)) return;
    void action.run(async () => {
      const { data } = await api.call<KeyWithSecret>('POST', `${base}/${k.id}/rotate`, { body: { overlap_seconds: seconds } });
      setShown(data);
      return `Gateway key ${k.name} rotated; the old secret works until ${when(data.gateway_key.previous_secret_expires_at)}.`;
    });
  };
  const revoke = (k: GatewayKey) => {
    if (!confirmed(`Revoke ${k.name}? Both its secrets stop working on every gateway within seconds.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${base}/${k.id}`);
      return `Gateway key ${k.name} revoked.`;
    });
  };
  const refused = keys.problem?.status === 403;
  return (
    <Page title="Gateway keys">
      <p>
        The operator's keys for the gateway's <code>X-Gateway-Key</code> header. Only owners and admins of the operator's organization
        manage them.
      </p>
      <ProblemAlert problem={keys.problem ?? action.problem} />
      {refused && <p>This organization is not the operator's, so it has no gateway keys.</p>}
      {!refused && (
        <form onSubmit={create} class="inline-form">
          <label>
            Gateway key name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Create gateway key
          </button>
          <label>
            Overlap when rotating (seconds)
            <input type="number" min={0} max={604800} required value={overlap} onInput={(e) => setOverlap(e.currentTarget.value)} />
          </label>
        </form>
      )}
      {shown && (
        <SecretOnce name={shown.gateway_key.name} secret={shown.secret} onDone={() => setShown(undefined)}>
          <Usage secret={shown.secret} />
        </SecretOnce>
      )}
      <p role="status">{action.notice}</p>
      <table>
        <caption>Gateway keys, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Rotated</th>
            <th scope="col">Old secret works until</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.items.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>{when(k.created_at)}</td>
              <td>{when(k.rotated_at)}</td>
              <td>{when(k.previous_secret_expires_at)}</td>
              <td>
                <button type="button" onClick={() => rotate(k)}>
                  Rotate {k.name}
                </button>{' '}
                <button type="button" class="danger" onClick={() => revoke(k)}>
                  Revoke {k.name}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={keys} label="More gateway keys" />
    </Page>
  );
}
