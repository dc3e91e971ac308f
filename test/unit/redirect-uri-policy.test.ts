// The platform's one redirect-URI policy (edge/http/redirect-uri-policy.ts): what real MCP
// clients register keeps working (/work/shared/reference/oauth-and-mcp-clients.md §10-11), and
// what the authorization server used to let through (intent:, ws:, browser-extension schemes)
// no longer does. Both registration endpoints run it; their own tests check it end to end.
import { describe, expect, it } from 'vitest';
import { checkHttpsUri, checkRedirectUri, redirectHost } from '../../edge/http/redirect-uri-policy.ts';

const OWN = ['http://127.0.0.1:8080', 'https://auth.example.com'];

describe('checkRedirectUri', () => {
  it.each([
    ['claude.ai', 'https://claude.ai/api/mcp/auth_callback', 'https'],
    ['claude.com', 'https://claude.com/api/mcp/auth_callback', 'https'],
    ['ChatGPT', 'https://chatgpt.com/connector_platform_oauth_redirect', 'https'],
    ['VS Code loopback without port', 'http://127.0.0.1/', 'loopback'],
    ['VS Code loopback with port', 'http://127.0.0.1:33418/', 'loopback'],
    ['VS Code web', 'https://vscode.dev/redirect', 'https'],
    ['Claude Code', 'http://localhost:51234/callback', 'loopback'],
    ['Cursor', 'cursor://anysphere.cursor-mcp/oauth/callback', 'private-use'],
    ['MCP Inspector', 'http://localhost:6274/oauth/callback', 'loopback'],
    ['IPv6 loopback', 'http://[::1]:8000/cb', 'loopback'],
    ['RFC 8252 reverse-domain scheme', 'com.example.app:/oauth2redirect', 'private-use'],
    ['https with a query', 'https://app.example.com/cb?tenant=1', 'https'],
    // Browser extensions get an https redirect from the browser (chrome.identity, browser.identity).
    ['a Chrome extension', 'https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/cb', 'https'],
    ['a Firefox extension', 'https://0a1b2c3d.extensions.allizom.org/', 'https'],
  ])('accepts %s (%s)', (_client, uri, kind) => {
    const check = checkRedirectUri(uri, OWN);
    expect(check).toMatchObject({ ok: true, kind });
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript://%0aalert(1)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'vbscript:msgbox',
    'blob:https://a.example/x',
    'intent://scan/#Intent;scheme=zxing;end',
    'intent://callback?x=1',
    'ws://127.0.0.1:9000/cb',
    'wss://client.example/cb',
    'chrome-extension://abcdefghijklmnop/cb.html',
    'moz-extension://0c6a-11/cb.html',
    'chrome://settings',
    'view-source:https://a.example/',
    'http://example.com/callback',
    'http://127.0.0.1.evil.com/cb',
    'https://user:pass@client.example/cb',
    'https://client.example@evil.example/cb',
    'https://client.example/cb#fragment',
    'https://client.example\\@evil.example/',
    'https://client.example/\ncb',
    'not a uri',
    '/relative/callback',
    '',
    `https://a.example/${'x'.repeat(2_100)}`,
    'http://127.0.0.1:8080/anything',
    'http://localhost:8080/callback',
    'https://auth.example.com/cb',
  ])('refuses %j', (uri) => {
    const check = checkRedirectUri(uri, OWN);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.reason).toMatch(/redirect URI|scheme/);
  });

  it('refuses values that are not strings', () => {
    for (const value of [undefined, null, 5, ['https://a.example/cb'], {}]) expect(checkRedirectUri(value, OWN).ok).toBe(false);
  });

  it('names the host a consent page shows', () => {
    expect(redirectHost(new URL('https://claude.ai/api/mcp/auth_callback'))).toBe('claude.ai');
    expect(redirectHost(new URL('cursor://anysphere.cursor-mcp/oauth/callback'))).toBe('cursor://anysphere.cursor-mcp');
    expect(redirectHost(new URL('com.example.app:/oauth2redirect'))).toBe('com.example.app:');
  });
});

describe('checkHttpsUri', () => {
  it('accepts https URIs and refuses everything else', () => {
    expect(checkHttpsUri('https://client.example/logo.png').ok).toBe(true);
    for (const uri of [
      'http://client.example/',
      'javascript:alert(1)',
      'data:image/png;base64,AA',
      'https://u:p@client.example/',
      'https://client.example/#x',
      'cursor://x/y',
      'nope',
    ]) {
      expect(checkHttpsUri(uri, 'logo_uri'), uri).toMatchObject({ ok: false, reason: expect.stringContaining('logo_uri') });
    }
  });
});
