// End to end through the gateway with real parts: the MCP SDK client and its OAuth provider do
// discovery → dynamic registration → authorize (the gateway's consent) → upstream IdP
// (oidc-provider) → callback → token → tools/call over Streamable HTTP (SSE and JSON responses)
// → refresh, against SDK-built backends that verify the IdP's tokens.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayEnv, type GatewayEnv } from '../support/gateway-env.ts';
import { TestOAuthProvider } from '../support/gateway-oauth-client.ts';

let env: GatewayEnv;

beforeAll(async () => {
  env = await startGatewayEnv();
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

/** Connects the SDK client, going through the whole sign-in when the gateway asks for it. */
async function connect(
  serverPath: string,
  provider: TestOAuthProvider,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const url = new URL(`${env.base}/${serverPath}`);
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  let client = new Client({ name: 'vitest', version: '1.0.0' });
  try {
    await client.connect(transport);
    return { client, transport };
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  await transport.finishAuth(provider.code!);
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  client = new Client({ name: 'vitest', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

function text(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content.map((c) => c.text).join('');
}

describe('the MCP SDK client through the gateway', () => {
  it('signs in with the OAuth facade and calls tools over SSE responses, then refreshes', async () => {
    const provider = new TestOAuthProvider();
    const { client, transport } = await connect('alpha/mcp', provider);

    // Registration happened once, returned the gateway client_id of alpha, and no secret.
    expect(provider.registrations).toBe(1);
    const info = provider.clientInformation() as Record<string, unknown>;
    expect(info.client_id).toBe('gw-alpha');
    expect(info.client_secret).toBeUndefined();
    // The authorization went to the gateway, not to the IdP, with PKCE S256 and the resource.
    const authUrl = provider.authorizationUrls[0];
    expect(`${authUrl.origin}${authUrl.pathname}`).toBe(`${env.base}/alpha/oauth/authorize`);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('resource')).toBe(`${env.base}/alpha/mcp`);
    // RFC 9207: the client learns the gateway's per-server issuer.
    expect(provider.iss).toBe(`${env.base}/alpha`);
    // Upstream got the gateway's own client, callback and PKCE, and the configured resource only.
    const upstream = env.idp.authorizationRequests.at(-1)!;
    expect(upstream.get('client_id')).toBe('gw-alpha');
    expect(upstream.get('redirect_uri')).toBe(`${env.base}/alpha/oauth/callback`);
    expect(upstream.get('code_challenge')).not.toBe(authUrl.searchParams.get('code_challenge'));
    expect(upstream.get('resource')).toBe('urn:test:alpha');

    const who = JSON.parse(text(await client.callTool({ name: 'whoami', arguments: {} })));
    expect(who).toMatchObject({ backend: 'alpha', sub: 'alice', aud: 'urn:test:alpha' });
    expect(transport.sessionId).toBeTruthy();

    // Progress notifications arrive over the SSE response, one by one, before the result.
    const progress: number[] = [];
    const counted = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(text(counted)).toBe('counted 3');
    expect(progress).toEqual([1, 2, 3]);

    // A refused access token makes the client refresh through the gateway, and carry on.
    const before = provider.tokens()!;
    expect(before.refresh_token).toMatch(/^mgr1\./);
    provider.spoilAccessToken();
    const again = JSON.parse(text(await client.callTool({ name: 'whoami', arguments: {} })));
    expect(again.sub).toBe('alice');
    const after = provider.tokens()!;
    expect(after.access_token).not.toBe('not-a-valid-token');
    // The upstream rotates refresh tokens; the gateway hands out a new envelope.
    expect(after.refresh_token).toMatch(/^mgr1\./);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(provider.registrations).toBe(1);
    await client.close();
  }, 60_000);

  it('works with a stateless backend answering JSON (beta, explicit upstream endpoints)', async () => {
    const provider = new TestOAuthProvider();
    const { client } = await connect('beta/mcp', provider);
    const info = provider.clientInformation() as Record<string, unknown>;
    expect(info.client_id).toBe('gw-beta');
    const who = JSON.parse(text(await client.callTool({ name: 'whoami', arguments: {} })));
    expect(who).toMatchObject({ backend: 'beta', sub: 'alice', aud: 'urn:test:beta' });
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'héllo' } }))).toBe('héllo');
    await client.close();
  }, 60_000);

  it('signs a different user in for a different client, each seeing its own identity', async () => {
    env.idp.account = 'bob';
    try {
      const provider = new TestOAuthProvider('http://localhost:41234/cb');
      const { client } = await connect('alpha/mcp', provider);
      const who = JSON.parse(text(await client.callTool({ name: 'whoami', arguments: {} })));
      expect(who.sub).toBe('bob');
      await client.close();
    } finally {
      env.idp.account = 'alice';
    }
  }, 60_000);
});
