// Writing items through the Brain's normal write path (PutMemory: validation, duplicates,
// contradictions, the plan's max_memories) and recording its outcome. Before the write the item
// is marked `attempted`: if the replica dies between the write and the record, the replica that
// resumes writes it again, the Brain answers UNCHANGED (the same text at the same key, no new
// version), and the mark says this run stored it. So every item is stored once.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { Namespace, PutMemoryRequestSchema, WriteOutcome, type PutMemoryResponse } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { MemoryAccess } from '../access.ts';
import { type MemoryWrite, validatePut, writeMemory } from '../handlers/memories.ts';
import { memoryText } from '../memory-record.ts';
import type { SeedingContext } from './context.ts';
import { nsEnum, type OutcomeName, type SeedingItemDoc, type SeedingRunDoc } from './records.ts';

/** The organization's plan allows no more memories: the run stops. */
export class PlanLimitReached extends Error {}

/** Errors of one write that leave the rest of the run to be written. */
const PER_ITEM = new Set([Code.FailedPrecondition, Code.Aborted, Code.NotFound, Code.AlreadyExists]);

function eventTime(item: SeedingItemDoc) {
  if (!item.eventTime) return undefined;
  const ms = Date.parse(item.eventTime);
  return Number.isFinite(ms) ? timestampFromMs(ms) : undefined;
}

function outcomeOf(res: PutMemoryResponse, retried: boolean): Partial<SeedingItemDoc> & { outcome: OutcomeName } {
  const version = Number(res.memory?.version ?? 0n);
  if (res.outcome === WriteOutcome.DUPLICATE) {
    const duplicates = res.duplicates.map((d) => ({
      namespace: d.ref?.namespace === Namespace.EPISODES ? ('episodes' as const) : ('knowledge' as const),
      key: d.ref?.key ?? '',
    }));
    return {
      outcome: 'duplicate',
      duplicates,
      reason: `a memory already says the same: ${duplicates.map((d) => `${d.namespace}/${d.key}`).join(', ')}`,
    };
  }
  if (res.outcome === WriteOutcome.UNCHANGED) return { outcome: retried ? 'stored' : 'unchanged', version };
  const contradictionIds = res.contradictions.map((c) => c.id);
  if (contradictionIds.length > 0) {
    return { outcome: 'contradiction', version, contradictionIds, reason: 'stored, and flagged as contradicting another memory' };
  }
  return { outcome: 'stored', version };
}

function requestOf(run: SeedingRunDoc, item: SeedingItemDoc) {
  return create(PutMemoryRequestSchema, {
    organizationId: run.organizationId,
    namespace: nsEnum(item.namespace),
    key: item.key,
    title: item.title,
    content: item.content,
    tags: item.tags,
    entities: item.entities,
    source: run.writer,
    eventTime: eventTime(item),
  });
}

type Result = Partial<SeedingItemDoc> & { outcome: OutcomeName };

async function write(ctx: SeedingContext, w: MemoryWrite, vector: Float32Array | undefined, retried: boolean): Promise<Result> {
  try {
    return outcomeOf(await writeMemory(ctx.brain, w, { vector, access: MemoryAccess.everything }), retried);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    if (err.code === Code.ResourceExhausted) throw new PlanLimitReached(err.rawMessage);
    if (err.code === Code.InvalidArgument) return { outcome: 'rejected', reason: err.rawMessage };
    if (PER_ITEM.has(err.code)) return { outcome: 'failed', reason: err.rawMessage };
    // The record was saved and its vector is written by vector sync (docs/brain.md): stored.
    if (err.code === Code.Unavailable && err.rawMessage.includes('was saved')) return { outcome: 'stored', reason: err.rawMessage };
    throw err;
  }
}

async function record(ctx: SeedingContext, run: SeedingRunDoc, item: SeedingItemDoc, result: Result): Promise<void> {
  const { seq } = await ctx.store.sequences.increment(run._id, 'seq', 1, {});
  await ctx.store.items.put({ ...item, attempted: true, reason: '', ...result, seq });
}

/** The item's write, validated as PutMemory would; INVALID_ARGUMENT is the item's rejection. */
function validated(run: SeedingRunDoc, item: SeedingItemDoc): MemoryWrite | Result {
  try {
    return validatePut(requestOf(run, item));
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.InvalidArgument) return { outcome: 'rejected', reason: err.rawMessage };
    throw err;
  }
}

const isWrite = (w: MemoryWrite | Result): w is MemoryWrite => 'allowDuplicate' in w;

/**
 * Writes the items in order and records what happened to each; PlanLimitReached stops the run.
 * Their texts are embedded together first, as PutMemories does: one embedder call for the batch.
 */
export async function writeItems(ctx: SeedingContext, run: SeedingRunDoc, items: SeedingItemDoc[], stopping: () => boolean): Promise<void> {
  const writes = items.map((item) => validated(run, item));
  const valid = writes.filter(isWrite);
  const vectors = valid.length > 0 ? await ctx.brain.stores.embedder.embed(valid.map(memoryText)) : [];
  for (const [i, item] of items.entries()) {
    if (stopping()) return;
    const w = writes[i];
    if (!isWrite(w)) {
      await record(ctx, run, item, w);
      continue;
    }
    const retried = item.attempted === true;
    if (!retried) await ctx.store.items.put({ ...item, attempted: true });
    await record(ctx, run, item, await write(ctx, w, vectors[valid.indexOf(w)], retried));
  }
}
