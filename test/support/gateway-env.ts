// The gateway's test world: an upstream IdP (oidc-provider), two SDK-built MCP backends that
// verify its tokens, a servers file describing them, and the whole platform started on a known
// port so that its public URL (used in every metadata document) is the URL tests call.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startMcpBackend, type McpBackend } from './gateway-backends.ts';
import { freePort, startTestIdp, type TestIdp } from './gateway-idp.ts';
import { Writable } from 'node:stream';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform, testEnv, type TestPlatform } from './platform.ts';

export const GATEWAY_KEY = 'operator-key-0123456789abcdef';
export const STATE_SECRET = 'state-secret-0123456789abcdef0123456789';
export const SCOPES = ['openid', 'offline_access', 'mcp'];

export interface GatewayEnv {
  /** The gateway's public URL (equal to the URL it listens on). */
  base: string;
  idp: TestIdp;
  /** Stateful backend answering with SSE (server `alpha`, audience urn:test:alpha). */
  alpha: McpBackend;
  /** Stateless backend answering with JSON (server `beta`, audience urn:test:beta). */
  beta: McpBackend;
  platform: TestPlatform;
  serversFile: string;
  stop(): Promise<void>;
}

export interface GatewayEnvOptions {
  env?: Record<string, string>;
  /** Collects every log line of the platform (at trace level) into this array. */
  logs?: string[];
}

export async function startGatewayEnv(options: GatewayEnvOptions = {}): Promise<GatewayEnv> {
  const extraEnv = options.env ?? {};
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const idp = await startTestIdp({
    clients: [
      {
        clientId: 'gw-alpha',
        clientSecret: 'alpha-secret',
        redirectUris: [`${base}/alpha/oauth/callback`],
        defaultResource: 'urn:test:alpha',
      },
      { clientId: 'gw-beta', clientSecret: 'beta-secret', redirectUris: [`${base}/beta/oauth/callback`], defaultResource: 'urn:test:beta' },
      {
        clientId: 'gw-shared',
        clientSecret: 'shared-secret',
        redirectUris: [`${base}/gamma/oauth/callback`, `${base}/delta/oauth/callback`],
        defaultResource: 'urn:test:alpha',
      },
    ],
  });
  const alpha = await startMcpBackend({ issuer: idp.issuer, jwksUri: idp.jwksUri, audience: 'urn:test:alpha', mode: 'sse', name: 'alpha' });
  const beta = await startMcpBackend({ issuer: idp.issuer, jwksUri: idp.jwksUri, audience: 'urn:test:beta', mode: 'json', name: 'beta' });
  const down = await freePort();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-gateway-'));
  const serversFile = path.join(dir, 'servers.yaml');
  fs.writeFileSync(
    serversFile,
    `# The gateway test registry
default_server: alpha
servers:
  - name: alpha
    url: ${alpha.url}/
    oauth:
      issuer: ${idp.issuer}
      client_id: gw-alpha
      client_secret: alpha-secret
      scopes: [${SCOPES.join(', ')}]
      resource: urn:test:alpha
  - name: beta
    url: ${beta.url}
    oauth:
      authorization_endpoint: ${idp.issuer}/auth
      token_endpoint: ${idp.issuer}/token
      issuer: ${idp.issuer}
      client_id: gw-beta
      client_secret_env: TEST_BETA_SECRET
      scopes: [${SCOPES.join(', ')}]
  - name: gamma
    url: ${alpha.url}
    oauth: { issuer: "${idp.issuer}", client_id: gw-shared, client_secret: shared-secret, scopes: [${SCOPES.join(', ')}] }
  - name: delta
    url: ${alpha.url}
    oauth: { issuer: "${idp.issuer}", client_id: gw-shared, client_secret: shared-secret, scopes: [${SCOPES.join(', ')}] }
  - name: open
    url: ${alpha.url}/raw
  - name: down
    url: http://127.0.0.1:${down}/
`,
  );
  const overrides = {
    GATEWAY_PORT: String(port),
    PUBLIC_GATEWAY_URL: base,
    GATEWAY_SERVERS_FILE: serversFile,
    GATEWAY_KEYS: `${GATEWAY_KEY},second-operator-key-0123456789`,
    GATEWAY_STATE_SECRET: STATE_SECRET,
    TEST_BETA_SECRET: 'beta-secret',
    ...extraEnv,
  };
  const platform = options.logs ? await startLoggedPlatform(overrides, options.logs) : await startTestPlatform(overrides);
  return {
    base,
    idp,
    alpha,
    beta,
    platform,
    serversFile,
    async stop() {
      await platform.stop();
      await Promise.allSettled([alpha.close(), beta.close(), idp.close()]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startLoggedPlatform(overrides: Record<string, string>, lines: string[]): Promise<TestPlatform> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-test-'));
  const config = readEdgeConfig(testEnv(dataDir, { ...overrides, LOG_LEVEL: 'trace' }), 2);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const platform = await startPlatform({ config, logger: createLogger({ level: 'trace' }, sink) });
  return {
    ...platform,
    dataDir,
    async stop(graceMs = 1_000) {
      await platform.stop(graceMs);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
