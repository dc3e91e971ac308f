// One MCP server: its addresses and authorization, the connection test through the gateway (the
// tools an agent would see, the latency of each step, or why it failed in plain words), and for
// admins and owners: enable or disable it, edit it and its tool allow and deny lists, set the
// upstream client secret (write-only: the API only says since when one is set), delete it.
// Every change is sent with the version read (If-Match), so a change made meanwhile is not lost.
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import { authorizationOf } from './mcp-servers.tsx';

export interface McpServer {
  id: string;
  name: string;
  description: string;
  url: string;
  mcp_path: string;
  gateway_url: string;
  scopes: string[];
  authorization_server: string | null;
  oauth: { client_id: string; client_secret_set: boolean; client_secret_set_at: string | null } | null;
  tool_policy: { allow: string[]; deny: string[] };
  enabled: boolean;
  integration: string | null;
  created_at: string | null;
  updated_at: string | null;
}

interface ConnectionTest {
  ok: boolean;
  stage: string | null;
  status: number | null;
  error: string | null;
  server_info: { name: string; version: string } | null;
  tools: { name: string; description: string | null }[];
  latency_ms: { initialize: number | null; tools_list: number | null };
}

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((l) => l.trim())
    .filter(Boolean);

function TestResult({ result }: { result: ConnectionTest }) {
  const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
  return (
    <div class="test-result" data-testid="connection-test">
      {result.ok ? (
        <p>
          <strong>Connected</strong>
          {result.server_info && ` to ${result.server_info.name} ${result.server_info.version}`}: {result.tools.length} tool
          {result.tools.length === 1 ? '' : 's'} found.
        </p>
      ) : (
        <p>
          <strong>The test failed</strong> at <code>{result.stage}</code>
          {result.status ? ` (HTTP ${result.status})` : ''}: {result.error}
        </p>
      )}
      <p>
        Latency: initialize {ms(result.latency_ms.initialize)}, tools/list {ms(result.latency_ms.tools_list)}
      </p>
      {result.tools.length > 0 && (
        <ul>
          {result.tools.map((t) => (
            <li key={t.name}>
              <code>{t.name}</code>
              {t.description ? `: ${t.description}` : ''}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ConnectionTestPanel({ path }: { path: string }) {
  const { api } = useSession();
  const [token, setToken] = useState('');
  const [result, setResult] = useState<ConnectionTest>();
  const action = useAction(() => undefined);
  const run = (e: Event) => {
    e.preventDefault();
    setResult(undefined);
    void action.run(async () => {
      const { data } = await api.call<ConnectionTest>('POST', `${path}/test`, { body: token ? { access_token: token } : {} });
      setResult(data);
      return data.ok ? 'The connection test passed.' : 'The connection test failed.';
    });
  };
  return (
    <section aria-labelledby="test-title">
      <h2 id="test-title">Connection test</h2>
      <form onSubmit={run} class="inline-form">
        <label>
          Access token for the server (optional, not stored)
          <input type="password" autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Testing…' : 'Run the connection test'}
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
      {result && <TestResult result={result} />}
    </section>
  );
}

function EditForm({ server, save }: { server: McpServer; save: (patch: Record<string, unknown>, done: string) => void }) {
  const [description, setDescription] = useState(server.description);
  const [url, setUrl] = useState(server.url);
  const [allow, setAllow] = useState(server.tool_policy.allow.join('\n'));
  const [deny, setDeny] = useState(server.tool_policy.deny.join('\n'));
  const [secret, setSecret] = useState('');
  useEffect(() => {
    setDescription(server.description);
    setUrl(server.url);
    setAllow(server.tool_policy.allow.join('\n'));
    setDeny(server.tool_policy.deny.join('\n'));
  }, [server]);
  const submit = (e: Event) => {
    e.preventDefault();
    save({ description: description || null, url, tool_policy: { allow: lines(allow), deny: lines(deny) } }, `${server.name} saved.`);
  };
  const setClientSecret = (e: Event) => {
    e.preventDefault();
    save({ oauth: { client_secret: secret } }, `The client secret of ${server.name} is set.`);
    setSecret('');
  };
  return (
    <>
      <h2>Settings</h2>
      <form onSubmit={submit} class="stacked-form">
        <label>
          Description
          <input maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label>
          Backend URL
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Allowed tools (one a line, * at the end for a prefix; empty: all)
          <textarea rows={3} value={allow} onInput={(e) => setAllow(e.currentTarget.value)} />
        </label>
        <label>
          Denied tools (one a line)
          <textarea rows={3} value={deny} onInput={(e) => setDeny(e.currentTarget.value)} />
        </label>
        <button type="submit">Save settings</button>
      </form>
      {server.oauth && (
        <form onSubmit={setClientSecret} class="inline-form">
          <label>
            New upstream client secret
            <input type="password" autoComplete="off" required value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
          </label>
          <button type="submit">Set the client secret</button>
        </form>
      )}
    </>
  );
}

function Facts({ server }: { server: McpServer }) {
  const secret = server.oauth?.client_secret_set ? `set on ${when(server.oauth.client_secret_set_at)}` : 'not set';
  return (
    <dl class="facts">
      <dt>Address for agents</dt>
      <dd>
        <code>{server.gateway_url}</code>
      </dd>
      <dt>Backend</dt>
      <dd>
        <code>{server.url}</code> (MCP path <code>{server.mcp_path}</code>)
      </dd>
      <dt>State</dt>
      <dd>{server.enabled ? 'enabled' : 'disabled: the gateway answers 503'}</dd>
      <dt>Authorization</dt>
      <dd>{authorizationOf(server)}</dd>
      {server.oauth && (
        <>
          <dt>Upstream client</dt>
          <dd>
            <code>{server.oauth.client_id}</code>, client secret {secret}
          </dd>
        </>
      )}
      <dt>Tools allowed</dt>
      <dd>{server.tool_policy.allow.join(', ') || 'all'}</dd>
      <dt>Tools denied</dt>
      <dd>{server.tool_policy.deny.join(', ') || 'none'}</dd>
      <dt>Integration</dt>
      <dd>{server.integration ?? 'added by hand'}</dd>
      <dt>Updated</dt>
      <dd>{when(server.updated_at)}</dd>
    </dl>
  );
}

export function McpServerPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = `/organizations/${organization.organization_id}/mcp-servers/${params.id}`;
  const [version, setVersion] = useState(0);
  const { data: server, etag, problem } = useResource<McpServer>(path, version);
  const action = useAction(() => setVersion((v) => v + 1));
  const mayEdit = can(organization.role, 'updateMcpServer');
  const save = (patch: Record<string, unknown>, done: string) =>
    void action.run(async () => {
      await api.call('PATCH', path, { body: patch, ifMatch: etag ?? undefined });
      return done;
    });
  const remove = () => {
    if (!server || !confirmed(`Delete ${server.name}? Agents can no longer reach it through the gateway.`)) return;
    void action.run(async () => {
      await api.call('DELETE', path);
      route(`${settings.basePath}/mcp-servers`);
      return `${server.name} deleted.`;
    });
  };
  return (
    <Page title={server ? `MCP server ${server.name}` : 'MCP server'}>
      <p>
        <a href={`${settings.basePath}/mcp-servers`}>All MCP servers</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {server && (
        <>
          {server.description && <p>{server.description}</p>}
          <Facts server={server} />
          {mayEdit && (
            <p>
              <button
                type="button"
                onClick={() => save({ enabled: !server.enabled }, `${server.name} ${server.enabled ? 'disabled' : 'enabled'}.`)}
              >
                {server.enabled ? 'Disable' : 'Enable'} {server.name}
              </button>{' '}
              <button type="button" class="danger" onClick={remove}>
                Delete {server.name}
              </button>
            </p>
          )}
          {can(organization.role, 'testMcpServer') && <ConnectionTestPanel path={path} />}
          {mayEdit && <EditForm server={server} save={save} />}
        </>
      )}
    </Page>
  );
}
