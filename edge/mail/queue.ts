// The durable mail queue. Every message (verification links, invitations) is first written to the
// records collection `mail_queue`, its text sealed with the key-encryption key (the links in it are
// credentials), then delivered: at once by the replica that wrote it, and, when that fails, again
// later by whichever replica's worker claims it first.
//
// A claim is a compare-and-set on the record's version that moves `dueAt` a lease ahead, so
// exactly one replica delivers a message at a time, and a replica that dies mid-delivery leaves
// the lease to expire for another to take over. A failed attempt puts the message back with
// `dueAt` after a backoff that doubles (MAIL_RETRY_SECONDS, up to an hour); after
// MAIL_MAX_ATTEMPTS it is `failed`. Delivered and failed messages drop their text and are kept a
// while (7 and 30 days) with their status, attempts and last error, for operators.
//
// Delivery is at least once: should a replica die after the SMTP server took a message but before
// the record says so, the message is delivered again when the lease expires. Nothing here logs a
// message's text.
import { randomBytes, randomUUID } from 'node:crypto';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import { resealEnvelope, type SealedRecords } from '../../services/common/key-encryption-reseal.ts';
import type { Logger } from '../../services/common/log.ts';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import type { MailConfig } from './config.ts';
import type { MailMessage, MailTransport } from './transport.ts';

export type MailStatus = 'sending' | 'queued' | 'sent' | 'failed';

export interface MailRecord extends RecordDoc {
  /** What the message is for ("verification", "invitation"), for operators. */
  purpose: string;
  to: string;
  subject: string;
  /** The text, sealed; dropped once the message is sent or given up. */
  sealedText?: string;
  status: MailStatus;
  attempts: number;
  /** When the queue looks at the message next: its next attempt, or the end of a delivery's lease. */
  dueAt?: number;
  leaseOwner?: string;
  lastError?: string;
  createdAt: number;
  sentAt?: number;
  version: number;
}

export interface MailQueue {
  readonly transport: MailTransport['kind'];
  /**
   * Writes the message and tries to deliver it now: `sent`, or `queued` when that attempt failed
   * and a later one will retry. Throws only when the message could not be written at all.
   */
  send(message: MailMessage & { purpose: string }): Promise<{ id: string; status: 'sent' | 'queued' }>;
  /** The message's status, attempts and last error (never its text). */
  status(id: string): Promise<Pick<MailRecord, 'status' | 'attempts' | 'lastError' | 'purpose' | 'to'> | undefined>;
  /** One pass over the messages that are due; returns how many this replica delivered. */
  deliverDue(): Promise<number>;
  /** Runs deliverDue now and then every poll, until stop. */
  start(): void;
  stop(): Promise<void>;
}

export interface MailQueueOptions {
  records: RecordStore;
  kek: KeyEncryption;
  transport: MailTransport;
  config: MailConfig;
  logger: Logger;
  now: () => number;
}

/** Long enough for one delivery with the transport's timeouts (transport.ts). */
const LEASE_MS = 60_000;
const MAX_BACKOFF_MS = 3_600_000;
const SENT_KEPT_MS = 7 * 86_400_000;
const FAILED_KEPT_MS = 30 * 86_400_000;
const BATCH = 20;

const textContext = (id: string) => `mail_queue/${id}/text`;
const MAIL_COLLECTION = 'mail_queue';

/**
 * The messages not yet delivered, as the start seals their text again (services/common/
 * key-encryption-reseal.ts). A message a replica is delivering right now (its lease runs) is left
 * to it: moving its version would make a delivered message look undelivered, and be sent twice.
 */
export function sealedMailTexts(records: RecordStore, kek: KeyEncryption, now: () => number): SealedRecords<MailRecord> {
  return {
    collection: records.collection<MailRecord>(MAIL_COLLECTION),
    filter: { sealedText: { $exists: true } },
    reseal(doc) {
      const leased = doc.status === 'sending' && (doc.dueAt ?? 0) > now();
      if (doc.sealedText === undefined || leased || !kek.isStale(doc.sealedText)) return undefined;
      return { ...doc, sealedText: resealEnvelope(kek, doc.sealedText, textContext(doc._id)), version: doc.version + 1 };
    },
    expect: (doc) => ({ version: doc.version }),
  };
}

export function createMailQueue(options: MailQueueOptions): MailQueue {
  const { kek, transport, config, logger, now } = options;
  const messages = options.records.collection<MailRecord>(MAIL_COLLECTION, { indexes: [{ fields: ['dueAt'] }] });
  const replica = randomUUID();
  const attempt = (record: MailRecord) => deliver({ messages, kek, transport, config, logger, now }, record);
  let worker: { stop(): Promise<void> } | undefined;

  const queue: MailQueue = {
    transport: transport.kind,
    async send(message) {
      const id = `mail_${randomBytes(12).toString('hex')}`;
      const record: MailRecord = {
        _id: id,
        purpose: message.purpose,
        to: message.to,
        subject: message.subject,
        sealedText: kek.seal(message.text, textContext(id)),
        status: 'sending',
        attempts: 1,
        dueAt: now() + LEASE_MS,
        leaseOwner: replica,
        createdAt: now(),
        version: 1,
      };
      await messages.put(record, { expect: null });
      return { id, status: (await attempt(record)) ? 'sent' : 'queued' };
    },
    async status(id) {
      const r = await messages.get(id);
      return r && { status: r.status, attempts: r.attempts, lastError: r.lastError, purpose: r.purpose, to: r.to };
    },
    async deliverDue() {
      let delivered = 0;
      const due = await messages.find({ dueAt: { $lte: now() } }, { sort: { field: 'dueAt', direction: 'asc' }, limit: BATCH });
      for (const record of due) {
        const claimed = { ...record, status: 'sending' as const, attempts: record.attempts + 1, dueAt: now() + LEASE_MS };
        Object.assign(claimed, { leaseOwner: replica, version: record.version + 1 });
        if (!(await messages.put(claimed, { expect: { version: record.version } }))) continue;
        if (await attempt(claimed)) delivered += 1;
      }
      return delivered;
    },
    start() {
      worker ??= startWorker(queue, logger, Math.min(config.retrySeconds * 1000, 5_000));
    },
    async stop() {
      await worker?.stop();
      worker = undefined;
    },
  };
  return queue;
}

interface DeliverDeps {
  messages: RecordCollection<MailRecord>;
  kek: KeyEncryption;
  transport: MailTransport;
  config: MailConfig;
  logger: Logger;
  now: () => number;
}

/** Delivers a message this replica holds the lease of, and records how it went; true when delivered. */
async function deliver(deps: DeliverDeps, record: MailRecord): Promise<boolean> {
  const { messages, logger, now } = deps;
  const log = { mailId: record._id, purpose: record.purpose, attempt: record.attempts };
  const { sealedText: _text, dueAt: _due, leaseOwner: _owner, ...kept } = record;
  try {
    const text = deps.kek.open(record.sealedText ?? '', textContext(record._id));
    await deps.transport.deliver({ to: record.to, subject: record.subject, text });
  } catch (err) {
    const lastError = String((err as Error).message ?? err).slice(0, 500);
    const failed = record.attempts >= deps.config.maxAttempts;
    const delay = Math.min(deps.config.retrySeconds * 1000 * 2 ** (record.attempts - 1), MAX_BACKOFF_MS);
    const next: MailRecord = failed
      ? { ...kept, status: 'failed', lastError, version: record.version + 1, expiresAt: now() + FAILED_KEPT_MS }
      : { ...record, status: 'queued', lastError, dueAt: now() + delay, leaseOwner: undefined, version: record.version + 1 };
    await messages.put(next, { expect: { version: record.version } }).catch(() => false);
    if (failed) logger.error({ ...log, err: lastError }, `mail given up after ${record.attempts} attempts`);
    else logger.warn({ ...log, err: lastError, retryInSeconds: delay / 1000 }, 'mail not delivered yet; it will be retried');
    return false;
  }
  const sent: MailRecord = { ...kept, status: 'sent', sentAt: now(), version: record.version + 1, expiresAt: now() + SENT_KEPT_MS };
  if (!(await messages.put(sent, { expect: { version: record.version } }).catch(() => false))) {
    logger.error(log, 'mail delivered but not marked sent; it may be delivered again');
  } else {
    logger.info({ ...log, transport: deps.transport.kind }, 'mail delivered');
  }
  return true;
}

function startWorker(queue: MailQueue, logger: Logger, intervalMs: number): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      await queue.deliverDue();
    } catch (err) {
      // The records store failed (or closed under us): the next pass tries again.
      if (!stopped) logger.warn({ err }, 'mail queue: the records store failed; retrying');
    }
    if (!stopped) {
      timer = setTimeout(() => (running = pass()), intervalMs);
      timer.unref();
    }
  };
  running = pass();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
