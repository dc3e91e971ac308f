// The gateway's configuration: the servers file (JSON or YAML) validated at start, with one
// ConfigError line and exit status 2 for a bad file; keys and secrets; the generated state secret.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../../edge/gateway/config.ts';
import { resolveStateSecrets } from '../../edge/gateway/oauth/secret.ts';
import { ConfigError } from '../../services/common/config.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-gateway-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: string, ext = 'yaml'): string {
  const p = path.join(dir, `servers-${n++}.${ext}`);
  fs.writeFileSync(p, content);
  return p;
}

function configError(env: Record<string, string>): string {
  try {
    readGatewayConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('the servers file', () => {
  it('without a file, holds just the Brain, served here and authorized by the platform', () => {
    const config = readGatewayConfig({});
    expect(config.servers.map((s) => s.name)).toEqual(['brain']);
    expect(config.defaultServer).toBe('brain');
    expect(config.servers[0].url).toBeUndefined();
    expect(config.servers[0].auth).toEqual({ kind: 'platform' });
    expect(config.keys).toEqual([]);
    expect(config.stateSecrets).toEqual([]);
  });

  it('reads the README example in YAML', () => {
    const config = readGatewayConfig({
      GITHUB_MCP_SECRET: 'from-the-environment',
      GATEWAY_SERVERS_FILE: file(`
default_server: github
servers:
  - name: github
    url: https://mcp-github.internal:9000/
    scopes: [repo, read:user]
    oauth:
      issuer: https://github-idp.example.com
      client_id: mindgate-gateway
      client_secret_env: GITHUB_MCP_SECRET
      scopes: [repo, read:user, offline_access]
      audience: https://api.github.example
  - name: tickets
    url: http://tickets.internal:8000/mcp-root
    mcp_path: mcp
    oauth:
      authorization_endpoint: https://login.example.com/oauth2/authorize
      token_endpoint: https://login.example.com/oauth2/token
      client_id: tickets-gw
      token_endpoint_auth_method: none
      resource: api://tickets
      extra_authorize_params: { access_type: offline }
  - name: search
    url: http://search.internal:7000
  - name: wiki
    url: http://wiki.internal:7000
    authorization_server: https://auth.example.com
`),
    });
    expect(config.defaultServer).toBe('github');
    expect(config.servers.map((s) => s.name)).toEqual(['github', 'tickets', 'search', 'wiki', 'brain']);
    const [github, tickets, search, wiki] = config.servers;
    expect(github.scopes).toEqual(['repo', 'read:user']);
    expect(github.auth).toMatchObject({
      kind: 'facade',
      upstream: {
        clientSecret: 'from-the-environment',
        tokenEndpointAuthMethod: 'client_secret_basic',
        audience: 'https://api.github.example',
      },
    });
    expect(tickets.auth).toMatchObject({
      kind: 'facade',
      upstream: { tokenEndpointAuthMethod: 'none', resource: 'api://tickets', extraAuthorizeParams: { access_type: 'offline' } },
    });
    expect(tickets.scopes).toEqual(['openid', 'profile', 'email', 'offline_access']);
    expect(search.auth).toEqual({ kind: 'none' });
    expect(search.scopes).toEqual([]);
    expect(wiki.auth).toEqual({ kind: 'external', authorizationServer: 'https://auth.example.com' });
  });

  it('reads JSON too', () => {
    const config = readGatewayConfig({
      GATEWAY_SERVERS_FILE: file(JSON.stringify({ servers: [{ name: 'x', url: 'http://127.0.0.1:9/' }], default_server: 'x' }), 'json'),
    });
    expect(config.servers.map((s) => s.name)).toEqual(['x', 'brain']);
  });

  it('reads a file that describes brain itself: authorized by the platform, or by anything else it says', () => {
    const local = readGatewayConfig({
      GATEWAY_SERVERS_FILE: file('servers:\n  - name: brain\n    local: true\n    authorization_server: platform\n'),
    });
    expect(local.servers).toEqual([
      {
        name: 'brain',
        url: undefined,
        mcpPath: 'mcp',
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        auth: { kind: 'platform' },
      },
    ]);
    const remote = readGatewayConfig({
      GATEWAY_SERVERS_FILE: file(
        'servers:\n  - name: brain\n    url: http://brain-mcp.internal:7000\n    authorization_server: https://auth.example.com/\n',
      ),
    });
    expect(remote.servers).toHaveLength(1);
    expect(remote.servers[0]).toMatchObject({
      url: 'http://brain-mcp.internal:7000',
      auth: { kind: 'external', authorizationServer: 'https://auth.example.com' },
    });
  });

  it.each([
    ['servers: [', /is neither JSON nor YAML/],
    ['{}', /servers: /],
    ['servers: []', /servers: Too small/],
    ['servers: [{ name: "a b", url: "http://x" }]', /servers\[0\]\.name: must match/],
    ['servers: [{ name: health, url: "http://x" }]', /servers\[0\]\.name: is reserved/],
    ['servers: [{ name: a, url: "ftp://x" }]', /servers\[0\]\.url/],
    ['servers: [{ name: a, url: "http://u:p@x" }]', /servers\[0\]\.url/],
    ['servers: [{ name: a }]', /needs exactly one of url or local/],
    ['servers: [{ name: a, url: "http://x", local: true }]', /needs exactly one of url or local/],
    ['servers: [{ name: a, url: "http://x", colour: blue }]', /Unrecognized key/],
    ['servers: [{ name: a, url: "http://x" }, { name: a, url: "http://y" }]', /duplicate server "a"/],
    ['servers: [{ name: a, url: "http://x" }]\ndefault_server: b', /default_server: no server named "b"/],
    ['servers: [{ name: a, url: "http://x", oauth: { client_id: c, client_secret: s } }]', /needs issuer, or both/],
    [
      'servers: [{ name: a, url: "http://x", oauth: { issuer: "http://i", client_id: c, token_endpoint_auth_method: client_secret_post } }]',
      /needs client_secret/,
    ],
    [
      'servers: [{ name: a, url: "http://x", oauth: { issuer: "http://i", client_id: c, client_secret_env: NOT_SET_ANYWHERE } }]',
      /NOT_SET_ANYWHERE is not set/,
    ],
    [
      'servers: [{ name: a, url: "http://x", oauth: { issuer: "http://i", client_id: c }, authorization_server: "http://as" }]',
      /exclusive/,
    ],
    ['servers: [{ name: a, url: "http://x", mcp_path: "../up" }]', /mcp_path/],
  ])('refuses %j', (content, message) => {
    const text = configError({ GATEWAY_SERVERS_FILE: file(content) });
    expect(text).toMatch(/^GATEWAY_SERVERS_FILE: /);
    expect(text).toMatch(message);
  });

  it('refuses a file that cannot be read', () => {
    expect(configError({ GATEWAY_SERVERS_FILE: path.join(dir, 'missing.yaml') })).toMatch(/cannot be read \(ENOENT\)/);
  });

  it('never echoes a secret from a refused file', () => {
    const text = configError({
      GATEWAY_SERVERS_FILE: file('servers: [{ name: a, url: "http://x", oauth: { client_id: c, client_secret: "s3cr3t-value" } }]'),
    });
    expect(text).not.toContain('s3cr3t-value');
  });
});

describe('keys, secrets and limits', () => {
  it('reads comma-separated keys and secrets, refusing short ones', () => {
    const config = readGatewayConfig({ GATEWAY_KEYS: `${'k'.repeat(16)}, ${'j'.repeat(20)}`, GATEWAY_STATE_SECRET: 's'.repeat(32) });
    expect(config.keys).toEqual(['k'.repeat(16), 'j'.repeat(20)]);
    expect(config.stateSecrets).toEqual(['s'.repeat(32)]);
    expect(configError({ GATEWAY_KEYS: 'short' })).toBe('GATEWAY_KEYS: entry 1 must be at least 16 characters long');
    expect(configError({ GATEWAY_STATE_SECRET: `${'s'.repeat(32)},tiny` })).toMatch(/^GATEWAY_STATE_SECRET: entry 2/);
    expect(configError({ GATEWAY_MAX_BODY_BYTES: 'lots' })).toMatch(/^GATEWAY_MAX_BODY_BYTES: /);
    expect(configError({ GATEWAY_RESPONSE_TIMEOUT_MS: '5' })).toMatch(/at least 100/);
  });

  it('generates the state secret once and keeps it, private, in the data directory', () => {
    const data = path.join(dir, 'data');
    const first = resolveStateSecrets([], data);
    expect(first[0].length).toBeGreaterThanOrEqual(32);
    expect(resolveStateSecrets([], data)).toEqual(first);
    expect(fs.statSync(path.join(data, 'gateway-state-secret')).mode & 0o777).toBe(0o600);
    expect(resolveStateSecrets(['configured-secret-0123456789abcdef'], data)).toEqual(['configured-secret-0123456789abcdef']);
  });
});

describe('at start', () => {
  it('stops the process with one configuration error line and exit status 2', () => {
    const bad = file('servers: [{ name: "no spaces allowed", url: "http://x" }]');
    const result = spawnSync(path.resolve('node_modules/.bin/node'), ['edge/main.ts'], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(dir, 'start-data'), GATEWAY_SERVERS_FILE: bad },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^configuration error: GATEWAY_SERVERS_FILE: .*servers\[0\]\.name: must match/);
  });
});
