// Supersession: a write names the memory it corrects (PutMemoryRequest.supersedes). The old memory
// stays readable as history (superseded_by), ranks below its successor (search/ranking.ts), and
// the open contradictions naming it are closed. Deleting the successor makes the old memory
// current again.
import { Code, ConnectError } from '@connectrpc/connect';
import type { MemoryRef } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { invalid } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';
import { memorySubject, memorySuperseded } from '../events.ts';
import type { ContradictionRecord } from '../items-record.ts';
import { isLive, memoryId, refString, type MemoryRecord, type MemoryRefRecord, type SourceRecord } from '../memory-record.ts';
import { closeContradictions } from './contradictions.ts';
import { notFound, requireKey, requireNamespace } from './validate.ts';

const ATTEMPTS = 8;

/** The memory a write supersedes: another live memory of the organization, or none. */
export async function requireSuperseded(
  ctx: BrainContext,
  organizationId: string,
  ref: MemoryRef | undefined,
  written: MemoryRefRecord,
): Promise<MemoryRecord | undefined> {
  if (!ref || (!ref.key && !ref.namespace)) return undefined;
  const target = { namespace: requireNamespace(ref.namespace, 'supersedes.namespace'), key: requireKey('supersedes.key', ref.key) };
  if (target.namespace === written.namespace && target.key === written.key) {
    invalid('supersedes', 'must name another memory than the one written');
  }
  const record = await ctx.memories.get(memoryId(organizationId, target.namespace, target.key));
  if (!isLive(record)) notFound(`memory ${refString(target.namespace, target.key)} named in supersedes does not exist`);
  return record;
}

/** Sets (or, with `to` undefined, clears) a memory's superseded_by by compare-and-set, retried. */
async function setSupersededBy(ctx: BrainContext, id: string, to: MemoryRefRecord | undefined, only?: MemoryRefRecord): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const record = await ctx.memories.get(id);
    if (!isLive(record)) return;
    const current = record.supersededBy;
    if (only && (!current || refString(current.namespace, current.key) !== refString(only.namespace, only.key))) return;
    if (to && current && refString(current.namespace, current.key) === refString(to.namespace, to.key)) return;
    if (!to && !current) return;
    const updated: MemoryRecord = { ...record, supersededBy: to, rev: record.rev + 1 };
    if (!to) delete updated.supersededBy;
    // Marking is an event (memory.superseded); making a memory current again has no type yet.
    const events = to ? [memorySuperseded(record, to)] : [];
    if (await putWithEvents(ctx.events, memorySubject(ctx), updated, record, events, { expect: { rev: record.rev } })) return;
  }
  throw new ConnectError(`memory ${id.split('/').slice(1).join('/')} is being changed by many writers: retry`, Code.Aborted);
}

/**
 * Marks the memory `successor` supersedes and closes the open contradictions naming it.
 * Idempotent: a retried write completes what a failed one left undone.
 */
export async function markSuperseded(ctx: BrainContext, successor: MemoryRecord, source: SourceRecord): Promise<ContradictionRecord[]> {
  const old = successor.supersedes;
  if (!old) return [];
  const next = { namespace: successor.namespace, key: successor.key };
  await setSupersededBy(ctx, memoryId(successor.organizationId, old.namespace, old.key), next);
  return closeContradictions(ctx, successor.organizationId, {
    ref: old,
    successor: next,
    why: `${refString(old.namespace, old.key)} was superseded by ${refString(next.namespace, next.key)}`,
    source,
  });
}

/** A deleted memory: its contradictions are obsolete, and what it superseded is current again. */
export async function releaseDeleted(ctx: BrainContext, deleted: MemoryRecord, source: SourceRecord): Promise<void> {
  const ref = { namespace: deleted.namespace, key: deleted.key };
  await closeContradictions(ctx, deleted.organizationId, { ref, why: `${refString(ref.namespace, ref.key)} was deleted`, source });
  if (deleted.supersedes) {
    await setSupersededBy(ctx, memoryId(deleted.organizationId, deleted.supersedes.namespace, deleted.supersedes.key), undefined, ref);
  }
}
