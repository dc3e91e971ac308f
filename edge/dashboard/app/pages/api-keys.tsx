// API keys: the organization's keys (prefix only); admins and owners create one (its secret is
// shown once, with a copy button and the MCP clients' configurations that send it), rotate one
// (a new secret, shown once) and revoke one.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { deferred } from '../deferred.tsx';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { SecretOnce } from '../secret-once.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, toProblem, usePaged, when } from '../ui.tsx';

// The snippets (every client's configuration) load on demand: they are below the first screen.
const McpSnippets = deferred(() => import('../mcp-snippets.tsx').then((m) => m.McpSnippets));

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string | null;
  last_used_at: string | null;
}

interface KeyWithSecret {
  api_key: ApiKey;
  secret: string;
}

const SCOPES = ['read', 'write', 'admin'] as const;

export function ApiKeysPage() {
  const { api, organization, settings } = useSession();
  const base = `/organizations/${organization.organization_id}/api-keys`;
  const keys = usePaged<ApiKey>(base, 'api_keys');
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');
  const [name, setName] = useState('');
  const [scope, setScope] = useState<(typeof SCOPES)[number]>('read');
  const [shown, setShown] = useState<KeyWithSecret>();
  const mayAdmin = can(organization.role, 'createApiKey');

  const act = async (what: () => Promise<string>) => {
    setProblem(undefined);
    setNotice('');
    try {
      setNotice(await what());
      keys.reload();
    } catch (err) {
      setProblem(toProblem(err));
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const { data } = await api.call<KeyWithSecret>('POST', base, {
        body: { name, scopes: [scope] },
        idempotencyKey: crypto.randomUUID(),
      });
      setShown(data);
      setName('');
      return `Key ${data.api_key.name} created.`;
    });
  };
  const rotate = (k: ApiKey) => {
    if (!confirmed(`Rotate ${k.name}? Its current secret stops working at once.`)) return;
    void act(async () => {
      const { data } = await api.call<KeyWithSecret>('POST', `${base}/${k.id}/rotate`);
      setShown(data);
      return `Key ${k.name} rotated.`;
    });
  };
  const revoke = (k: ApiKey) => {
    if (!confirmed(`Revoke ${k.name}? Anything using it is refused from now on.`)) return;
    void act(async () => {
      await api.call('DELETE', `${base}/${k.id}`);
      return `Key ${k.name} revoked.`;
    });
  };

  return (
    <Page title="API keys">
      {mayAdmin && (
        <form onSubmit={create} class="inline-form">
          <label>
            Key name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Scope
            <select value={scope} onChange={(e) => setScope(e.currentTarget.value as (typeof SCOPES)[number])}>
              {SCOPES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Create key</button>
        </form>
      )}
      {shown && (
        <SecretOnce name={shown.api_key.name} secret={shown.secret} onDone={() => setShown(undefined)}>
          <h2>Connect an MCP client with this key</h2>
          <McpSnippets url={`${settings.gatewayUrl}/brain/mcp`} apiKey={shown.secret} />
        </SecretOnce>
      )}
      <ProblemAlert problem={keys.problem ?? problem} />
      <p role="status">{notice}</p>
      <table>
        <caption>API keys of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            {mayAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {keys.items.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td>
              <td>{when(k.last_used_at)}</td>
              {mayAdmin && (
                <td>
                  <button type="button" onClick={() => rotate(k)}>
                    Rotate {k.name}
                  </button>{' '}
                  <button type="button" class="danger" onClick={() => revoke(k)}>
                    Revoke {k.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={keys} label="More keys" />
    </Page>
  );
}
