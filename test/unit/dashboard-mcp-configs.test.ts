// The MCP clients' configurations the dashboard shows (edge/dashboard/app/mcp-configs.ts): each in
// the shape its client documents, with the Brain's URL and, for the API key variants, the key
// in an X-Api-Key header (or, for VS Code, prompted for and kept in its secret storage).
import { describe, expect, it } from 'vitest';
import { KEY_PLACEHOLDER, MCP_CLIENTS, mcpConfig } from '../../edge/dashboard/app/mcp-configs.ts';

const URL = 'https://mindgate.example.com/brain/mcp';
const KEY = 'mg_live_0123456789abcdef';

describe('the MCP client configurations', () => {
  it('gives every client both variants, each naming the URL, and the key only in the API key ones', () => {
    for (const client of MCP_CLIENTS) {
      const oauth = mcpConfig(client, 'oauth', URL, KEY);
      expect(oauth.text, client).toContain(URL);
      expect(oauth.text, client).not.toContain(KEY);
      const keyed = mcpConfig(client, 'api-key', URL, KEY);
      expect(keyed.text, client).toContain(URL);
      if (client !== 'vscode') expect(keyed.text, client).toContain(KEY);
      for (const c of [oauth, keyed]) if (c.kind === 'json') expect(() => JSON.parse(c.text), client).not.toThrow();
    }
  });

  it('writes Cursor mcp.json under mcpServers with url and headers', () => {
    expect(JSON.parse(mcpConfig('cursor', 'oauth', URL).text)).toEqual({ mcpServers: { mindgate: { url: URL } } });
    expect(JSON.parse(mcpConfig('cursor', 'api-key', URL, KEY).text)).toEqual({
      mcpServers: { mindgate: { url: URL, headers: { 'X-Api-Key': KEY } } },
    });
  });

  it('writes VS Code .vscode/mcp.json under servers, type http, the key from a password input', () => {
    expect(JSON.parse(mcpConfig('vscode', 'oauth', URL).text)).toEqual({ servers: { mindgate: { type: 'http', url: URL } } });
    const keyed = JSON.parse(mcpConfig('vscode', 'api-key', URL, KEY).text);
    expect(keyed.inputs).toEqual([{ type: 'promptString', id: 'mindgate-api-key', description: 'Mindgate API key', password: true }]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the MCP client expands it, not JavaScript
    expect(keyed.servers.mindgate).toEqual({ type: 'http', url: URL, headers: { 'X-Api-Key': '${input:mindgate-api-key}' } });
  });

  it('gives Claude Code and the Inspector their command lines, and Claude Desktop the mcp-remote bridge for a key', () => {
    expect(mcpConfig('claude-code', 'oauth', URL).text).toBe(`claude mcp add --transport http mindgate ${URL}`);
    expect(mcpConfig('claude-code', 'api-key', URL, KEY).text).toBe(
      `claude mcp add --transport http mindgate ${URL} --header "X-Api-Key: ${KEY}"`,
    );
    expect(mcpConfig('inspector', 'api-key', URL, KEY).text).toBe(
      `npx @modelcontextprotocol/inspector --cli ${URL} --transport http --method tools/list --header "X-Api-Key: ${KEY}"`,
    );
    const bridge = JSON.parse(mcpConfig('claude', 'api-key', URL, KEY).text).mcpServers.mindgate;
    expect(bridge).toEqual({
      command: 'npx',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the MCP client expands it, not JavaScript
      args: ['-y', 'mcp-remote', URL, '--header', 'X-Api-Key:${MINDGATE_API_KEY}'],
      env: { MINDGATE_API_KEY: KEY },
    });
    expect(mcpConfig('cursor', 'api-key', URL).text).toContain(KEY_PLACEHOLDER);
  });
});
