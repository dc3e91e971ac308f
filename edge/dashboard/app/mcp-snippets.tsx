// Connecting an MCP client to the Brain: pick the client and how it authenticates, and the
// snippet for it (mcp-configs.ts) is shown with a copy button. The Overview shows it with the
// key left for the reader to fill in; a new API key's secret panel shows it filled in.
import { useState } from 'preact/hooks';
import { CopyButton } from './copy-button.tsx';
import { CLIENT_LABELS, MCP_CLIENTS, type McpAuth, type McpClient, mcpConfig } from './mcp-configs.ts';

export function McpSnippets({ url, apiKey }: { url: string; apiKey?: string }) {
  const [client, setClient] = useState<McpClient>('claude');
  const [auth, setAuth] = useState<McpAuth>(apiKey ? 'api-key' : 'oauth');
  const config = mcpConfig(client, auth, url, apiKey);
  return (
    <div class="snippets">
      <div class="inline-form">
        <label>
          MCP client
          <select value={client} onChange={(e) => setClient(e.currentTarget.value as McpClient)}>
            {MCP_CLIENTS.map((c) => (
              <option key={c} value={c}>
                {CLIENT_LABELS[c]}
              </option>
            ))}
          </select>
        </label>
        <fieldset class="choices">
          <legend>Authentication</legend>
          <label>
            <input type="radio" name="mcp-auth" checked={auth === 'oauth'} onChange={() => setAuth('oauth')} /> Sign in (OAuth)
          </label>
          <label>
            <input type="radio" name="mcp-auth" checked={auth === 'api-key'} onChange={() => setAuth('api-key')} /> API key header
          </label>
        </fieldset>
      </div>
      <p>{config.where}</p>
      <pre data-testid="mcp-snippet" data-kind={config.kind}>
        <code>{config.text}</code>
      </pre>
      <CopyButton text={config.text} label={`Copy the ${CLIENT_LABELS[client]} configuration`} />
    </div>
  );
}
