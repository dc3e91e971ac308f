// The memories a thread produced: each Brain write its runs reported (a brain_write step whose
// result names the memory: namespace, key and the version written), recorded when the step is
// recorded. One record per namespace, key and version, inserted if absent, so a write done again
// (a takeover redoing the step in flight, a retried run finding the memory unchanged) is listed
// once, under the first run that reported it. The Brain owns the memories; this is the thread's
// record of which ones it wrote, kept with the thread and deleted with its organization.
import { createHash } from 'node:crypto';
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { StepKind } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import {
  ListThreadMemoriesResponseSchema,
  ThreadMemorySchema,
  type ListThreadMemoriesRequest,
} from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { ownedThread, type ThreadsContext } from './threads.ts';

export interface ThreadMemoryRecord extends RecordDoc {
  organizationId: string;
  threadId: string;
  namespace: 'episodes' | 'knowledge';
  key: string;
  version: number;
  runId: string;
  stepIndex: number;
  createdAt: number;
}

/** What a step reports, as far as a thread's memories are concerned. */
export interface WriteStep {
  organizationId: string;
  runId: string;
  index: number;
  kind: StepKind;
  ok: boolean;
  result: JsonObject;
}

/**
 * The memory a step wrote, when it is a successful brain_write whose result names one (a write
 * the Brain refused as a duplicate names none: version 0). Keys are only checked for length: the
 * Brain accepted them, or, for an external agent's step, the reference leads nowhere.
 */
export function writtenMemory(step: WriteStep): { namespace: 'episodes' | 'knowledge'; key: string; version: number } | undefined {
  if (step.kind !== StepKind.BRAIN_WRITE || !step.ok) return undefined;
  const { namespace, key, version } = step.result;
  if (namespace !== 'episodes' && namespace !== 'knowledge') return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > 200) return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return undefined;
  return { namespace, key, version };
}

/** Records the memory a step wrote on the run's thread (nothing when it wrote none). */
export async function recordWrittenMemory(ctx: ThreadsContext, threadId: string, step: WriteStep): Promise<void> {
  const memory = writtenMemory(step);
  if (!memory) return;
  const id = createHash('sha256').update(`${threadId}\n${memory.namespace}\n${memory.key}\n${memory.version}`).digest('base64url');
  const record: ThreadMemoryRecord = {
    _id: `tmem_${id.slice(0, 32)}`,
    organizationId: step.organizationId,
    threadId,
    ...memory,
    runId: step.runId,
    stepIndex: step.index,
    createdAt: ctx.now(),
  };
  // Insert if absent: the first run to report this version keeps it.
  await ctx.memories.put(record, { expect: null });
}

export async function listThreadMemories(ctx: ThreadsContext, req: ListThreadMemoriesRequest) {
  const thread = await ownedThread(ctx, requireOrganization(req.organizationId), req.threadId);
  const page = await findPage(ctx.memories, { threadId: thread._id }, req, { field: 'createdAt', scope: `thread-memories:${thread._id}` });
  return create(ListThreadMemoriesResponseSchema, {
    memories: page.items.map((r) =>
      create(ThreadMemorySchema, {
        threadId: r.threadId,
        namespace: r.namespace,
        key: r.key,
        version: BigInt(r.version),
        runId: r.runId,
        stepIndex: r.stepIndex,
        createTime: timestampFromMs(r.createdAt),
      }),
    ),
    nextPageToken: page.nextPageToken,
  });
}
