// The platform's one redirect-URI policy (edge/http/redirect-uri-policy.ts): what real MCP
// clients register keeps working (/work/shared/reference/oauth-and-mcp-clients.md §10-11), and
// everything outside the allow-rule (https, http on loopback, reverse-domain private-use schemes
// and Cursor's `cursor:`) is refused, browser-internal and extension schemes included. Both
// registration endpoints run it; their own tests check it end to end.
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
    ['a reverse-domain scheme with an authority', 'com.googleusercontent.apps.123-abc://oauth/cb', 'private-use'],
    ['a two-label reverse-domain scheme', 'io.client:/cb', 'private-use'],
    ['a loopback host spelt fully qualified', 'http://localhost./callback', 'loopback'],
    ['an https host spelt fully qualified', 'https://claude.ai./api/mcp/auth_callback', 'https'],
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
    // Browser-internal, extension and app-launch schemes: refused because they are not on the
    // allow-list, not because they are listed.
    'safari-web-extension://ABCDEF-1234/cb.html',
    'ms-browser-extension://abc/cb.html',
    'extension://abcdefghijklmnop/cb.html',
    'edge://settings',
    'opera://settings',
    'brave://settings',
    'android-app://com.example.app/https/example.com/cb',
    'market://details?id=com.example.app',
    'itms-apps://apps.apple.com/app/id1',
    'vscode://vscode.github-authentication/did-authenticate',
    'windsurf://oauth/cb',
    'myapp://callback',
    'about:blank',
    'mailto:someone@example.com',
    'ftp://files.example/cb',
    // Scheme shapes that look reverse-domain but are not.
    'com.example.:/cb',
    'com..example:/cb',
    // The platform's own hosts in other spellings, and hosts with empty labels.
    'https://auth.example.com./cb',
    'https://AUTH.example.com:443/cb',
    'http://localhost.:8080/callback',
    'http://127.1:8080/cb',
    'https://a..example/cb',
    'https://.example.com/cb',
    'https://client.example../cb',
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
