// Rotating the key-encryption key reaches the agents service's secrets too: webhook endpoints'
// signing secrets, alert sources' secrets and the upstream client secrets of MCP servers are
// sealed again under the new key when the service starts (as the edge does with its own), so the
// previous key can be removed. Read back from the database itself, and used: a delivery verifies
// with the endpoint's secrets, an alert source accepts its secret, the gateway opens the server's
// secret. Two agents processes starting at once on one MongoDB database seal each record once.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertFormat } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { sealClientSecret } from '../../edge/api/mcp-server-json.ts';
import { managedServerConfig } from '../../edge/gateway/managed-servers.ts';
import { sealedEndpointSecrets } from '../../services/agents/sealed-records.ts';
import type { EndpointRecord } from '../../services/agents/webhooks/records.ts';
import { createKeyEncryption } from '../../services/common/key-encryption.ts';
import { resealRecords } from '../../services/common/key-encryption-reseal.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { alertmanagerPayload } from '../support/alertmanager.ts';
import { writeKeyEncryptionKey } from '../support/key-encryption-file.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { tempDirPerTest } from '../support/temp-dirs.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const ORG = 'org_kekrotation';
const TOKEN = randomBytes(24).toString('base64url');
const tempDir = tempDirPerTest('mindgate-agents-kek-');

/** The secrets a test keeps to use them after the rotation. */
interface Created {
  endpointId: string;
  /** The endpoint's current secret, and the one its rotation left signing through the overlap. */
  endpointSecrets: string[];
  sourceId: string;
  sourceSecret: string;
  serverName: string;
  upstreamSecret: string;
}

/** One of each record with a sealed secret, through the services' own operations. */
async function createSecrets(platform: TestPlatform, receiverUrl: string, n = 0): Promise<Created> {
  const { webhooks, alerts, mcpServers } = platform.ctx.clients;
  const endpoint = await webhooks.createWebhookEndpoint({
    organizationId: ORG,
    url: receiverUrl,
    eventTypes: ['webhook.test'],
    createdBy: 'usr_op',
  });
  const endpointId = endpoint.endpoint!.endpointId;
  const rotated = await webhooks.rotateWebhookEndpointSecret({ organizationId: ORG, endpointId, overlapSeconds: 86_400 });
  const source = await alerts.createAlertSource({
    organizationId: ORG,
    name: `Alertmanager ${n}`,
    format: AlertFormat.ALERTMANAGER,
    createdBy: 'usr_op',
  });
  const serverName = `upstream-${n}-${randomBytes(3).toString('hex')}`;
  const upstreamSecret = `upstream-secret-${randomBytes(12).toString('hex')}`;
  await mcpServers.createMcpServer({
    organizationId: ORG,
    createdBy: 'usr_op',
    server: {
      name: serverName,
      url: 'https://mcp.example.com/',
      enabled: true,
      auth: {
        kind: McpAuthKind.UPSTREAM_OAUTH,
        upstreamOauth: {
          issuer: 'https://idp.example.com',
          clientId: 'gateway',
          tokenEndpointAuthMethod: 'client_secret_basic',
          sealedClientSecret: sealClientSecret(platform.ctx.keyEncryption, serverName, upstreamSecret),
        },
      },
    },
  });
  return {
    endpointId,
    endpointSecrets: [rotated.secret, endpoint.secret],
    sourceId: source.source!.sourceId,
    sourceSecret: source.secret,
    serverName,
    upstreamSecret,
  };
}

const alertPayload = () =>
  alertmanagerPayload({
    groupKey: '{}:{}',
    alerts: [
      {
        fingerprint: randomBytes(8).toString('hex'),
        labels: { alertname: 'KekRotated', severity: 'info' },
        startsAt: '2026-06-01T07:00:00.000Z',
      },
    ],
  });

/** Uses every secret of `created` through the running platform; fails when one does not open or is wrong. */
async function expectSecretsWork(platform: TestPlatform, receiver: WebhookReceiver, created: Created): Promise<void> {
  const { webhooks, alerts, gatewayRegistry } = platform.ctx.clients;
  // Each of the endpoint's two secrets signs every delivery (the rotation's overlap): check each.
  for (const secret of created.endpointSecrets) {
    receiver.secrets = [secret];
    const { delivery } = await webhooks.sendTestEvent({ organizationId: ORG, endpointId: created.endpointId });
    const [received] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === delivery!.eventId);
    expect(received!.verifiedWith, 'the delivery verifies with the endpoint secret').toBe(0);
  }
  const accepted = await alerts.receiveAlerts({
    sourceId: created.sourceId,
    payload: alertPayload(),
    authorization: `Bearer ${created.sourceSecret}`,
  });
  expect(accepted.received).toBe(1);
  const wrong = alerts.receiveAlerts({ sourceId: created.sourceId, payload: alertPayload(), authorization: 'Bearer alsec_wrong' });
  await expect(wrong).rejects.toSatisfy((err) => ConnectError.from(err).code === Code.Unauthenticated);
  // The gateway's own path: the registry's record, its secret opened as the gateway serves it.
  const { servers } = await gatewayRegistry.getGatewayRegistry({ knownVersion: 0n });
  const server = servers.find((s) => s.name === created.serverName)!;
  const config = managedServerConfig(server, platform.ctx.keyEncryption);
  expect(config.auth).toMatchObject({ kind: 'facade', upstream: { clientSecret: created.upstreamSecret } });
}

type StoredServer = { auth: { upstream?: { sealedClientSecret?: string } } };

/** The key id of every envelope the agents service keeps, read from the stored records. */
function envelopeKeyIds(records: {
  endpoints: { secrets: { sealed: string }[] }[];
  sources: { sealed: string }[];
  servers: StoredServer[];
}): string[] {
  const envelopes = [
    ...records.endpoints.flatMap((e) => e.secrets.map((s) => s.sealed)),
    ...records.sources.map((s) => s.sealed),
    ...records.servers.map((s) => s.auth.upstream?.sealedClientSecret ?? ''),
  ];
  for (const e of envelopes) expect(e).toMatch(/^kek1\./);
  return envelopes.map((e) => e.split('.')[1]!);
}

/** The agents service's start line about sealing, from a platform's or a process's log. */
function agentsSealing(logs: Record<string, unknown>[]) {
  return logs.filter((l) => l.sealedBy === 'agents').map((l) => ({ keyId: l.keyId, resealed: l.resealed }));
}
const parsed = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('rotating the key-encryption key, for the agents service (embedded store)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => receiver?.close());

  it('seals its secrets again under the new key at start; they still work, and after the old key is gone', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const a = writeKeyEncryptionKey(dir, 'kek-a');
    const b = writeKeyEncryptionKey(dir, 'kek-b');
    const env = { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
    const logs: string[] = [];
    const start = (keys: Record<string, string>) => startTestPlatform({ ...env, ...keys }, { logs });

    const first = await start({ KEY_ENCRYPTION_KEY_FILE: a.file });
    const created = await createSecrets(first, receiver.url);
    await first.stop();
    expect(agentsSealing(parsed(logs))).toEqual([{ keyId: a.id, resealed: 0 }]);
    const before = await storedRecords(dataDir);
    expect(new Set(envelopeKeyIds(before))).toEqual(new Set([a.id]));

    logs.length = 0;
    const rotating = await start({ KEY_ENCRYPTION_KEY_FILE: b.file, KEY_ENCRYPTION_KEY_PREVIOUS_FILE: a.file });
    try {
      // One record each: the endpoint (both its secrets), the alert source, the MCP server.
      expect(agentsSealing(parsed(logs))).toEqual([{ keyId: b.id, resealed: 3 }]);
      await expectSecretsWork(rotating, receiver, created);
    } finally {
      await rotating.stop();
    }
    const after = await storedRecords(dataDir);
    expect(new Set(envelopeKeyIds(after))).toEqual(new Set([b.id]));
    // A new envelope, a moved version (a writer holding the old record must read it again), the rest kept.
    expect(after.endpoints[0]!.version).toBe(before.endpoints[0]!.version + 1);
    expect(after.sources[0]!.prefix).toBe(before.sources[0]!.prefix);

    logs.length = 0;
    const rotated = await start({ KEY_ENCRYPTION_KEY_FILE: b.file });
    try {
      expect(agentsSealing(parsed(logs))).toEqual([{ keyId: b.id, resealed: 0 }]);
      await expectSecretsWork(rotated, receiver, created);
    } finally {
      await rotated.stop();
    }
  }, 240_000);

  it('seals each record once when two replicas walk at once, and a writer holding the old record reads it again', async () => {
    const dir = tempDir();
    const [oldText, newText] = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
    const old = createKeyEncryption([oldText]);
    const kek = createKeyEncryption([newText, oldText]);
    // Two handles on one database file, as two processes have.
    const file = path.join(dir, 'records.sqlite');
    const stores = [
      createSqliteRecordStore({ path: file, sweepIntervalMs: 0 }),
      createSqliteRecordStore({ path: file, sweepIntervalMs: 0 }),
    ];
    try {
      const [mine, theirs] = stores.map((s) => s.collection<EndpointRecord>('webhook_endpoints'));
      const context = (id: string) => `webhook_endpoints/${id}/secret`;
      for (let i = 0; i < 40; i++) {
        const id = `whe_${String(i).padStart(3, '0')}`;
        await mine!.put(endpointRecord(id, [old.seal(`whsec_${i}`, context(id)), old.seal(`whsec_old_${i}`, context(id))]));
      }
      const held = (await theirs!.get('whe_007'))!;

      const counts = await Promise.all([mine, theirs].map((c) => resealRecords([sealedEndpointSecrets(c!, kek)])));
      expect(counts[0]! + counts[1]!).toBe(40);
      const stored = await mine!.find({}, { limit: 100 });
      expect(stored).toHaveLength(40);
      for (const [i, r] of stored.entries()) {
        // Written once (a second write would have moved the version again), under the new key, opening to the same secrets.
        expect(r.version).toBe(2);
        expect(r.secrets.map((s) => kek.isStale(s.sealed))).toEqual([false, false]);
        expect(r.secrets.map((s) => kek.open(s.sealed, context(r._id)))).toEqual([`whsec_${i}`, `whsec_old_${i}`]);
      }
      // An update that read the record before it was sealed again loses its compare-and-set.
      expect(await theirs!.put({ ...held, description: 'late', version: held.version + 1 }, { expect: { version: held.version } })).toBe(
        false,
      );
      expect(await resealRecords([sealedEndpointSecrets(mine!, kek)])).toBe(0);
    } finally {
      for (const s of stores) await s.close();
    }
  });
});

function endpointRecord(id: string, sealed: string[]): EndpointRecord {
  return {
    _id: id,
    organizationId: ORG,
    url: 'https://hooks.example.com/',
    eventTypes: ['*'],
    description: '',
    enabled: true,
    secrets: sealed.map((s) => ({ sealed: s, prefix: 'whsec_', createdAt: 1 })),
    createdBy: 'usr_op',
    createdAt: 1,
    updatedAt: 1,
    version: 1,
  };
}

async function storedRecords(dataDir: string) {
  const store = createSqliteRecordStore({ path: path.join(dataDir, 'records.sqlite'), sweepIntervalMs: 0 });
  try {
    const all = <T extends { _id: string }>(name: string) => store.collection<T>(name).find({}, { limit: 1000 });
    return {
      endpoints: await all<EndpointRecord>('webhook_endpoints'),
      sources: await all<{ _id: string; sealed: string; prefix: string; version: number }>('alert_sources'),
      servers: await all<StoredServer & { _id: string }>('mcp_servers'),
    };
  } finally {
    await store.close();
  }
}

describe.runIf(shouldRunMongoSuite('agents replicas sealing again'))('two agents replicas starting at once on MongoDB', () => {
  let mongo: MongoWireServer;
  let receiver: WebhookReceiver;
  const replicas: ServiceProcess[] = [];
  beforeAll(async () => {
    mongo = await startMongoWireServer();
    receiver = await startWebhookReceiver();
  }, 120_000);
  afterAll(async () => {
    for (const replica of replicas) await stopServiceProcess(replica);
    await receiver?.close();
    await mongo?.stop();
  });

  it('seal every record once between them; after the old key is removed everything opens', async () => {
    const dir = tempDir();
    const a = writeKeyEncryptionKey(dir, 'kek-a');
    const b = writeKeyEncryptionKey(dir, 'kek-b');
    const database = `kek_agents_${randomBytes(4).toString('hex')}`;
    const shared = { MONGODB_URL: mongo.url, MONGODB_DATABASE: database, INTERNAL_TOKEN: TOKEN, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };

    const first = await startTestPlatform({ ...shared, KEY_ENCRYPTION_KEY_FILE: a.file });
    const created: Created[] = [];
    try {
      for (let i = 0; i < 5; i++) created.push(await createSecrets(first, receiver.url, i));
    } finally {
      await first.stop();
    }

    const rotating = { ...shared, KEY_ENCRYPTION_KEY_FILE: b.file, KEY_ENCRYPTION_KEY_PREVIOUS_FILE: a.file, AGENTS_GRPC_PORT: '0' };
    const started = await Promise.all(
      [0, 1].map((i) => startServiceProcess('agents', { ...rotating, DATA_DIR: path.join(dir, `replica-${i}`) })),
    );
    replicas.push(...started);
    const lines = started.map((replica) => agentsSealing(replica.logs));
    for (const line of lines) expect(line).toEqual([{ keyId: b.id, resealed: expect.any(Number) }]);
    // Five of each record: every one sealed again by exactly one of the two.
    expect(lines.reduce((sum, [line]) => sum + (line!.resealed as number), 0)).toBe(15);
    for (const replica of started) await stopServiceProcess(replica);

    const client = new MongoClient(mongo.url);
    try {
      const db = client.db(database);
      const raw = <T>(name: string) => db.collection(name).find({}).toArray() as unknown as Promise<T[]>;
      const endpoints = await raw<EndpointRecord>('webhook_endpoints');
      const stored = {
        endpoints,
        sources: await raw<{ sealed: string }>('alert_sources'),
        servers: await raw<StoredServer>('mcp_servers'),
      };
      expect(envelopeKeyIds(stored)).toHaveLength(20);
      expect(new Set(envelopeKeyIds(stored))).toEqual(new Set([b.id]));
      // Created, rotated, sealed again: once.
      expect(endpoints.map((e) => e.version)).toEqual([3, 3, 3, 3, 3]);
    } finally {
      await client.close();
    }

    // A replica still on the old key alone refuses to start, naming the key the records need.
    const stale = startServiceProcess('agents', {
      ...shared,
      KEY_ENCRYPTION_KEY_FILE: a.file,
      AGENTS_GRPC_PORT: '0',
      DATA_DIR: path.join(dir, 'stale'),
    });
    await expect(stale).rejects.toThrow(`exited with 2: start refused: `);
    await expect(stale).rejects.toThrow(`was encrypted with the key-encryption key of id ${b.id}, but the configured key has id ${a.id}`);

    // The edge's rollout, with the previous key still named: its own secrets are sealed again, the
    // agents service's (in this process now) have nothing left to seal.
    const logs: string[] = [];
    const edge = await startTestPlatform(
      { ...shared, KEY_ENCRYPTION_KEY_FILE: b.file, KEY_ENCRYPTION_KEY_PREVIOUS_FILE: a.file },
      { logs },
    );
    await edge.stop();
    expect(agentsSealing(parsed(logs))).toEqual([{ keyId: b.id, resealed: 0 }]);

    logs.length = 0;
    const rotated = await startTestPlatform({ ...shared, KEY_ENCRYPTION_KEY_FILE: b.file }, { logs });
    try {
      expect(agentsSealing(parsed(logs))).toEqual([{ keyId: b.id, resealed: 0 }]);
      for (const c of created) await expectSecretsWork(rotated, receiver, c);
    } finally {
      await rotated.stop();
    }
  }, 300_000);
});
