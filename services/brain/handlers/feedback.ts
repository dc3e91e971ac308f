import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  MemoryRefSchema,
  Outcome,
  RecordFeedbackResponseSchema,
  type Memory,
  type MemoryRef,
  type RecordFeedbackRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';
import { isLive, memoryId, namespaceEnum, toMemory, type MemoryRecord } from '../memory-record.ts';
import { writerName } from './recall-render.ts';
import { requireRefs, sourceOf } from './validate.ts';

const ATTEMPTS = 8;

/**
 * Adds one outcome to each listed memory's statistics. Statistics change by compare-and-set on
 * the record's storage revision, retried, so concurrent reports from several replicas all count;
 * the memory's content version does not change.
 */
export async function recordFeedback(ctx: BrainContext, req: RecordFeedbackRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const refs = requireRefs('memories', req.memories, 1, 50);
  if (req.outcome !== Outcome.WORKED && req.outcome !== Outcome.FAILED) {
    invalid('outcome', 'must be OUTCOME_WORKED or OUTCOME_FAILED');
  }
  const note = requireText('note', req.note.trim(), 1_000);
  const source = sourceOf(req.source);
  // Warnings name who reported: the client's registered name and the user's, else the client id.
  const reporter = writerName(source);
  const memories: Memory[] = [];
  const missing: MemoryRef[] = [];
  for (const ref of refs) {
    const id = memoryId(organizationId, ref.namespace, ref.key);
    let done: MemoryRecord | undefined;
    let absent = false;
    for (let attempt = 0; attempt < ATTEMPTS && !done && !absent; attempt++) {
      const record = await ctx.memories.get(id);
      if (!isLive(record)) {
        absent = true;
        break;
      }
      const now = ctx.now();
      const stats = { ...record.stats };
      if (req.outcome === Outcome.WORKED) {
        stats.worked += 1;
        stats.lastWorkedAt = now;
        stats.lastWorkedBy = reporter;
      } else {
        stats.failed += 1;
        stats.lastFailedAt = now;
        stats.lastFailedBy = reporter;
        stats.lastFailedNote = note;
      }
      const updated = { ...record, stats, rev: record.rev + 1 };
      if (await ctx.memories.put(updated, { expect: { rev: record.rev } })) done = updated;
    }
    if (absent) missing.push(create(MemoryRefSchema, { namespace: namespaceEnum(ref.namespace), key: ref.key }));
    else if (done) memories.push(toMemory(done));
    else throw new ConnectError(`memory "${ref.key}" is being changed by many writers: retry`, Code.Aborted);
  }
  return create(RecordFeedbackResponseSchema, { memories, missing });
}
