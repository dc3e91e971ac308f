// MCP servers: the organization's servers behind the gateway; admins and owners add one from the
// integrations catalog (filling in what the integration asks for) or by hand. Each opens on its
// own page (mcp-server.tsx) to test, edit, disable or delete it.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged } from '../ui.tsx';
import type { McpServer } from './mcp-server.tsx';

interface IntegrationInput {
  name: string;
  title: string;
  description?: string;
  required?: boolean;
  secret?: boolean;
  default?: string;
}

interface Integration {
  name: string;
  title: string;
  description: string;
  documentation_url: string;
  server: { name: string };
  authorization: string;
  inputs: IntegrationInput[];
}

export function authorizationOf(s: McpServer): string {
  if (s.oauth) return 'upstream OAuth (gateway facade)';
  if (s.authorization_server === 'platform') return 'platform tokens';
  if (s.authorization_server) return `external: ${s.authorization_server}`;
  return 'none';
}

function Install({ base, onCreated }: { base: string; onCreated: (s: McpServer) => void }) {
  const { api } = useSession();
  const catalog = usePaged<Integration>(`${base}/integrations?page_size=100`, 'integrations');
  const [chosen, setChosen] = useState('');
  const [name, setName] = useState('');
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const action = useAction(() => undefined);
  const integration = catalog.items.find((i) => i.name === chosen);
  const install = (e: Event) => {
    e.preventDefault();
    if (!integration) return;
    void action.run(async () => {
      const given = Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== ''));
      const { data } = await api.call<McpServer>('POST', `${base}/integrations/${integration.name}/install`, {
        body: { ...(name ? { name } : {}), inputs: given },
        idempotencyKey: crypto.randomUUID(),
      });
      onCreated(data);
      return `${integration.title} installed as ${data.name}.`;
    });
  };
  return (
    <details>
      <summary>Add from the integrations catalog</summary>
      <ProblemAlert problem={catalog.problem ?? action.problem} />
      <form onSubmit={install}>
        <p>
          <label>
            Integration{' '}
            <select
              value={chosen}
              onChange={(e) => {
                const next = catalog.items.find((i) => i.name === e.currentTarget.value);
                setChosen(e.currentTarget.value);
                setInputs(Object.fromEntries((next?.inputs ?? []).map((i) => [i.name, i.default ?? ''])));
              }}
            >
              <option value="">Choose one</option>
              {catalog.items.map((i) => (
                <option key={i.name} value={i.name}>
                  {i.title}
                </option>
              ))}
            </select>
          </label>
        </p>
        {integration && (
          <>
            <p>{integration.description}</p>
            <p>
              <a href={integration.documentation_url}>Documentation of {integration.title}</a>
            </p>
            <p>
              <label>
                Server name <input value={name} placeholder={integration.server.name} onInput={(e) => setName(e.currentTarget.value)} />
              </label>
            </p>
            {integration.inputs.map((i) => (
              <p key={i.name}>
                <label>
                  {i.title}{' '}
                  <input
                    type={(i.secret ? 'password' : 'text') as 'text'}
                    autoComplete="off"
                    required={i.required}
                    value={inputs[i.name] ?? ''}
                    onInput={(e) => setInputs({ ...inputs, [i.name]: e.currentTarget.value })}
                  />
                </label>
                {i.description && <span class="meta"> {i.description}</span>}
              </p>
            ))}
            <button type="submit" disabled={action.busy}>
              Install {integration.title}
            </button>
          </>
        )}
      </form>
      <p role="status">{action.notice}</p>
    </details>
  );
}

type AuthChoice = 'none' | 'platform' | 'external' | 'upstream';

function oauthBody(f: Record<string, string>): Record<string, string> {
  const keys = ['issuer', 'authorization_endpoint', 'token_endpoint', 'client_id', 'client_secret'];
  return Object.fromEntries(keys.filter((k) => f[k]).map((k) => [k, f[k]]));
}

function AddByHand({ base, onCreated }: { base: string; onCreated: (s: McpServer) => void }) {
  const { api } = useSession();
  const [f, setF] = useState<Record<string, string>>({ mcp_path: 'mcp' });
  const [auth, setAuth] = useState<AuthChoice>('none');
  const action = useAction(() => undefined);
  const field = (key: string, label: string, type: 'text' | 'url' | 'password' = 'text', required = false) => (
    <p>
      <label>
        {label}{' '}
        <input
          type={type as 'text'}
          autoComplete="off"
          required={required}
          value={f[key] ?? ''}
          onInput={(e) => setF({ ...f, [key]: e.currentTarget.value })}
        />
      </label>
    </p>
  );
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = { name: f.name, url: f.url, mcp_path: f.mcp_path || 'mcp' };
      if (f.description) body.description = f.description;
      if (auth === 'platform') body.authorization_server = 'platform';
      if (auth === 'external') body.authorization_server = f.authorization_server;
      if (auth === 'upstream') body.oauth = oauthBody(f);
      const { data } = await api.call<McpServer>('POST', `${base}/mcp-servers`, { body, idempotencyKey: crypto.randomUUID() });
      onCreated(data);
      return `Server ${data.name} added.`;
    });
  };
  return (
    <details>
      <summary>Add a server by hand</summary>
      <ProblemAlert problem={action.problem} />
      <form onSubmit={create}>
        {field('name', 'Name', 'text', true)}
        {field('url', 'Backend URL', 'url', true)}
        {field('mcp_path', 'MCP path')}
        {field('description', 'Description')}
        <p>
          <label>
            Authorization{' '}
            <select value={auth} onChange={(e) => setAuth(e.currentTarget.value as AuthChoice)}>
              <option value="none">none</option>
              <option value="platform">the platform's tokens</option>
              <option value="external">an external authorization server</option>
              <option value="upstream">upstream OAuth through the gateway</option>
            </select>
          </label>
        </p>
        {auth === 'external' && field('authorization_server', 'Authorization server URL', 'url', true)}
        {auth === 'upstream' && (
          <>
            {field('issuer', 'Issuer URL', 'url')}
            {field('authorization_endpoint', 'Authorization endpoint', 'url')}
            {field('token_endpoint', 'Token endpoint', 'url')}
            {field('client_id', 'Client id', 'text', true)}
            {field('client_secret', 'Client secret', 'password')}
          </>
        )}
        <button type="submit" disabled={action.busy}>
          Add server
        </button>
      </form>
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function McpServersPage() {
  const { settings, organization } = useSession();
  const { route } = useLocation();
  const base = `/organizations/${organization.organization_id}`;
  const servers = usePaged<McpServer>(`${base}/mcp-servers`, 'mcp_servers');
  const mayAdd = can(organization.role, 'createMcpServer');
  const opened = (s: McpServer) => route(`${settings.basePath}/mcp-servers/${s.id}`);
  return (
    <Page title="MCP servers">
      {mayAdd && <Install base={base} onCreated={opened} />}
      {mayAdd && <AddByHand base={base} onCreated={opened} />}
      <ProblemAlert problem={servers.problem} />
      <table>
        <caption>MCP servers of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Address for agents</th>
            <th scope="col">Authorization</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {servers.items.map((s) => (
            <tr key={s.id}>
              <td>
                <a href={`${settings.basePath}/mcp-servers/${s.id}`}>{s.name}</a>
                {s.integration && <span class="meta"> ({s.integration})</span>}
              </td>
              <td>
                <code>{s.gateway_url}</code>
              </td>
              <td>{authorizationOf(s)}</td>
              <td>{s.enabled ? 'enabled' : 'disabled'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!servers.loading && servers.items.length === 0 && !servers.problem && <p>No MCP servers yet.</p>}
      <MoreButton paged={servers} label="More servers" />
    </Page>
  );
}
