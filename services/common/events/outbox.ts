// A service's event outbox: the events of its changes, kept in its own records store until a relay
// has published them (EventOutboxService, outbox-routes.ts). The records port writes one
// document atomically and has no transactions (neither does MongoDB outside replica sets), so a
// change and its event cannot be one write. They are made recoverable instead:
//
//   1. begin(): the event is written to the outbox first, `pending`, naming its subject (the
//      record the change writes or deletes);
//   2. the change is written; a written record carries the event's id in `eventIds` (the last
//      EVENT_IDS_KEPT of them), in that same write;
//   3. commit() makes the event `ready` (a refused change — a lost compare-and-set — abandons it).
//
// A process that dies between 1 and 3 leaves the event pending. Once SETTLE_MS has passed, the
// claim step looks at the subject: a written record whose `eventIds` holds the event's id, or a
// deleted one that is gone (or was created again since), means the change was stored, and the
// event becomes ready; otherwise the change never happened and the event is voided. So an event is
// published if and only if its change was stored, whichever process dies when.
//
// Ready events are claimed with a lease (a compare-and-set moving `due` ahead), so one relay at a
// time has each, and acknowledged (deleted) once published; a relay that dies leaves the lease to
// expire and the event is handed out again. Publishing is idempotent by event id.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.ts';
import type { PutOptions, RecordCollection, RecordDoc, RecordStore } from '../storage/records/interface.ts';
import type { EventData, EventType } from './catalogue.ts';

/** How long a pending event waits for its commit before the outbox looks at its subject. */
export const SETTLE_MS = 60_000;
/** How many event ids a record keeps; only a record written this often within SETTLE_MS could lose one. */
export const EVENT_IDS_KEPT = 8;
const VOID_KEPT_MS = 86_400_000;

/** The record a change writes or deletes. */
export type Subject =
  | { collection: string; id: string; kind: 'written' }
  /** `createdAt` tells the deleted record from one created again under the same id. */
  | { collection: string; id: string; kind: 'deleted'; createdAt?: number };

/** Who hears of an event besides the organization's subscribers (an alert rule's channels). */
export interface EventNotify {
  /** Webhook endpoints of the organization, whatever types they subscribe to. */
  endpointIds: string[];
  /** Addresses the relay e-mails. */
  emails: string[];
}

/** What a change emits: a type of the catalogue, the organization, and the data. */
export interface NewEvent {
  type: EventType;
  organizationId: string;
  data: Record<string, unknown>;
  notify?: EventNotify;
}

export interface OutboxEntry extends RecordDoc {
  organizationId: string;
  type: string;
  /** When the change was made (epoch ms). */
  time: number;
  data: Record<string, unknown>;
  state: 'pending' | 'ready' | 'void';
  notify?: EventNotify;
  /** Pending: when to look at the subject. Ready: when it may be claimed (a claim's lease end). */
  due: number;
  subject: Subject;
  claims?: number;
}

/** A record that carries the ids of the events of its last writes. */
export interface EventStamped {
  eventIds?: string[];
}

/** An event typed by the catalogue. */
export function event<T extends EventType>(type: T, organizationId: string, data: EventData<T>): NewEvent {
  return { type, organizationId, data: data as Record<string, unknown> };
}

/** The `eventIds` of a record written with these events after `previous`. */
export function stampEvents(previous: RecordDoc | undefined, pending: Pending): string[] {
  const kept = Array.isArray(previous?.eventIds) ? (previous.eventIds as string[]) : [];
  return [...pending.ids, ...kept].slice(0, EVENT_IDS_KEPT);
}

/** Events written before their change: commit once the change is stored. */
export interface Pending {
  readonly ids: string[];
  /** The change is stored: the events may be published. Never throws (a failure is recovered). */
  commit(): Promise<void>;
  /** The change was refused: the events are dropped. Never throws. */
  abandon(): Promise<void>;
  /** Commits when `written` is true, abandons when false. */
  settle(written: boolean): Promise<void>;
}

export interface ClaimOptions {
  maxEvents: number;
  leaseMs: number;
  waitMs: number;
  signal?: AbortSignal;
}

export interface EventOutbox {
  /** Writes the events of a change about to be made to `subject`. No events: nothing is written. */
  begin(subject: Subject, events: NewEvent[]): Promise<Pending>;
  /** Claims ready events, oldest first; settles pending ones whose time has come first. */
  claim(options: ClaimOptions): Promise<OutboxEntry[]>;
  ack(ids: string[]): Promise<number>;
}

export interface EventOutboxOptions {
  records: RecordStore;
  /** The outbox collection, owned by the service (e.g. `brain_event_outbox`). */
  collection: string;
  /** The collections whose records events are about, by name. */
  subjects: Record<string, RecordCollection<RecordDoc & EventStamped>>;
  logger: Logger;
  now: () => number;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `evt_` + 10 characters of time + 16 random: ordered by creation, unique. */
export function newEventId(now: number): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const bytes = randomBytes(16);
  return `evt_${time}${[...bytes].map((b) => ALPHABET[b % 32]).join('')}`;
}

const NOTHING: Pending = { ids: [], commit: async () => {}, abandon: async () => {}, settle: async () => {} };

export function createEventOutbox(options: EventOutboxOptions): EventOutbox {
  const { logger, now, subjects } = options;
  const entries = options.records.collection<OutboxEntry>(options.collection, { indexes: [{ fields: ['state', 'due'] }] });
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const w of waiting) w();
    waiting.clear();
  };

  async function begin(subject: Subject, events: NewEvent[]): Promise<Pending> {
    if (events.length === 0) return NOTHING;
    if (!subjects[subject.collection]) throw new Error(`events about ${subject.collection}: not a subject of this outbox`);
    const time = now();
    const written: OutboxEntry[] = events.map((e) => ({
      _id: newEventId(time),
      organizationId: e.organizationId,
      type: e.type,
      time,
      data: e.data,
      ...(e.notify ? { notify: e.notify } : {}),
      state: 'pending',
      due: time + SETTLE_MS,
      subject,
    }));
    for (const entry of written) await entries.put(entry, { expect: null });
    const commit = async () => {
      try {
        for (const entry of written) await entries.put({ ...entry, state: 'ready', due: now() });
        wake();
      } catch (err) {
        // The change is stored: the claim step finds the pending events and publishes them.
        logger.warn({ err, events: written.map((e) => e._id) }, 'events of a stored change are published after SETTLE_MS');
      }
    };
    const abandon = async () => {
      for (const entry of written) await entries.delete(entry._id).catch(() => false);
    };
    return { ids: written.map((e) => e._id), commit, abandon, settle: (ok) => (ok ? commit() : abandon()) };
  }

  /** Whether the change a pending event was written for was stored. */
  async function happened(entry: OutboxEntry): Promise<boolean> {
    const record = await subjects[entry.subject.collection]?.get(entry.subject.id);
    if (entry.subject.kind === 'deleted') return record === undefined || record.createdAt !== entry.subject.createdAt;
    return record?.eventIds?.includes(entry._id) ?? false;
  }

  async function settleDue(): Promise<void> {
    const due = await entries.find({ state: 'pending', due: { $lte: now() } }, { sort: { field: 'due', direction: 'asc' }, limit: 50 });
    for (const entry of due) {
      const stored = await happened(entry);
      const next: OutboxEntry = stored
        ? { ...entry, state: 'ready', due: now() }
        : { ...entry, state: 'void', expiresAt: now() + VOID_KEPT_MS };
      if (await entries.put(next, { expect: { state: 'pending', due: entry.due } })) {
        if (stored)
          logger.info({ event: entry._id, type: entry.type }, 'event of a change whose process stopped before publishing it: ready');
        else logger.info({ event: entry._id, type: entry.type }, 'event of a change that was never stored: voided');
      }
    }
  }

  async function claimReady(max: number, leaseMs: number): Promise<OutboxEntry[]> {
    const time = now();
    const ready = await entries.find({ state: 'ready', due: { $lte: time } }, { sort: { field: 'due', direction: 'asc' }, limit: max });
    const claimed: OutboxEntry[] = [];
    for (const entry of ready) {
      const next = { ...entry, due: time + leaseMs, claims: (entry.claims ?? 0) + 1 };
      if (await entries.put(next, { expect: { state: 'ready', due: entry.due } })) claimed.push(next);
    }
    return claimed.sort((a, b) => a.time - b.time || (a._id < b._id ? -1 : 1));
  }

  async function claim(o: ClaimOptions): Promise<OutboxEntry[]> {
    await settleDue();
    const claimed = await claimReady(o.maxEvents, o.leaseMs);
    if (claimed.length > 0 || o.waitMs <= 0 || o.signal?.aborted) return claimed;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        o.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, o.waitMs);
      waiting.add(done);
      o.signal?.addEventListener('abort', done, { once: true });
    });
    return o.signal?.aborted ? [] : claimReady(o.maxEvents, o.leaseMs);
  }

  async function ack(ids: string[]): Promise<number> {
    let removed = 0;
    for (const id of ids) if (await entries.delete(id)) removed++;
    return removed;
  }

  return { begin, claim, ack };
}

/**
 * Writes a record and its events by the protocol above: the events first (pending), the record
 * stamped with their ids, then the events committed, or dropped when `put` was refused. Returns
 * what `put` returned. When `put` throws, its outcome is unknown and the claim step settles it.
 */
export async function putWithEvents<T extends RecordDoc & EventStamped>(
  outbox: EventOutbox,
  subject: { collection: string; records: RecordCollection<T> },
  record: T,
  previous: RecordDoc | undefined,
  events: NewEvent[],
  options?: PutOptions,
): Promise<boolean> {
  const pending = await outbox.begin({ collection: subject.collection, id: record._id, kind: 'written' }, events);
  const written = await subject.records.put({ ...record, eventIds: stampEvents(previous, pending) }, options);
  await pending.settle(written);
  return written;
}

/** Deletes a record and publishes its events by the same protocol. Returns what `delete` returned. */
export async function deleteWithEvents<T extends RecordDoc & { createdAt?: number }>(
  outbox: EventOutbox,
  subject: { collection: string; records: RecordCollection<T> },
  record: T,
  events: NewEvent[],
): Promise<boolean> {
  const pending = await outbox.begin(
    { collection: subject.collection, id: record._id, kind: 'deleted', createdAt: record.createdAt },
    events,
  );
  const deleted = await subject.records.delete(record._id);
  await pending.settle(deleted);
  return deleted;
}
