// Secrets the authorization server keeps in the records store (its private signing keys, cookie
// keys, confidential clients' secrets) are sealed under the key-encryption key: the database file
// (and its WAL), or a MongoDB dump, alone does not yield them. Rotation of the key-encryption key,
// the migration of records an earlier version wrote in clear, and a wrong key at start.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { collectionName, openClientRecord } from '../../edge/oauth/adapter.ts';
import { loadAuthKeys } from '../../edge/oauth/keys.ts';
import type { MailRecord } from '../../edge/mail/queue.ts';
import { createKeyEncryption, KeyEncryptionError } from '../../services/common/key-encryption.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { obtainAccessToken, startOAuthTestPlatform, tokenRequest } from '../support/oauth-client.ts';
import { writeKeyEncryptionKey } from '../support/key-encryption-file.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { testEnv, type TestPlatform } from '../support/platform.ts';
import { tempDirPerTest } from '../support/temp-dirs.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tempDir = tempDirPerTest('mindgate-kek-');

/** Every secret the platform keeps in its records store, opened through the platform's own code. */
async function storedSecrets(platform: TestPlatform): Promise<string[]> {
  const { ctx } = platform;
  const keys = await loadAuthKeys(ctx.config.auth, ctx.stores.records, ctx.keyEncryption);
  const secrets: string[] = [...keys.cookieKeys];
  for (const jwk of keys.signing.keys) secrets.push(...(['d', 'p', 'q', 'dp', 'dq', 'qi'] as const).map((m) => jwk[m] as string));
  const clients = await ctx.stores.records.collection<{ _id: string; payload: string }>(collectionName('Client')).find({}, { limit: 1000 });
  for (const doc of clients) {
    const secret = openClientRecord(ctx.keyEncryption, doc._id, doc.payload).payload.client_secret;
    if (typeof secret === 'string') secrets.push(secret);
  }
  return secrets;
}

/** What a user does that stores a secret: issue a confidential client (registration issues only public ones). */
async function createClients(platform: TestPlatform): Promise<{ id: string; secret: string }> {
  const { api } = platform.ctx.config.publicUrls;
  const user = await obtainAccessToken(platform, { resource: api });
  const res = await fetch(`${api}/organizations/${user.organizationId}/confidential-clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'backend' }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { client: { client_id: string }; client_secret: string };
  return { id: body.client.client_id, secret: body.client_secret };
}

async function clientCredentials(platform: TestPlatform, client: { id: string; secret: string }): Promise<number> {
  const { api, auth } = platform.ctx.config.publicUrls;
  return (await tokenRequest(auth, { grant_type: 'client_credentials', resource: api }, client)).status;
}

function expectNoneInClear(dump: string, secrets: string[]) {
  // One cookie key, six private RSA members, the confidential client's and the gateway client's secrets.
  expect(secrets.length).toBeGreaterThanOrEqual(9);
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThanOrEqual(16);
    expect(dump.includes(secret), 'a stored secret is in clear').toBe(false);
  }
  // The shapes of key material in clear: a JWK private member, a PEM block, a client secret.
  expect(dump).not.toMatch(/"d"\s*:\s*"/);
  expect(dump).not.toContain('-----BEGIN');
  expect(dump).not.toMatch(/"client_secret"\s*:\s*"/);
}

function sqliteBytes(dataDir: string): string {
  return ['records.sqlite', 'records.sqlite-wal']
    .map((name) => path.join(dataDir, name))
    .filter((file) => fs.existsSync(file))
    .map((file) => fs.readFileSync(file).toString('latin1'))
    .join('\n');
}

describe('secrets in the embedded records store', () => {
  it('records.sqlite and its WAL hold no private key, cookie key or client secret in clear', async () => {
    const dataDir = tempDir();
    const platform = await startOAuthTestPlatform({ DATA_DIR: dataDir });
    try {
      const client = await createClients(platform);
      expect(await clientCredentials(platform, client)).toBe(200);
      const secrets = await storedSecrets(platform);
      expect(secrets).toContain(client.secret);
      expect(fs.statSync(path.join(dataDir, 'records.sqlite-wal')).size).toBeGreaterThan(0);
      expectNoneInClear(sqliteBytes(dataDir), secrets);
    } finally {
      await platform.stop();
    }
  });
});

describe.runIf(shouldRunMongoSuite('secrets in MongoDB'))('secrets in MongoDB', () => {
  let mongo: MongoWireServer;
  afterAll(async () => mongo?.stop());

  it('a dump of every collection holds no private key, cookie key or client secret in clear', async () => {
    mongo = await startMongoWireServer();
    const database = `kek_${randomBytes(4).toString('hex')}`;
    const platform = await startOAuthTestPlatform({ DATA_DIR: tempDir(), MONGODB_URL: mongo.url, MONGODB_DATABASE: database });
    const client = new MongoClient(mongo.url);
    try {
      const app = await createClients(platform);
      expect(await clientCredentials(platform, app)).toBe(200);
      const secrets = await storedSecrets(platform);
      const db = client.db(database);
      const dump: string[] = [];
      for (const { name } of await db.listCollections().toArray()) {
        dump.push(JSON.stringify(await db.collection(name).find({}).toArray()));
      }
      expect(dump.join('\n')).toContain('client_secret_sealed');
      expectNoneInClear(dump.join('\n'), secrets);
    } finally {
      await client.close();
      await platform.stop();
    }
  });
});

describe('the key-encryption key', () => {
  it('seals with the first key, opens with any configured one, and refuses an envelope moved to another record or altered', () => {
    const old = createKeyEncryption(['old-key-encryption-key-0123456789abcdef']);
    const kek = createKeyEncryption(['new-key-encryption-key-0123456789abcdef', 'old-key-encryption-key-0123456789abcdef']);
    const sealed = old.seal('the secret', 'c/1');
    expect(sealed).toMatch(new RegExp(`^kek1\\.${old.keyId}\\.`));
    expect(sealed).not.toContain('the secret');
    expect(kek.open(sealed, 'c/1')).toBe('the secret');
    expect(kek.isStale(sealed)).toBe(true);
    expect(kek.isStale(kek.seal('x', 'c/1'))).toBe(false);
    expect(() => kek.open(sealed, 'c/2')).toThrow(/c\/2 does not decrypt .*altered or copied from another record/);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => kek.open(parts.join('.'), 'c/1')).toThrow(KeyEncryptionError);
    expect(() => kek.open('plain text', 'c/1')).toThrow('c/1 is not an encrypted value');
    expect(() => createKeyEncryption(['another-key-0123456789abcdef0123456']).open(sealed, 'c/1')).toThrow(`of id ${old.keyId}`);
  });

  it('rotates: the previous key opens, everything is sealed again under the new one, and the old key alone then fails', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const a = writeKeyEncryptionKey(dir, 'kek-a');
    const b = writeKeyEncryptionKey(dir, 'kek-b');
    const logs: string[] = [];
    const start = (env: Record<string, string>) => startOAuthTestPlatform({ DATA_DIR: dataDir, ...env }, { logs });
    /** What the last start of the edge logged about sealing: the key id in use and how many it sealed again. */
    const sealing = () => {
      const line = logs
        .map((l) => JSON.parse(l) as { sealedBy?: string; keyId?: string; resealed?: number })
        .findLast((l) => l.sealedBy === 'edge');
      return { keyId: line?.keyId, resealed: line?.resealed };
    };

    const first = await start({ KEY_ENCRYPTION_KEY_FILE: a.file });
    const client = await createClients(first);
    const jwks = await (await fetch(`${first.ctx.config.publicUrls.auth}/jwks`)).json();
    // The edge's short-lived sealed records: an answer kept for Idempotency-Key replays (made
    // with an API key, a caller that is the same after the restarts) and a message waiting in
    // the mail queue.
    const caller = await apiKeyCaller(first);
    const kept = await idempotentCreate(first.ctx.config.publicUrls.api, caller);
    expect(kept.status, JSON.stringify(kept.body)).toBe(201);
    await first.stop();
    await queueMail(dataDir, fs.readFileSync(a.file, 'utf8').trim());

    expect(sealing()).toEqual({ keyId: a.id, resealed: 0 });
    const rotating = await start({ KEY_ENCRYPTION_KEY_FILE: b.file, KEY_ENCRYPTION_KEY_PREVIOUS_FILE: a.file });
    try {
      // The signing and cookie keys; the confidential client, the gateway's client, the
      // dashboard's client, and the two public clients that signed users in (no secret, but marked
      // with the key they were written under); the kept answer and the queued message.
      expect(sealing()).toEqual({ keyId: b.id, resealed: 9 });
      expect(await (await fetch(`${rotating.ctx.config.publicUrls.auth}/jwks`)).json()).toEqual(jwks);
      expect(await clientCredentials(rotating, client)).toBe(200);
    } finally {
      await rotating.stop();
    }
    const envelopes = await storedEnvelopes(dataDir);
    expect(envelopes.length).toBeGreaterThanOrEqual(4);
    expect(new Set(envelopes.map((e) => e.split('.')[1]))).toEqual(new Set([b.id]));

    const rotated = await start({ KEY_ENCRYPTION_KEY_FILE: b.file });
    try {
      expect(sealing()).toEqual({ keyId: b.id, resealed: 0 });
      expect(await (await fetch(`${rotated.ctx.config.publicUrls.auth}/jwks`)).json()).toEqual(jwks);
      expect(await clientCredentials(rotated, client)).toBe(200);
      const replayed = await idempotentCreate(rotated.ctx.config.publicUrls.api, caller);
      expect(replayed.status, JSON.stringify(replayed.body)).toBe(201);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.body).toEqual(kept.body);
      const queued = await rotated.ctx.stores.records.collection<MailRecord>('mail_queue').get(QUEUED_MAIL);
      expect(queued!.sealedText!.split('.')[1]).toBe(b.id);
      expect(rotated.ctx.keyEncryption.open(queued!.sealedText!, `mail_queue/${QUEUED_MAIL}/text`)).toBe('the queued text');
    } finally {
      await rotated.stop();
    }

    const wrong = start({ KEY_ENCRYPTION_KEY_FILE: a.file });
    await expect(wrong).rejects.toThrow(KeyEncryptionError);
    await expect(wrong).rejects.toThrow(`was encrypted with the key-encryption key of id ${b.id}, but the configured key has id ${a.id}`);
  }, 120_000);

  it('a wrong key stops `node edge/main.ts` with one line naming the key ids, exit code 2 and no secret', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const right = writeKeyEncryptionKey(dir, 'right');
    const wrong = writeKeyEncryptionKey(dir, 'wrong');
    await (await startOAuthTestPlatform({ DATA_DIR: dataDir, KEY_ENCRYPTION_KEY_FILE: right.file })).stop();

    const result = spawnSync(process.execPath, ['edge/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, ...testEnv(dataDir), KEY_ENCRYPTION_KEY_FILE: wrong.file },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    const lines = result.stderr.split('\n').filter((line) => line && !line.startsWith('{'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^start refused: /);
    expect(lines[0]).toContain(`was encrypted with the key-encryption key of id ${right.id}, but the configured key has id ${wrong.id}`);
    for (const file of [right.file, wrong.file]) expect(result.stderr).not.toContain(fs.readFileSync(file, 'utf8').trim());
  }, 120_000);
});

describe('a configured key-encryption key file that does not exist', () => {
  it('stops the start naming the file, and generates nothing in its place', async () => {
    const dir = tempDir();
    const missing = path.join(dir, 'mounted', 'key-encryption-key');
    await expect(startOAuthTestPlatform({ DATA_DIR: path.join(dir, 'data'), KEY_ENCRYPTION_KEY_FILE: missing })).rejects.toThrow(
      `${missing}: does not exist`,
    );
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('stops `node edge/main.ts` with one line naming the file and exit code 2', () => {
    const dir = tempDir();
    const missing = path.join(dir, 'mounted', 'key-encryption-key');
    const result = spawnSync(process.execPath, ['edge/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, ...testEnv(path.join(dir, 'data')), KEY_ENCRYPTION_KEY_FILE: missing },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`start refused: ${missing}: does not exist\n`);
  }, 120_000);
});

describe('records an earlier version wrote in clear', () => {
  it('are read, sealed at start, and leave no secret in clear in the database file', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const first = await startOAuthTestPlatform({ DATA_DIR: dataDir });
    const client = await createClients(first);
    const jwks = await (await fetch(`${first.ctx.config.publicUrls.auth}/jwks`)).json();
    const secrets = await storedSecrets(first);
    await first.stop();
    await writeInClear(dataDir);
    expect(sqliteBytes(dataDir)).toContain(client.secret);

    const upgraded = await startOAuthTestPlatform({ DATA_DIR: dataDir });
    try {
      expect(await (await fetch(`${upgraded.ctx.config.publicUrls.auth}/jwks`)).json()).toEqual(jwks);
      expect(await clientCredentials(upgraded, client)).toBe(200);
    } finally {
      await upgraded.stop();
    }
    expect((await storedEnvelopes(dataDir)).length).toBeGreaterThanOrEqual(4);
    expectNoneInClear(sqliteBytes(dataDir), secrets);
  }, 120_000);
});

type KeysDoc = { _id: string; sealed?: string; value?: unknown };

/** An API key of a new user's organization. */
async function apiKeyCaller(platform: TestPlatform): Promise<{ key: string; organizationId: string }> {
  const { api } = platform.ctx.config.publicUrls;
  const user = await obtainAccessToken(platform, { resource: api });
  const res = await fetch(`${api}/organizations/${user.organizationId}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'rotation', scopes: ['admin'] }),
  });
  expect(res.status).toBe(201);
  return { key: ((await res.json()) as { secret: string }).secret, organizationId: user.organizationId };
}

/** Creates a team with an Idempotency-Key: the answer is kept, sealed (every kept answer is: some hold secrets). */
async function idempotentCreate(api: string, caller: { key: string; organizationId: string }) {
  const res = await fetch(`${api}/organizations/${caller.organizationId}/teams`, {
    method: 'POST',
    headers: { 'x-api-key': caller.key, 'content-type': 'application/json', 'idempotency-key': 'kek-rotation' },
    body: JSON.stringify({ name: 'Kept through the rotation' }),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const QUEUED_MAIL = 'mail_queued_for_rotation';

/** A message waiting in the mail queue (its next attempt far ahead), sealed under `kekText`, in a stopped platform's store. */
function queueMail(dataDir: string, kekText: string): Promise<void> {
  const kek = createKeyEncryption([kekText]);
  return withStore(dataDir, async (store) => {
    await store.collection<MailRecord>('mail_queue').put({
      _id: QUEUED_MAIL,
      purpose: 'invitation',
      to: 'someone@example.com',
      subject: 'Waiting',
      sealedText: kek.seal('the queued text', `mail_queue/${QUEUED_MAIL}/text`),
      status: 'queued',
      attempts: 1,
      dueAt: Date.now() + 86_400_000,
      createdAt: Date.now(),
      version: 2,
    });
  });
}
type ClientDoc = { _id: string; payload: string; sealedWith?: string };

async function withStore<T>(dataDir: string, use: (store: ReturnType<typeof createSqliteRecordStore>) => Promise<T>): Promise<T> {
  const store = createSqliteRecordStore({ path: path.join(dataDir, 'records.sqlite'), sweepIntervalMs: 0 });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** The envelopes in a stopped platform's records; fails on a secret stored in clear. */
function storedEnvelopes(dataDir: string): Promise<string[]> {
  return withStore(dataDir, async (store) => {
    const keys = await store.collection<KeysDoc>('auth_keys').find({}, { limit: 100 });
    const clients = await store.collection<ClientDoc>(collectionName('Client')).find({}, { limit: 1000 });
    const payloads = clients.map((c) => JSON.parse(c.payload) as Record<string, unknown>);
    expect(keys.filter((k) => k.value !== undefined)).toEqual([]);
    expect(payloads.filter((p) => p.client_secret !== undefined)).toEqual([]);
    return [...keys.map((k) => k.sealed), ...payloads.map((p) => p.client_secret_sealed)].filter((e): e is string => typeof e === 'string');
  });
}

/**
 * Rewrites a stopped platform's stored secrets as versions before the key-encryption key kept
 * them: signing and cookie keys as `value`, client secrets as `client_secret` in the payload.
 */
function writeInClear(dataDir: string): Promise<void> {
  const kek = createKeyEncryption([fs.readFileSync(path.join(dataDir, 'key-encryption-key'), 'utf8').trim()]);
  return withStore(dataDir, async (store) => {
    const keys = store.collection<KeysDoc>('auth_keys');
    for (const doc of await keys.find({}, { limit: 100 })) {
      await keys.put({ _id: doc._id, value: JSON.parse(kek.open(doc.sealed!, `auth_keys/${doc._id}`)) });
    }
    const clients = store.collection<ClientDoc>(collectionName('Client'));
    for (const { sealedWith: _, ...doc } of await clients.find({}, { limit: 1000 })) {
      await clients.put({ ...doc, payload: JSON.stringify(openClientRecord(kek, doc._id, doc.payload).payload) });
    }
  });
}
