// The manage_memories tool: one function per action (create and update, delete, flag a
// contradiction, ask a question, resolve either), each one call to the brain service.
import { Code, ConnectError } from '@connectrpc/connect';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ItemStatus, type PutMemoryResponse, WriteOutcome } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { type ManageMemoriesArgs, RELATIONSHIP_SCHEMA } from './brain-tool-definitions.ts';
import {
  contradictionJson,
  duplicateJson,
  memoryJson,
  nsEnum,
  nsName,
  questionJson,
  result,
  toolError,
  toRef,
  toTimestamp,
  isoArgument,
} from './brain-tool-json.ts';
import type { BrainToolContext } from './brain-tools.ts';
import { putMemories } from './put-memories.ts';

type Contradictions = ReturnType<typeof contradictionJson>[];
type WriteOutcomeName = 'created' | 'updated' | 'unchanged' | 'duplicate';

const empty = () => ({ duplicates: [], contradictions: [] as Contradictions, closed_contradictions: [] as Contradictions });

/** Why a create or update cannot be sent, or undefined when it can. */
function refusedWrite(args: ManageMemoriesArgs): CallToolResult | undefined {
  if (!args.namespace || !args.key) return toolError(`${args.action} needs namespace and key.`);
  if (!args.content?.trim()) return toolError(`${args.action} needs content: the memory itself.`);
  if (args.action === 'update' && args.expected_version === undefined) {
    return toolError('update needs expected_version: the version you read with fetch_memories (0 is not valid for update).');
  }
  if (args.action === 'update' && args.expected_version === 0)
    return toolError('update needs expected_version >= 1; use create for a new key.');
  const eventTime = isoArgument('event_time', args.event_time);
  if (typeof eventTime === 'object') return eventTime;
  const bad = (args.relationships ?? []).findIndex((r) => !RELATIONSHIP_SCHEMA.safeParse(r).success);
  if (bad >= 0) return toolError(`relationships[${bad}] must be {subject, predicate, object}, each a string, and nothing else.`);
  return undefined;
}

export function writeOutcome(res: PutMemoryResponse): WriteOutcomeName {
  if (res.outcome === WriteOutcome.DUPLICATE) return 'duplicate';
  if (res.outcome === WriteOutcome.UNCHANGED) return 'unchanged';
  return res.created ? 'created' : 'updated';
}

/** The text a model reads after a write: what happened, what it resembles, what it contradicts. */
function describeWrite(res: PutMemoryResponse, outcome: WriteOutcomeName, ref: string): string {
  const duplicates = res.duplicates.map(duplicateJson);
  const lines: string[] = [];
  if (outcome === 'duplicate') {
    lines.push(
      `Not written: similar memory exists: ${duplicates.map((d) => `${d.namespace}/${d.key} (${d.kind})`).join(', ')}. Update that memory instead, or call again with allow_duplicate: true.`,
    );
  } else {
    lines.push(
      `${outcome === 'unchanged' ? 'Unchanged' : outcome === 'created' ? 'Created' : 'Updated'} ${ref} (version ${res.memory?.version}).`,
    );
    if (duplicates.length) lines.push(`Similar memories exist: ${duplicates.map((d) => `${d.namespace}/${d.key}`).join(', ')}.`);
  }
  const superseded = res.memory?.supersedes?.key ? `${nsName(res.memory.supersedes.namespace)}/${res.memory.supersedes.key}` : '';
  if (superseded && outcome !== 'duplicate' && outcome !== 'unchanged')
    lines.push(`It supersedes ${superseded}, which is kept as history.`);
  for (const c of res.closedContradictions.map(contradictionJson))
    lines.push(`Closed contradiction ${c.id} (${c.status}): ${c.resolution}.`);
  for (const c of res.contradictions.map(contradictionJson)) {
    const others = c.memories.filter((m) => `${m.namespace}/${m.key}` !== ref).map((m) => `${m.namespace}/${m.key}`);
    lines.push(
      `Flagged contradiction ${c.id} with ${others.join(', ')}: ${c.reason}. ` +
        `If this write corrects ${others.length === 1 ? 'it' : 'one of them'}, write again with supersedes; otherwise fix the wrong memory or resolve ${c.id}.`,
    );
  }
  return lines.join('\n');
}

/** A create on a key that exists: say so, and how to change it. */
async function existingKey(t: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  const read = await t.brain.getMemories({ organizationId: t.organizationId, namespace: nsEnum(args.namespace!), keys: [args.key!] });
  const version = read.memories[0] ? Number(read.memories[0].version) : undefined;
  return toolError(
    `${args.namespace}/${args.key} already exists${version ? ` (version ${version})` : ''}: create never replaces a memory. ` +
      `To change it, call manage_memories with action "update" and expected_version ${version ?? 'from fetch_memories'}; ` +
      'to keep both, create under another key.',
  );
}

async function putMemory(t: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  const refused = refusedWrite(args);
  if (refused) return refused;
  let res: PutMemoryResponse;
  try {
    res = await write(t, args);
  } catch (err) {
    if (args.action === 'create' && err instanceof ConnectError && err.code === Code.FailedPrecondition) return existingKey(t, args);
    throw err;
  }
  const outcome = writeOutcome(res);
  return result(describeWrite(res, outcome, `${args.namespace}/${args.key}`), {
    action: args.action,
    outcome,
    memory: res.memory ? memoryJson(res.memory) : undefined,
    duplicates: res.duplicates.map(duplicateJson),
    contradictions: res.contradictions.map(contradictionJson),
    closed_contradictions: res.closedContradictions.map(contradictionJson),
  });
}

function write({ brain, organizationId, source }: BrainToolContext, args: ManageMemoriesArgs): Promise<PutMemoryResponse> {
  return brain.putMemory({
    organizationId,
    namespace: nsEnum(args.namespace!),
    key: args.key!,
    title: args.title ?? '',
    content: args.content!,
    tags: args.tags ?? [],
    entities: args.entities ?? [],
    source,
    expectedVersion: BigInt(args.action === 'create' ? 0 : args.expected_version!),
    allowDuplicate: args.allow_duplicate ?? false,
    supersedes: args.supersedes ? toRef(args.supersedes) : undefined,
    eventTime: args.event_time === undefined ? undefined : toTimestamp(Date.parse(args.event_time)),
    relationships: (args.relationships ?? []).map((r) => RELATIONSHIP_SCHEMA.parse(r)),
  });
}

async function deleteMemory({ brain, organizationId, source }: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  if (!args.namespace || !args.key) return toolError('delete needs namespace and key.');
  await brain.deleteMemory({
    organizationId,
    namespace: nsEnum(args.namespace),
    key: args.key,
    expectedVersion: args.expected_version === undefined ? undefined : BigInt(args.expected_version),
    source,
  });
  return result(`Deleted ${args.namespace}/${args.key}; open contradictions naming it are closed as obsolete.`, {
    action: 'delete',
    outcome: 'deleted',
    ...empty(),
  });
}

async function flagContradiction({ brain, organizationId, source }: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  if ((args.memories?.length ?? 0) < 2 || !args.reason?.trim()) {
    return toolError('flag_contradiction needs memories (at least 2, as {namespace, key}) and a reason.');
  }
  const res = await brain.flagContradiction({ organizationId, memories: args.memories!.map(toRef), reason: args.reason!, source });
  const c = contradictionJson(res.contradiction!);
  return result(`${res.created ? 'Flagged' : 'Already flagged'} contradiction ${c.id}.`, {
    action: 'flag_contradiction',
    outcome: res.created ? 'flagged' : 'already_flagged',
    ...empty(),
    contradictions: [c],
  });
}

async function askQuestion({ brain, organizationId, source }: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  if (!args.question?.trim()) return toolError('ask_question needs question: what is not known.');
  const res = await brain.askQuestion({
    organizationId,
    question: args.question,
    memories: (args.memories ?? []).map(toRef),
    entities: args.entities ?? [],
    source,
  });
  const q = questionJson(res.question!);
  return result(`Recorded open question ${q.id}.`, { action: 'ask_question', outcome: 'asked', question: q, ...empty() });
}

async function resolveItem({ brain, organizationId, source }: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  if (!args.id || !args.status || !args.resolution?.trim()) {
    return toolError('resolve needs id (ctr_… or q_…), status ("resolved" or "dismissed") and resolution.');
  }
  const status = args.status === 'resolved' ? ItemStatus.RESOLVED : ItemStatus.DISMISSED;
  if (args.id.startsWith('ctr_')) {
    const res = await brain.resolveContradiction({ organizationId, id: args.id, status, resolution: args.resolution, source });
    return result(`Contradiction ${args.id} is ${args.status}.`, {
      action: 'resolve',
      outcome: 'resolved',
      ...empty(),
      contradictions: [contradictionJson(res.contradiction!)],
    });
  }
  if (args.id.startsWith('q_')) {
    const res = await brain.resolveQuestion({ organizationId, id: args.id, status, resolution: args.resolution, source });
    return result(`Question ${args.id} is ${args.status}.`, {
      action: 'resolve',
      outcome: 'resolved',
      question: questionJson(res.question!),
      ...empty(),
    });
  }
  return toolError('id must be a contradiction id (ctr_…) or a question id (q_…).');
}

export async function manageMemories(t: BrainToolContext, args: ManageMemoriesArgs): Promise<CallToolResult> {
  switch (args.action) {
    case 'create':
    case 'update':
      return args.items ? putMemories(t, args.action, args.items) : putMemory(t, args);
    case 'delete':
      return deleteMemory(t, args);
    case 'flag_contradiction':
      return flagContradiction(t, args);
    case 'ask_question':
      return askQuestion(t, args);
    case 'resolve':
      return resolveItem(t, args);
  }
}
