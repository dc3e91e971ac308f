// The MCP Python SDK client through the gateway: the same flow as the TypeScript client (issuer
// and `iss` checks of that SDK included), with a refresh. The Python package comes from
// scripts/install-test-tools.sh; under CI=true its absence fails the suite.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowser, signIn } from '../support/gateway-browser.ts';
import { startGatewayEnv, type GatewayEnv } from '../support/gateway-env.ts';

const python = process.env.PYTHON ?? 'python3';
const available = spawnSync(python, ['-c', 'import mcp'], { encoding: 'utf8' }).status === 0;
if (!available) {
  if (process.env.CI === 'true')
    throw new Error(`the MCP Python SDK is required when CI=true (${python} -c "import mcp" failed; run scripts/install-test-tools.sh)`);
  console.warn('the MCP Python SDK is not installed: the Python client test is skipped (run scripts/install-test-tools.sh)');
}

let env: GatewayEnv;

describe.skipIf(!available)('the MCP Python SDK client through the gateway', () => {
  beforeAll(async () => {
    env = await startGatewayEnv();
  }, 120_000);

  afterAll(async () => {
    await env?.stop();
  });

  it.each(['alpha', 'beta'])(
    'signs in, calls tools and refreshes on %s',
    async (server) => {
      const child = spawn(python, [path.resolve('test/e2e/gateway-python-client.py'), `${env.base}/${server}/mcp`], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const messages: Record<string, unknown>[] = [];
      const browser = createBrowser();
      for await (const line of readline.createInterface({ input: child.stdout })) {
        const message = JSON.parse(line) as Record<string, unknown>;
        messages.push(message);
        if (typeof message.authorize === 'string') {
          const authorize = new URL(message.authorize);
          expect(`${authorize.origin}${authorize.pathname}`).toBe(`${env.base}/${server}/oauth/authorize`);
          const back = await signIn(browser, authorize.href, 'http://127.0.0.1:45777/callback');
          child.stdin.write(`${JSON.stringify(Object.fromEntries(back.searchParams))}\n`);
        }
      }
      const code = await exited;
      expect(code, stderr).toBe(0);
      expect(messages.find((m) => m.whoami)).toMatchObject({
        whoami: { backend: server, sub: 'alice', aud: `urn:test:${server}` },
        client_id: `gw-${server}`,
      });
      expect(messages.find((m) => m.echo)).toEqual({ echo: 'from python', refreshed: true, refresh_prefix: 'mgr1.' });
      expect(messages.at(-1)).toEqual({ done: true });
    },
    90_000,
  );
});
