// Idempotency-Key on the Agents API's creates (draft-ietf-httpapi-idempotency-key-header): a
// client that retries a POST with the same key gets the first successful answer again instead of a
// second resource. Keys are scoped to the organization, the caller and the operation, and kept 24
// hours in the records store (shared by every replica). The same key with a different request is
// 422; while the first request is still running, 409. Only successful answers are kept: after a
// failure the key may be used again. Answers may hold secrets shown once (a new API key), so they
// are stored sealed with the key-encryption key.
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { readBody } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import { resealEnvelope, type SealedRecords } from '../../services/common/key-encryption-reseal.ts';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import type { Caller } from './auth.ts';
import { ConflictError, stashBody } from './rest-route.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const IDEMPOTENCY_COLLECTION = 'api_idempotency_keys';
/** A first request that has not finished after this long is taken to have died; its key frees up. */
const PENDING_TTL_MS = 60_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

interface IdempotencyDoc extends RecordDoc {
  /** Whose it is, so that an organization's deletion takes its answers (which may hold secrets). */
  organizationId?: string;
  state: 'pending' | 'done';
  fingerprint: string;
  status?: number;
  /** The answer's body, sealed. */
  body?: string;
}

const answerContext = (id: string) => `idempotency:${id}`;

/**
 * The kept answers as the start seals them again (services/common/key-encryption-reseal.ts), so a
 * replay within the 24 hours still opens after a rotation; conditional on the envelope read.
 */
export function sealedAnswers(records: RecordStore, kek: KeyEncryption): SealedRecords<IdempotencyDoc> {
  return {
    collection: records.collection<IdempotencyDoc>(IDEMPOTENCY_COLLECTION),
    filter: { state: 'done' },
    reseal: (doc) =>
      doc.body !== undefined && kek.isStale(doc.body) ? { ...doc, body: resealEnvelope(kek, doc.body, answerContext(doc._id)) } : undefined,
    expect: (doc) => ({ body: doc.body ?? null }),
  };
}

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\n');
  return hash.digest('hex');
};

function keyOf(c: AnyApiRouteContext): string | undefined {
  const raw = c.req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (!KEY.test(value)) {
    throw new RequestValidationError([
      { type: 'value_error', loc: ['header', 'Idempotency-Key'], msg: 'must be 1-255 visible ASCII characters (a UUID, say)' },
    ]);
  }
  return value;
}

/** Captures what the handler answers, to keep it for replays. */
function captureBody(c: AnyApiRouteContext): () => Buffer | undefined {
  let captured: Buffer | undefined;
  const end = c.res.end.bind(c.res) as (...args: unknown[]) => unknown;
  c.res.end = ((...args: unknown[]) => {
    const chunk = args[0];
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) captured = Buffer.from(chunk);
    return end(...args);
  }) as typeof c.res.end;
  return () => captured;
}

export type IdempotentRun = (
  c: AnyApiRouteContext,
  operationId: string,
  caller: Caller,
  run: () => Promise<void>,
  /** The route's own body limit (uploads), else MAX_BODY_BYTES. */
  bodyLimit?: number,
) => Promise<void>;

export function createIdempotency(ctx: AppContext): IdempotentRun {
  const keys: RecordCollection<IdempotencyDoc> = ctx.stores.records.collection<IdempotencyDoc>(IDEMPOTENCY_COLLECTION, {
    indexes: [{ fields: ['organizationId'] }],
  });
  const limit = ctx.config.maxBodyBytes;

  return async (c, operationId, caller, run, bodyLimit) => {
    const key = keyOf(c);
    if (key === undefined) return run();
    const body = await readBody(c.req, bodyLimit ?? limit);
    stashBody(c, body);
    const id = sha256(caller.organizationId, caller.kind, caller.subject, operationId, key);
    const context = answerContext(id);
    const fingerprint = sha256(c.req.method ?? '', c.path, body);
    const now = ctx.now();
    const claimed = await keys.put({ _id: id, state: 'pending', fingerprint, expiresAt: now + PENDING_TTL_MS }, { expect: null });
    if (!claimed) {
      const first = await keys.get(id);
      if (first && first.fingerprint !== fingerprint) {
        throw new RequestValidationError([
          { type: 'value_error', loc: ['header', 'Idempotency-Key'], msg: 'was already used with a different request' },
        ]);
      }
      if (first?.state === 'done' && first.body !== undefined) {
        const payload = ctx.keyEncryption.open(first.body, context);
        c.res.writeHead(first.status ?? 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'cache-control': 'no-store',
          'idempotent-replayed': 'true',
        });
        c.res.end(payload);
        return;
      }
      throw new ConflictError('a request with this Idempotency-Key is still running; retry in a moment', { 'retry-after': '1' });
    }
    const captured = captureBody(c);
    try {
      await run();
    } catch (err) {
      await keys.delete(id);
      throw err;
    }
    const answer = captured();
    if (c.res.statusCode >= 300 || answer === undefined) {
      await keys.delete(id);
      return;
    }
    const sealed = ctx.keyEncryption.seal(answer.toString('utf8'), context);
    await keys.put({
      _id: id,
      organizationId: caller.organizationId,
      state: 'done',
      fingerprint,
      status: c.res.statusCode,
      body: sealed,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    });
  };
}
