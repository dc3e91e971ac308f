// The Brain steps of a run (a playbook's steps, the LLM runner's brain_remember tool), for the
// run's organization only: a read is a search of one namespace, a write puts a memory under the
// key the step names (so a write done again after a takeover finds the memory unchanged rather
// than writing a second one). The Brain refusing the
// step's values (a key it does not take, the plan's memory limit) fails the step; a Brain that
// does not answer ends the attempt, and the run is taken up again when its lease expires.
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { Namespace, type Outcome, WriteOutcome, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { ToolCallOutcome } from './gateway-tools.ts';

const NAMESPACES = { episodes: Namespace.EPISODES, knowledge: Namespace.KNOWLEDGE } as const;
const namespaceName = (ns: Namespace) => (ns === Namespace.KNOWLEDGE ? 'knowledge' : 'episodes');
const REFUSALS = new Set([Code.InvalidArgument, Code.ResourceExhausted, Code.FailedPrecondition, Code.NotFound, Code.PermissionDenied]);

async function refusedAsFailure(work: () => Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConnectError) || !REFUSALS.has(err.code)) throw err;
    return { ok: false, result: { error: err.rawMessage }, error: err.rawMessage };
  }
}

export interface BrainRead {
  namespace: keyof typeof NAMESPACES;
  query: string;
  limit?: number;
}

export function brainRead(brain: Client<typeof BrainService>, organizationId: string, step: BrainRead): Promise<ToolCallOutcome> {
  return refusedAsFailure(async () => {
    const res = await brain.searchMemories({
      organizationId,
      namespace: NAMESPACES[step.namespace],
      query: step.query,
      limit: step.limit ?? 10,
    });
    const memories = res.results.map((r) => ({
      namespace: namespaceName(r.memory!.namespace),
      key: r.memory!.key,
      title: r.memory!.title,
      content: r.memory!.content,
    }));
    return { ok: true, error: '', result: { memories, count: memories.length } };
  });
}

export type NamespaceName = keyof typeof NAMESPACES;
export interface MemoryName {
  namespace: NamespaceName;
  key: string;
}

export interface BrainWrite {
  namespace: keyof typeof NAMESPACES;
  key: string;
  title?: string;
  content: string;
  tags?: string[];
}

export function brainWrite(
  brain: Client<typeof BrainService>,
  organizationId: string,
  step: BrainWrite,
  /** Who writes, as the Brain records it: the runner, and which run. */
  source: { clientId: string; clientName: string },
): Promise<ToolCallOutcome> {
  return refusedAsFailure(async () => {
    const res = await brain.putMemory({
      organizationId,
      namespace: NAMESPACES[step.namespace],
      key: step.key,
      title: step.title ?? '',
      content: step.content,
      tags: step.tags ?? [],
      source,
    });
    const result: JsonObject = {
      namespace: step.namespace,
      key: step.key,
      version: Number(res.memory?.version ?? 0),
      outcome: (WriteOutcome[res.outcome] ?? 'UNSPECIFIED').toLowerCase(),
    };
    return { ok: true, error: '', result };
  });
}

/** Feedback on memories the run read: its outcome, so the Brain ranks what worked higher. */
export function recordFeedback(
  brain: Client<typeof BrainService>,
  organizationId: string,
  memories: MemoryName[],
  outcome: Outcome,
  source: { note: string; clientId: string },
): Promise<ToolCallOutcome> {
  return refusedAsFailure(async () => {
    const res = await brain.recordFeedback({
      organizationId,
      memories: memories.map((m) => ({ namespace: NAMESPACES[m.namespace], key: m.key })),
      outcome,
      note: source.note,
      source: { clientId: source.clientId },
    });
    const missing = res.missing.map((m) => `${namespaceName(m.namespace)}/${m.key}`);
    return { ok: true, error: '', result: { recorded: res.memories.length, missing } };
  });
}
