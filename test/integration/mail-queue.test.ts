// The durable mail queue (edge/mail/queue.ts) against a real SMTP server (smtp-server) and the
// embedded records store: two replicas working the same queue deliver each message once; a
// message that cannot be delivered is retried with backoff, then given up with its last error;
// the text is sealed at rest and dropped once sent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMailConfig } from '../../edge/mail/config.ts';
import { createMailQueue, type MailRecord } from '../../edge/mail/queue.ts';
import { createMailTransport } from '../../edge/mail/transport.ts';
import { createKeyEncryption } from '../../services/common/key-encryption.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { reservePorts } from '../support/ports.ts';
import { createSmtpInbox, type SmtpListener } from '../support/smtp-inbox.ts';

let dir: string;
let store: RecordStore;
let smtp: SmtpListener;
let port: number;
const inbox = createSmtpInbox();
let clock = Date.now();
const kek = createKeyEncryption(['k'.repeat(40)]);
const logger = createLogger({ level: 'silent' });

function queueFor(smtpPort: number, env: Record<string, string> = {}) {
  const config = readMailConfig({ SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_RETRY_SECONDS: '1', ...env });
  return createMailQueue({
    records: store,
    kek,
    transport: createMailTransport({ smtpUrl: config.smtpUrl, from: config.from, dataDir: dir }),
    config,
    logger,
    now: () => clock,
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-mail-'));
  smtp = await inbox.listen();
  port = smtp.port;
});

afterAll(async () => {
  await smtp?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('on the embedded store', () => {
  beforeAll(() => {
    store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), now: () => clock });
  });
  afterAll(() => store?.close());
  queueCases();
});

describe.runIf(shouldRunMongoSuite('the mail queue on MongoDB'))('on the MongoDB-wire server', () => {
  let mongo: MongoWireServer | undefined;
  beforeAll(async () => {
    mongo = await startMongoWireServer();
    store = await createMongoRecordStore({ url: mongo.url, database: `mail_${Date.now()}`, now: () => clock });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await mongo?.stop();
  });
  queueCases();
});

function queueCases(): void {
  // Addresses of their own per store, since both suites share the SMTP server's inbox.
  const tag = Math.random().toString(36).slice(2, 8);
  it('delivers at once, seals the text at rest and drops it once sent', async () => {
    const queue = queueFor(port);
    const sent = await queue.send({ purpose: 'test', to: `a-${tag}@example.test`, subject: 'Hello', text: 'secret link https://x/t=abc' });
    expect(sent.status).toBe('sent');
    expect(inbox.mails.filter((m) => m.to.includes(`a-${tag}@example.test`))).toHaveLength(1);
    const record = await store.collection<MailRecord>('mail_queue').get(sent.id);
    expect(record).toMatchObject({ status: 'sent', attempts: 1, to: `a-${tag}@example.test` });
    expect(record!.sealedText).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain('secret link');
  });

  it('retries a message the server did not take, with backoff; two replicas deliver it once', async () => {
    const [downPort] = await reservePorts(1);
    const replicaA = queueFor(downPort);
    const replicaB = queueFor(downPort);
    const first = await replicaA.send({ purpose: 'test', to: `b-${tag}@example.test`, subject: 'Later', text: 'body b' });
    expect(first.status).toBe('queued');
    const mail = store.collection<MailRecord>('mail_queue');
    const queued = await mail.get(first.id);
    expect(queued).toMatchObject({ status: 'queued', attempts: 1 });
    expect(queued!.lastError).toMatch(/ECONNREFUSED/);
    expect(queued!.sealedText).not.toContain('body b');
    // Not due before its backoff.
    expect(await replicaB.deliverDue()).toBe(0);
    const server = await inbox.listen(downPort);
    try {
      clock += 1_500;
      const delivered = await Promise.all([replicaA.deliverDue(), replicaB.deliverDue()]);
      expect(delivered.reduce((a, b) => a + b, 0)).toBe(1);
      expect(inbox.mails.filter((m) => m.to.includes(`b-${tag}@example.test`))).toHaveLength(1);
      expect(await replicaA.status(first.id)).toMatchObject({ status: 'sent', attempts: 2 });
      clock += 60_000;
      expect(await replicaA.deliverDue()).toBe(0);
      expect(inbox.mails.filter((m) => m.to.includes(`b-${tag}@example.test`))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('takes over a delivery whose replica died once its lease expires', async () => {
    const queue = queueFor(port);
    const mail = store.collection<MailRecord>('mail_queue');
    // What a replica that died after claiming leaves behind: a message "sending" under its lease.
    await mail.put({
      _id: 'mail_orphan',
      purpose: 'test',
      to: `c-${tag}@example.test`,
      subject: 'Orphan',
      sealedText: kek.seal('body c', 'mail_queue/mail_orphan/text'),
      status: 'sending',
      attempts: 1,
      dueAt: clock + 60_000,
      leaseOwner: 'dead-replica',
      createdAt: clock,
      version: 1,
    });
    expect(await queue.deliverDue()).toBe(0);
    clock += 61_000;
    expect(await queue.deliverDue()).toBe(1);
    expect(await queue.status('mail_orphan')).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('gives a message up after MAIL_MAX_ATTEMPTS, keeping its status and last error', async () => {
    const [downPort] = await reservePorts(1);
    const queue = queueFor(downPort, { MAIL_MAX_ATTEMPTS: '2' });
    const { id, status } = await queue.send({ purpose: 'test', to: `d-${tag}@example.test`, subject: 'Never', text: 'body d' });
    expect(status).toBe('queued');
    clock += 1_500;
    expect(await queue.deliverDue()).toBe(0);
    const record = await store.collection<MailRecord>('mail_queue').get(id);
    expect(record).toMatchObject({ status: 'failed', attempts: 2 });
    expect(record!.lastError).toMatch(/ECONNREFUSED/);
    expect(record!.sealedText).toBeUndefined();
    expect(record!.dueAt).toBeUndefined();
  });
}
