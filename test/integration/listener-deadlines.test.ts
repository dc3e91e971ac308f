// No public listener keeps a connection forever: on each of the four (gateway, REST API, Web
// API, authorization server), a request that sent its head and then stops sending its body gets
// a 408 in the listener's own error shape and its connection is closed, unauthenticated OAuth
// endpoints included. The deadlines are configured small; the tests wait for the outcome and
// never assert how long it took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { rawExchange, type RawReply } from '../support/raw-http.ts';

let platform: TestPlatform;
let apiToken: ObtainedToken;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ BODY_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '1500' });
  apiToken = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** Sends a head announcing 100 bytes, and 5 of them; resolves when the server closes. */
function stalled(listener: 'gateway' | 'api' | 'web' | 'auth', path: string, contentType: string, extra = ''): Promise<RawReply> {
  const { hostname, port } = new URL(platform.edge.listeners[listener].url);
  const head = `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: ${contentType}\r\ncontent-length: 100\r\n${extra}\r\n`;
  return rawExchange(hostname, Number(port), `${head}{"a":`);
}

function statusOf(reply: RawReply): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(reply.text)?.[1]);
}

describe('a request body that stops arriving', () => {
  it('gets a 408 on the gateway, its OAuth facade endpoints included', async () => {
    for (const path of ['/brain/oauth/register', '/brain/oauth/token', '/token']) {
      const reply = await stalled('gateway', path, path.endsWith('register') ? 'application/json' : 'application/x-www-form-urlencoded');
      expect(statusOf(reply), path).toBe(408);
      expect(reply.text, path).toContain('"error":"request_timeout"');
      expect(reply.closed, path).toBe(true);
    }
  });

  it('gets a 408 problem on the REST API', async () => {
    const path = `/organizations/${apiToken.organizationId}/api-keys`;
    const reply = await stalled('api', path, 'application/json', `authorization: Bearer ${apiToken.access_token}\r\n`);
    expect(statusOf(reply)).toBe(408);
    expect(reply.text).toContain('"status":408');
    expect(reply.closed).toBe(true);
  });

  it('gets a 408 on the authorization server, at its own endpoints and at oidc-provider’s', async () => {
    for (const [path, type] of [
      ['/token', 'application/x-www-form-urlencoded'],
      ['/register', 'application/json'],
    ]) {
      const reply = await stalled('auth', path, type);
      expect(statusOf(reply), path).toBe(408);
      expect(reply.closed, path).toBe(true);
    }
  });

  it('has its connection closed on the Web API, which answers before reading any body', async () => {
    for (const path of ['/api/v1/search', '/nowhere']) {
      const reply = await stalled('web', path, 'application/json');
      expect(statusOf(reply), path).toBeGreaterThanOrEqual(400);
      expect(statusOf(reply), path).toBeLessThan(500);
      expect(reply.closed, path).toBe(true);
    }
  });

  it('leaves every listener serving afterwards', async () => {
    for (const name of ['gateway', 'api', 'web', 'auth'] as const) {
      const url = platform.edge.listeners[name].url;
      const res = await fetch(`${url}${name === 'auth' ? '/.well-known/oauth-authorization-server' : '/health'}`);
      expect(res.status, name).toBe(200);
    }
  });
});
