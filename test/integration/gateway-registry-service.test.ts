// The agents service's part of the gateway registry, called through a Connect client over its
// routes, on the embedded records store and on the MongoDB-wire server: servers owned by an
// organization or shared, names unique and fixed, versions that move with every change, and
// gateway keys stored as hashes with an overlap on rotation.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { type Client, Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayKeysService } from '../../gen/mindgate/agents/v1/gateway_keys_pb.js';
import { GatewayRegistryService } from '../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import { McpAuthKind, McpServersService, type McpServer } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { gatewayModule } from '../../services/agents/gateway-module.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';

interface Clients {
  servers: Client<typeof McpServersService>;
  keys: Client<typeof GatewayKeysService>;
  registry: Client<typeof GatewayRegistryService>;
}

function clientsOf(records: RecordStore, now: () => number): Clients {
  const module = gatewayModule(records, now);
  const transport = createRouterTransport((router) => module.routes(router));
  return {
    servers: createClient(McpServersService, transport),
    keys: createClient(GatewayKeysService, transport),
    registry: createClient(GatewayRegistryService, transport),
  };
}

const plain = (name: string, extra: Partial<McpServer> = {}) =>
  ({ name, url: 'https://mcp.example.com/', auth: { kind: McpAuthKind.NONE }, enabled: true, ...extra }) as McpServer;

async function code(work: Promise<unknown>): Promise<Code | undefined> {
  try {
    await work;
    return undefined;
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

function suite(open: () => Promise<{ records: RecordStore; close(): Promise<void> }>) {
  let store: { records: RecordStore; close(): Promise<void> };
  let c: Clients;
  let clock = Date.UTC(2026, 2, 1);
  const suffix = randomUUID().slice(0, 6);

  beforeAll(async () => {
    store = await open();
    c = clientsOf(store.records, () => clock);
  }, 120_000);
  afterAll(async () => store?.close());

  it('keeps a server to its organization, shares a shared one, and moves the version with each change', async () => {
    const start = await c.registry.getGatewayRegistry({ knownVersion: 0n });
    const own = (await c.servers.createMcpServer({ organizationId: 'org_a', server: plain(`own-${suffix}`), createdBy: 'usr_1' })).server!;
    expect(own).toMatchObject({ organizationId: 'org_a', shared: false, mcpPath: 'mcp', etag: '1' });
    const shared = (await c.servers.createMcpServer({ organizationId: 'org_op', server: plain(`shared-${suffix}`, { shared: true }) }))
      .server!;
    const listB = await c.servers.listMcpServers({ organizationId: 'org_b' });
    expect(listB.servers.map((s) => s.name)).toContain(shared.name);
    expect(listB.servers.map((s) => s.name)).not.toContain(own.name);
    expect(await code(c.servers.getMcpServer({ organizationId: 'org_b', serverId: own.serverId }))).toBe(Code.NotFound);
    expect((await c.servers.getMcpServer({ organizationId: 'org_b', serverId: shared.serverId })).server!.name).toBe(shared.name);
    expect(await code(c.servers.deleteMcpServer({ organizationId: 'org_b', serverId: shared.serverId }))).toBe(Code.PermissionDenied);
    expect(await code(c.servers.updateMcpServer({ organizationId: 'org_b', serverId: own.serverId, server: plain(own.name) }))).toBe(
      Code.NotFound,
    );

    const snapshot = await c.registry.getGatewayRegistry({ knownVersion: 0n });
    expect(snapshot.version).toBe(start.version + 2n);
    expect(snapshot.servers.map((s) => s.name)).toEqual(expect.arrayContaining([own.name, shared.name]));
    const same = await c.registry.getGatewayRegistry({ knownVersion: snapshot.version });
    expect(same).toMatchObject({ changed: false, servers: [] });

    clock += 1_000;
    const updated = await c.servers.updateMcpServer({
      organizationId: 'org_a',
      serverId: own.serverId,
      etag: '1',
      server: plain(own.name, { enabled: false, toolPolicy: { allow: ['echo', 'read_*'], deny: ['echo'] } as never }),
    });
    expect(updated.server).toMatchObject({ enabled: false, etag: '2', toolPolicy: { allow: ['echo', 'read_*'], deny: ['echo'] } });
    expect(
      await code(c.servers.updateMcpServer({ organizationId: 'org_a', serverId: own.serverId, etag: '1', server: plain(own.name) })),
    ).toBe(Code.FailedPrecondition);
    expect(
      await code(c.servers.updateMcpServer({ organizationId: 'org_a', serverId: own.serverId, server: plain(`renamed-${suffix}`) })),
    ).toBe(Code.InvalidArgument);
    const moved = await c.registry.getGatewayRegistry({ knownVersion: snapshot.version });
    expect(moved).toMatchObject({ changed: true, version: snapshot.version + 1n });
    await c.servers.deleteMcpServer({ organizationId: 'org_a', serverId: own.serverId });
    const after = await c.registry.getGatewayRegistry({ knownVersion: moved.version });
    expect(after.servers.map((s) => s.name)).not.toContain(own.name);
  });

  it('refuses a taken, reserved or malformed name and incomplete settings', async () => {
    await c.servers.createMcpServer({ organizationId: 'org_a', server: plain(`taken-${suffix}`) });
    expect(await code(c.servers.createMcpServer({ organizationId: 'org_b', server: plain(`taken-${suffix}`) }))).toBe(Code.AlreadyExists);
    for (const server of [
      plain('health'),
      plain('a/b'),
      plain(`x-${suffix}`, { url: 'ftp://example.com' }),
      plain(`x-${suffix}`, { url: 'https://user:pw@example.com' }),
      plain(`x-${suffix}`, { mcpPath: '../admin' }),
      plain(`x-${suffix}`, { auth: { kind: McpAuthKind.UNSPECIFIED } as never }),
      plain(`x-${suffix}`, { auth: { kind: McpAuthKind.EXTERNAL, authorizationServer: '' } as never }),
      plain(`x-${suffix}`, { auth: { kind: McpAuthKind.UPSTREAM_OAUTH, upstreamOauth: { clientId: 'c' } } as never }),
      plain(`x-${suffix}`, {
        auth: {
          kind: McpAuthKind.UPSTREAM_OAUTH,
          upstreamOauth: {
            issuer: 'https://idp.example',
            clientId: 'c',
            tokenEndpointAuthMethod: 'client_secret_basic',
            sealedClientSecret: 'plain',
          },
        } as never,
      }),
      plain(`x-${suffix}`, { toolPolicy: { allow: ['has space'], deny: [] } as never }),
    ]) {
      expect(await code(c.servers.createMcpServer({ organizationId: 'org_a', server })), JSON.stringify(server)).toBe(Code.InvalidArgument);
    }
  });

  it('times a sealed secret when it changes and keeps the time while it does not', async () => {
    const upstream = (secret: string) => ({
      kind: McpAuthKind.UPSTREAM_OAUTH,
      upstreamOauth: {
        issuer: 'https://idp.example',
        clientId: 'gw',
        tokenEndpointAuthMethod: 'client_secret_basic',
        sealedClientSecret: secret,
      },
    });
    const created = (
      await c.servers.createMcpServer({
        organizationId: 'org_a',
        server: plain(`oauth-${suffix}`, { auth: upstream('kek1.a.b.c.d') as never }),
      })
    ).server!;
    const setAt = created.auth!.upstreamOauth!.clientSecretSetTime;
    expect(setAt).toBeDefined();
    clock += 60_000;
    const same = await c.servers.updateMcpServer({
      organizationId: 'org_a',
      serverId: created.serverId,
      server: plain(created.name, { auth: upstream('kek1.a.b.c.d') as never, description: 'same secret' }),
    });
    expect(same.server!.auth!.upstreamOauth!.clientSecretSetTime).toEqual(setAt);
    const changed = await c.servers.updateMcpServer({
      organizationId: 'org_a',
      serverId: created.serverId,
      server: plain(created.name, { auth: upstream('kek1.e.f.g.h') as never }),
    });
    expect(changed.server!.auth!.upstreamOauth!.clientSecretSetTime!.seconds).toBeGreaterThan(setAt!.seconds);
  });

  it('stores gateway keys as hashes, keeps the old secret through the overlap, and revokes both', async () => {
    const { key, secret } = await c.keys.createGatewayKey({ name: 'deploy bot', createdBy: 'usr_op' });
    expect(secret).toMatch(/^mgk_gk[A-Za-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    let digest = (await c.registry.getGatewayRegistry({ knownVersion: 0n })).keys.find((k) => k.keyId === key!.keyId)!;
    expect(digest.secretSha256).toBe(sha(secret));
    expect(JSON.stringify((await c.keys.listGatewayKeys({})).keys.map((k) => k.prefix))).not.toContain(secret.slice(20));
    expect((await c.keys.listGatewayKeys({})).keys.find((k) => k.keyId === key!.keyId)!.prefix).toBe(secret.slice(0, 14));

    const rotated = await c.keys.rotateGatewayKey({ keyId: key!.keyId, overlapSeconds: 600 });
    digest = (await c.registry.getGatewayRegistry({ knownVersion: 0n })).keys.find((k) => k.keyId === key!.keyId)!;
    expect(digest).toMatchObject({ secretSha256: sha(rotated.secret), previousSecretSha256: sha(secret) });
    expect(rotated.key!.previousExpireTime).toBeDefined();
    clock += 601_000;
    digest = (await c.registry.getGatewayRegistry({ knownVersion: 0n })).keys.find((k) => k.keyId === key!.keyId)!;
    expect(digest.previousSecretSha256).toBe('');

    expect(await code(c.keys.rotateGatewayKey({ keyId: key!.keyId, overlapSeconds: 8 * 24 * 3600 }))).toBe(Code.InvalidArgument);
    await c.keys.revokeGatewayKey({ keyId: key!.keyId });
    expect((await c.registry.getGatewayRegistry({ knownVersion: 0n })).keys.map((k) => k.keyId)).not.toContain(key!.keyId);
    expect(await code(c.keys.revokeGatewayKey({ keyId: key!.keyId }))).toBe(Code.NotFound);
    expect(await code(c.keys.createGatewayKey({ name: ' ' }))).toBe(Code.InvalidArgument);
  });
}

describe('the gateway registry on the embedded store', () => {
  suite(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-registry-'));
    const records = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite') });
    return {
      records,
      async close() {
        await records.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

describe.runIf(shouldRunMongoSuite('the gateway registry on MongoDB'))('the gateway registry on MongoDB', () => {
  let server: MongoWireServer;
  suite(async () => {
    server = await startMongoWireServer();
    const records = await createMongoRecordStore({ url: server.url, database: `registry_${randomUUID().slice(0, 8)}` });
    return {
      records,
      async close() {
        await records.close();
        await server.stop();
      },
    };
  });
});
