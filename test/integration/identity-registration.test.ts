// Dynamic registration at {auth_url}/register, over real HTTP: the platform's one redirect-URI
// policy, the other URI-valued client metadata, the RFC 7591 error codes, and CORS for browser
// clients such as the MCP Inspector, which register from another origin (the same policy as the
// token endpoint's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthTestPlatform, postRegistration } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let auth: string;

const INSPECTOR = 'http://localhost:6274';

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  auth = platform.ctx.config.publicUrls.auth;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const register = (metadata: unknown, headers: Record<string, string> = {}) => postRegistration(auth, metadata, headers);

function preflight(path: string, origin = INSPECTOR) {
  return fetch(`${auth}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
  });
}

describe('CORS on dynamic registration', () => {
  it('answers a preflight for /register as it does for /token', async () => {
    const res = await preflight('/register');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type, mcp-protocol-version');
    const token = await preflight('/token');
    expect(token.status).toBe(204);
    for (const name of [
      'access-control-allow-origin',
      'access-control-allow-methods',
      'access-control-allow-headers',
      'access-control-max-age',
    ]) {
      expect(res.headers.get(name), name).toBe(token.headers.get(name));
    }
  });

  it('lets the browser read the registration response and its errors', async () => {
    const ok = await register({ redirect_uris: [`${INSPECTOR}/oauth/callback`] }, { origin: INSPECTOR });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(ok.headers.get('vary')).toMatch(/origin/i);
    const refused = await register({ redirect_uris: ['javascript:alert(1)'] }, { origin: INSPECTOR });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
  });
});

describe('redirect URIs at registration', () => {
  it.each([
    'intent://callback#Intent;scheme=app;end',
    'intent://callback',
    'ws://127.0.0.1:9000/cb',
    'wss://client.example/cb',
    'chrome-extension://abcdefghijklmnop/cb.html',
    'moz-extension://0c6a-11/cb.html',
    'safari-web-extension://ABCDEF-1234/cb.html',
    'ms-browser-extension://abc/cb.html',
    'extension://abcdefghijklmnop/cb.html',
    'edge://settings',
    'opera://settings',
    'android-app://com.example.app/https/example.com/cb',
    'market://details?id=com.example.app',
    'vscode://vscode.github-authentication/did-authenticate',
    'myapp://callback',
    'http://localhost:1/cb',
    // This server's own host spelt fully qualified is still this server.
    'http://localhost.:1/cb',
  ])('refuses %s with invalid_redirect_uri', async (uri) => {
    const port = new URL(auth).port;
    const res = await register({ redirect_uris: [uri.replace(/localhost(\.?):1\//, `localhost$1:${port}/`)] });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_redirect_uri');
  });

  it.each([
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'https://claude.com/api/mcp/auth_callback',
    'http://localhost:51234/callback',
    'http://127.0.0.1:33418/',
    'https://vscode.dev/redirect',
    'http://localhost:6274/oauth/callback',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'com.example.app:/oauth2redirect',
  ])('accepts %s', async (uri) => {
    const res = await register({ redirect_uris: [uri] });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    expect(res.json.redirect_uris).toEqual([uri]);
  });
});

describe('URI-valued client metadata', () => {
  const REDIRECT = 'https://client.example/cb';

  it.each([
    ['post_logout_redirect_uris', ['https://evil.example/#x']],
    ['post_logout_redirect_uris', ['http://evil.example/logged-out']],
    ['post_logout_redirect_uris', ['javascript:alert(1)']],
    ['post_logout_redirect_uris', ['intent://logout']],
    ['post_logout_redirect_uris', ['ws://127.0.0.1/']],
    ['post_logout_redirect_uris', ['https://user:pw@client.example/']],
    ['post_logout_redirect_uris', 'https://client.example/'],
    ['client_uri', 'javascript:alert(1)'],
    ['client_uri', 'http://client.example/'],
    ['logo_uri', 'data:image/svg+xml,<svg onload=alert(1)>'],
    ['logo_uri', 'https://user:pw@client.example/logo.png'],
    ['policy_uri', 'vbscript:msgbox'],
    ['tos_uri', 'file:///etc/passwd'],
    ['jwks_uri', 'http://client.example/jwks'],
    ['initiate_login_uri', 'http://client.example/login'],
    ['sector_identifier_uri', 'http://client.example/sector'],
    ['request_uris', ['http://client.example/request']],
    ['backchannel_logout_uri', 'http://client.example/bc'],
    ['frontchannel_logout_uri', 'javascript:alert(1)'],
    ['client_uri', 5],
  ])('refuses %s %j with invalid_client_metadata', async (field, value) => {
    const res = await register({ redirect_uris: [REDIRECT], [field]: value });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_client_metadata');
    expect(res.json.error_description).toContain(field);
  });

  it('accepts well-formed informational URIs and post-logout redirect URIs', async () => {
    const res = await register({
      redirect_uris: [REDIRECT, 'http://127.0.0.1/cb'],
      post_logout_redirect_uris: ['https://client.example/logged-out', 'http://127.0.0.1:8123/bye', 'com.example.app:/logout'],
      client_uri: 'https://client.example/',
      logo_uri: 'https://client.example/logo.png',
      policy_uri: 'https://client.example/privacy',
      tos_uri: 'https://client.example/terms',
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    expect(res.json.post_logout_redirect_uris).toHaveLength(3);
    expect(res.json.logo_uri).toBe('https://client.example/logo.png');
  });
});

describe('RFC 7591 error codes', () => {
  it.each([
    ['{}'],
    ['{"redirect_uris":[]}'],
    ['{"redirect_uris":"https://a.example/cb"}'],
    ['{"redirect_uris":[5]}'],
    ['{"redirect_uris":["https://a.example/cb"],"grant_types":["client_credentials"]}'],
    ['{"redirect_uris":["https://a.example/cb"],"organization_id":"org_x"}'],
  ])('answers malformed metadata %s with invalid_client_metadata', async (body) => {
    const res = await register(body);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_client_metadata');
  });

  it('keeps invalid_redirect_uri for a redirect URI the policy refuses', async () => {
    for (const uri of ['javascript:alert(1)', 'http://example.com/cb', 'not a uri']) {
      const res = await register({ redirect_uris: ['https://a.example/cb', uri] });
      expect(res.status, uri).toBe(400);
      expect(res.json.error, uri).toBe('invalid_redirect_uri');
    }
  });
});
