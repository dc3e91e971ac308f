// How each MCP client is told about the Brain, in the format its own documentation gives: the
// Streamable HTTP URL alone (the client runs the OAuth sign-in itself), or the URL with the
// organization's API key in an `X-Api-Key` header where the client can send headers. Pure
// functions, so that test/unit/dashboard-mcp-configs.test.ts checks every snippet's shape.

export const MCP_CLIENTS = ['claude', 'cursor', 'vscode', 'claude-code', 'inspector'] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];
export type McpAuth = 'oauth' | 'api-key';

export const CLIENT_LABELS: Record<McpClient, string> = {
  claude: 'Claude Desktop and claude.ai',
  cursor: 'Cursor',
  vscode: 'VS Code',
  'claude-code': 'Claude Code',
  inspector: 'MCP Inspector',
};

export interface McpConfig {
  /** Where the snippet goes, or what to do with it. */
  where: string;
  /** The text to paste (JSON, a shell command, or the values a settings form asks for). */
  text: string;
  /** `json` snippets parse as JSON. */
  kind: 'json' | 'shell' | 'form';
}

/** The server's name in the clients' configurations. */
export const SERVER_NAME = 'mindgate';
/** Written in the snippets of pages that do not know the key (the Overview). */
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

const json = (value: unknown) => JSON.stringify(value, null, 2);

function oauthConfig(client: McpClient, url: string): McpConfig {
  switch (client) {
    case 'claude':
      return {
        where:
          'Settings → Connectors → Add custom connector (Claude Desktop or claude.ai). Claude signs in through the platform. claude.ai connects from Anthropic’s cloud, so it needs the URL reachable from the internet.',
        text: `Name: Mindgate Brain\nRemote MCP server URL: ${url}`,
        kind: 'form',
      };
    case 'cursor':
      return {
        where: '.cursor/mcp.json in a project, or ~/.cursor/mcp.json; Cursor signs in when it connects.',
        text: json({ mcpServers: { [SERVER_NAME]: { url } } }),
        kind: 'json',
      };
    case 'vscode':
      return {
        where: '.vscode/mcp.json; VS Code signs in when the server starts.',
        text: json({ servers: { [SERVER_NAME]: { type: 'http', url } } }),
        kind: 'json',
      };
    case 'claude-code':
      return {
        where: 'In a terminal, then /mcp in Claude Code to sign in.',
        text: `claude mcp add --transport http ${SERVER_NAME} ${url}`,
        kind: 'shell',
      };
    case 'inspector':
      return {
        where: 'Run the Inspector, then in its page choose these and Connect; it runs the OAuth sign-in.',
        text: `npx @modelcontextprotocol/inspector\n\nTransport Type: Streamable HTTP\nURL: ${url}`,
        kind: 'form',
      };
  }
}

function apiKeyConfig(client: McpClient, url: string, key: string): McpConfig {
  switch (client) {
    case 'claude':
      // Claude's connectors take no headers: the mcp-remote bridge (a local stdio server) sends it.
      return {
        where:
          'claude_desktop_config.json (Settings → Developer → Edit Config): Claude Desktop reaches the Brain through the mcp-remote bridge, which sends the key. claude.ai connectors take no headers: use OAuth there.',
        text: json({
          mcpServers: {
            [SERVER_NAME]: {
              command: 'npx',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: the MCP client expands it, not JavaScript
              args: ['-y', 'mcp-remote', url, '--header', 'X-Api-Key:${MINDGATE_API_KEY}'],
              env: { MINDGATE_API_KEY: key },
            },
          },
        }),
        kind: 'json',
      };
    case 'cursor':
      return {
        where: '.cursor/mcp.json in a project, or ~/.cursor/mcp.json (keep the key out of version control).',
        text: json({ mcpServers: { [SERVER_NAME]: { url, headers: { 'X-Api-Key': key } } } }),
        kind: 'json',
      };
    case 'vscode':
      // VS Code asks for the key once and keeps it in its secret storage, not in the file.
      return {
        where: `.vscode/mcp.json; VS Code asks for the key when the server starts and keeps it in its secret storage${key === KEY_PLACEHOLDER ? '' : ': paste the key above'}.`,
        text: json({
          inputs: [{ type: 'promptString', id: 'mindgate-api-key', description: 'Mindgate API key', password: true }],
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the MCP client expands it, not JavaScript
          servers: { [SERVER_NAME]: { type: 'http', url, headers: { 'X-Api-Key': '${input:mindgate-api-key}' } } },
        }),
        kind: 'json',
      };
    case 'claude-code':
      return {
        where: 'In a terminal.',
        text: `claude mcp add --transport http ${SERVER_NAME} ${url} --header "X-Api-Key: ${key}"`,
        kind: 'shell',
      };
    case 'inspector':
      return {
        where: 'In a terminal: the Inspector’s command line lists the Brain’s tools.',
        text: `npx @modelcontextprotocol/inspector --cli ${url} --transport http --method tools/list --header "X-Api-Key: ${key}"`,
        kind: 'shell',
      };
  }
}

/** The configuration of `client` for the Brain at `url`, signing in with OAuth or sending `key`. */
export function mcpConfig(client: McpClient, auth: McpAuth, url: string, key = KEY_PLACEHOLDER): McpConfig {
  return auth === 'oauth' ? oauthConfig(client, url) : apiKeyConfig(client, url, key);
}
