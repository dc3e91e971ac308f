// The Brain's MCP tools: schemas, descriptions that teach the usage order of the spec (§4.2), a
// short text rendering for the model and structured content for programs. Every tool calls the
// brain service's RPCs with the organization and client of the verified token, never of input.
import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { Code, ConnectError } from '@connectrpc/connect';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  type BrainService,
  type Contradiction,
  DuplicateKind,
  type FailureWarning,
  ItemStatus,
  type Memory,
  type MemoryRef,
  MemoryRefSchema,
  Namespace,
  type OpenQuestion,
  Outcome,
  type Scores,
  type SimilarMemory,
  SourceSchema,
  WriteOutcome,
} from '../../gen/mindgate/brain/v1/brain_pb.js';

export interface ToolCaller {
  organizationId: string;
  clientId: string;
  userId: string;
}

type BrainClient = Client<typeof BrainService>;

// ---- Shared schemas -----------------------------------------------------------------------

const namespaceSchema = z.enum(['episodes', 'knowledge']).describe('episodes = what happened; knowledge = reusable learnings');
const keySchema = z.string().regex(/^[A-Za-z0-9._:/-]{1,200}$/).describe('exact memory key, e.g. "deploy/api-steps"');
const refSchema = z.object({ namespace: namespaceSchema, key: keySchema });
type NamespaceName = z.infer<typeof namespaceSchema>;

const scoresOut = z.object({
  final: z.number(),
  relevance: z.number(),
  lexical: z.number(),
  semantic: z.number(),
  feedback: z.number(),
  recency: z.number(),
});
const warningOut = z.object({ failed_at: z.string(), client_id: z.string(), note: z.string(), message: z.string() });
const memoryOut = z.object({
  namespace: namespaceSchema,
  key: z.string(),
  title: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  entities: z.array(z.string()),
  version: z.number(),
  updated_at: z.string(),
  created_at: z.string(),
  written_by: z.string(),
  worked: z.number(),
  failed: z.number(),
});
const contradictionOut = z.object({
  id: z.string(),
  status: z.string(),
  memories: z.array(refSchema.extend({ version: z.number() })),
  reason: z.string(),
  resolution: z.string(),
  flagged_by: z.string(),
});
const questionOut = z.object({
  id: z.string(),
  status: z.string(),
  question: z.string(),
  memories: z.array(refSchema),
  entities: z.array(z.string()),
  resolution: z.string(),
});
const duplicateOut = z.object({ namespace: namespaceSchema, key: z.string(), title: z.string(), kind: z.enum(['exact', 'near']), overlap: z.number(), semantic: z.number() });

// ---- Conversions --------------------------------------------------------------------------

const nsEnum = (n: NamespaceName) => (n === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE);
const nsName = (n: Namespace): NamespaceName => (n === Namespace.EPISODES ? 'episodes' : 'knowledge');
const toRef = (r: { namespace: NamespaceName; key: string }) => create(MemoryRefSchema, { namespace: nsEnum(r.namespace), key: r.key });
const fromRef = (r: MemoryRef | undefined) => ({ namespace: nsName(r?.namespace ?? Namespace.KNOWLEDGE), key: r?.key ?? '' });
const iso = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t).toISOString() : '');
const statusName = (s: ItemStatus) => (s === ItemStatus.OPEN ? 'open' : s === ItemStatus.RESOLVED ? 'resolved' : 'dismissed');

function memoryJson(m: Memory) {
  return {
    namespace: nsName(m.namespace),
    key: m.key,
    title: m.title,
    content: m.content,
    tags: m.tags,
    entities: m.entities,
    version: Number(m.version),
    updated_at: iso(m.updateTime),
    created_at: iso(m.createTime),
    written_by: m.source?.clientName || m.source?.clientId || '',
    worked: m.stats?.worked ?? 0,
    failed: m.stats?.failed ?? 0,
  };
}

function scoresJson(s: Scores | undefined) {
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    final: r(s?.final ?? 0),
    relevance: r(s?.relevance ?? 0),
    lexical: r(s?.lexical ?? 0),
    semantic: r(s?.semantic ?? 0),
    feedback: r(s?.feedback ?? 0),
    recency: r(s?.recency ?? 0),
  };
}

function warningJson(w: FailureWarning | undefined) {
  return w ? { failed_at: iso(w.failedAt), client_id: w.clientId, note: w.note, message: w.message } : undefined;
}

function contradictionJson(c: Contradiction) {
  return {
    id: c.id,
    status: statusName(c.status),
    memories: c.memories.map((m) => ({ ...fromRef(m.ref), version: Number(m.version) })),
    reason: c.reason,
    resolution: c.resolution,
    flagged_by: c.flaggedBy.toLowerCase(),
  };
}

function questionJson(q: OpenQuestion) {
  return {
    id: q.id,
    status: statusName(q.status),
    question: q.question,
    memories: q.memories.map(fromRef),
    entities: q.entities,
    resolution: q.resolution,
  };
}

function duplicateJson(d: SimilarMemory) {
  return {
    ...fromRef(d.ref),
    title: d.title,
    kind: d.kind === DuplicateKind.EXACT ? ('exact' as const) : ('near' as const),
    overlap: Math.round(d.overlap * 100) / 100,
    semantic: Math.round(d.semantic * 100) / 100,
  };
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

// ---- Errors -------------------------------------------------------------------------------

/** A tool error the model can act on: what was wrong and what to do. */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function explain(err: unknown): CallToolResult {
  if (err instanceof ConnectError) {
    switch (err.code) {
      case Code.InvalidArgument:
        return toolError(`Invalid argument: ${err.rawMessage}. Fix it and call the tool again.`);
      case Code.NotFound:
        return toolError(`${err.rawMessage}.`);
      case Code.FailedPrecondition:
      case Code.Aborted:
        return toolError(`${err.rawMessage}.`);
      case Code.Unavailable:
      case Code.DeadlineExceeded:
        return toolError('The brain is busy or unavailable right now; retry in a few seconds.');
      default:
        break;
    }
  }
  return toolError('The brain failed to answer; retry later. If it keeps failing, continue without memory.');
}

async function run(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    return explain(err);
  }
}

function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

// ---- Descriptions -------------------------------------------------------------------------

export const SERVER_INSTRUCTIONS =
  'Shared memory of your organization, written and read by all of its agents and people. ' +
  'Start every task with recall_context (or search_memories for one namespace). ' +
  'At the end, record what you learned with manage_memories (knowledge for reusable learnings, episodes for what happened). ' +
  'Then report with feedback_memories whether the memories you relied on worked or failed.';

// ---- Tools --------------------------------------------------------------------------------

// Tool definitions are built once: a zod schema costs more to construct than the rest of a
// stateless request, and the server registers every tool on each request.
const RECALL_CONTEXT_TOOL = {
  title: 'Recall context for a task',
  description:
    'Call this FIRST, at the start of a task. In one call it searches both namespaces for the task, adds the memories ' +
    'that mention the named entities and the exact keys you ask for, and returns one context block within a token ' +
    'budget, with the open contradictions and questions that touch those memories. Memories that failed in use carry a WARNING. ' +
    'Afterwards: record new learnings with manage_memories and report outcomes with feedback_memories.',
  inputSchema: z.object({
    task: z.string().max(4_000).optional().describe('what you are about to do, in a sentence or two'),
    entities: z.array(z.string().min(1).max(200)).max(20).optional().describe('people, systems or organizations involved'),
    keys: z.array(refSchema).max(20).optional().describe('memories you already know you need'),
    namespaces: z.array(namespaceSchema).max(2).optional().describe('namespaces searched for the task (default both)'),
    token_budget: z.number().int().min(200).max(20_000).optional().describe('estimated tokens the context may use (default 2000)'),
    limit: z.number().int().min(1).max(50).optional().describe('memories at most (default 12)'),
  }),
  outputSchema: z.object({
    context: z.string(),
    estimated_tokens: z.number(),
    truncated: z.boolean(),
    memories: z.array(z.object({ namespace: namespaceSchema, key: z.string(), title: z.string(), version: z.number(), reasons: z.array(z.string()), warning: warningOut.optional() })),
    contradictions: z.array(contradictionOut),
    questions: z.array(questionOut),
    missing: z.array(refSchema),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const SEARCH_MEMORIES_TOOL = {
  title: 'Search memories',
  description:
    'Search one namespace (knowledge or episodes) of the organization memory by words and meaning. Use it at the start ' +
    'of a task when you need one namespace or filters (tags, entities, time); recall_context covers both namespaces at once. ' +
    'Each result says why it ranked (scores) and carries a WARNING when it failed in use recently: then prefer another memory ' +
    'or verify it. Read whole memories with fetch_memories.',
  inputSchema: z.object({
    namespace: namespaceSchema,
    query: z.string().min(1).max(2_000).describe('what you are looking for'),
    limit: z.number().int().min(1).max(50).optional().describe('results at most (default 10)'),
    tags: z.array(z.string().min(1).max(64)).max(16).optional().describe('only memories carrying every one of these tags'),
    entities: z.array(z.string().min(1).max(200)).max(16).optional().describe('only memories mentioning one of these entities'),
    updated_after: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 time'),
    updated_before: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 time'),
    token_budget: z.number().int().min(100).max(50_000).optional().describe('stop before results exceed this many estimated tokens'),
  }),
  outputSchema: z.object({
    namespace: namespaceSchema,
    searched_memories: z.number(),
    truncated: z.boolean(),
    results: z.array(memoryOut.extend({ scores: scoresOut, warning: warningOut.optional() })),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const FETCH_MEMORIES_TOOL = {
  title: 'Fetch memories, contradictions or questions',
  description:
    'Read whole memories by exact key (with their namespace), or a flagged contradiction (id ctr_…) or open question ' +
    '(id q_…) by id, as named by recall_context, search_memories or manage_memories.',
  inputSchema: z.object({
    namespace: namespaceSchema.optional().describe('namespace of the keys (required with keys)'),
    keys: z.array(keySchema).max(100).optional(),
    ids: z.array(z.string().regex(/^(ctr|q)_[a-z2-7]{20}$/)).max(100).optional().describe('contradiction (ctr_…) or question (q_…) ids'),
  }),
  outputSchema: z.object({
    memories: z.array(memoryOut),
    missing_keys: z.array(z.string()),
    contradictions: z.array(contradictionOut),
    questions: z.array(questionOut),
    missing_ids: z.array(z.string()),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const MANAGE_MEMORIES_TOOL = {
  title: 'Create, update or delete memories; flag and resolve contradictions and questions',
  description:
    'Call this at the END of a task to record what you learned (namespace "knowledge": reusable how-tos, facts, decisions) ' +
    'or what happened (namespace "episodes"). Actions: create (fails if the key exists), update (needs expected_version ' +
    'from a read), delete, flag_contradiction (memories + reason), ask_question (question, optional memories/entities), ' +
    'resolve (id of a contradiction ctr_… or question q_…, with status and resolution). A create or update whose text ' +
    'already exists under another key is NOT written: the similar keys are returned; update that memory instead, or pass ' +
    'allow_duplicate. Writes that disagree with a close memory are stored and flag a contradiction: resolve it or fix a memory.',
  inputSchema: z.object({
    action: z.enum(['create', 'update', 'delete', 'flag_contradiction', 'ask_question', 'resolve']),
    namespace: namespaceSchema.optional(),
    key: keySchema.optional(),
    title: z.string().max(300).optional().describe('one-line summary'),
    content: z.string().max(32_000).optional().describe('the memory, self-contained: a reader has no other context'),
    tags: z.array(z.string().min(1).max(64)).max(32).optional(),
    entities: z.array(z.string().min(1).max(200)).max(64).optional().describe('people, systems, organizations mentioned'),
    expected_version: z.number().int().min(0).optional().describe('version you read (update and delete)'),
    allow_duplicate: z.boolean().optional(),
    memories: z.array(refSchema).max(20).optional().describe('for flag_contradiction (2+) and ask_question'),
    reason: z.string().max(2_000).optional().describe('why the memories disagree (flag_contradiction)'),
    question: z.string().max(2_000).optional().describe('what is not known (ask_question)'),
    id: z.string().optional().describe('contradiction or question id (resolve)'),
    status: z.enum(['resolved', 'dismissed']).optional().describe('resolve: resolved (settled) or dismissed (not real)'),
    resolution: z.string().max(4_000).optional().describe('resolve: how it was settled, or the answer'),
  }),
  outputSchema: z.object({
    action: z.string(),
    outcome: z.enum(['created', 'updated', 'unchanged', 'duplicate', 'deleted', 'flagged', 'already_flagged', 'asked', 'resolved']),
    memory: memoryOut.optional(),
    duplicates: z.array(duplicateOut),
    contradictions: z.array(contradictionOut),
    question: questionOut.optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

const FEEDBACK_MEMORIES_TOOL = {
  title: 'Report whether memories worked',
  description:
    'Call this at the END of a task for the memories you relied on: outcome "worked" or "failed", with a short note on ' +
    'what went wrong. Later searches rank memories that worked higher, and show a WARNING (when, who, your note) on ' +
    'memories that failed.',
  inputSchema: z.object({
    outcome: z.enum(['worked', 'failed']),
    memories: z.array(refSchema).min(1).max(50),
    note: z.string().max(1_000).optional().describe('what worked, or what went wrong'),
  }),
  outputSchema: z.object({
    outcome: z.enum(['worked', 'failed']),
    updated: z.array(refSchema.extend({ worked: z.number(), failed: z.number() })),
    missing: z.array(refSchema),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};

export function registerBrainTools(server: McpServer, brain: BrainClient, caller: ToolCaller): void {
  const organizationId = caller.organizationId;
  const source = create(SourceSchema, { clientId: caller.clientId, userId: caller.userId });

  server.registerTool(
    'recall_context',
    RECALL_CONTEXT_TOOL,
    (args) =>
      run(async () => {
        if (!args.task?.trim() && !args.keys?.length && !args.entities?.length) {
          return toolError('Give a task (what you are about to do), or entities, or keys to recall.');
        }
        const res = await brain.recallContext({
          organizationId,
          task: args.task ?? '',
          entities: args.entities ?? [],
          keys: (args.keys ?? []).map(toRef),
          namespaces: (args.namespaces ?? []).map(nsEnum),
          tokenBudget: args.token_budget ?? 0,
          limit: args.limit ?? 0,
        });
        const missing = res.missing.map(fromRef);
        const text = [
          res.context,
          missing.length ? `Missing keys: ${missing.map((m) => `${m.namespace}/${m.key}`).join(', ')}` : '',
          res.truncated ? '(Some memories were left out or shortened to fit the budget; raise token_budget or use search_memories.)' : '',
        ].filter(Boolean).join('\n\n');
        return result(text, {
          context: res.context,
          estimated_tokens: res.estimatedTokens,
          truncated: res.truncated,
          memories: res.memories.map((m) => ({
            namespace: nsName(m.memory!.namespace),
            key: m.memory!.key,
            title: m.memory!.title,
            version: Number(m.memory!.version),
            reasons: m.reasons.map((r) => r.toLowerCase()),
            warning: warningJson(m.warning),
          })),
          contradictions: res.contradictions.map(contradictionJson),
          questions: res.questions.map(questionJson),
          missing,
        });
      }),
  );

  server.registerTool(
    'search_memories',
    SEARCH_MEMORIES_TOOL,
    (args) =>
      run(async () => {
        const res = await brain.searchMemories({
          organizationId,
          namespace: nsEnum(args.namespace),
          query: args.query,
          limit: args.limit ?? 0,
          tags: args.tags ?? [],
          entities: args.entities ?? [],
          updatedAfter: args.updated_after ? timestampFromMs(Date.parse(args.updated_after)) : undefined,
          updatedBefore: args.updated_before ? timestampFromMs(Date.parse(args.updated_before)) : undefined,
          tokenBudget: args.token_budget ?? 0,
        });
        const results = res.results.map((r) => ({ ...memoryJson(r.memory!), scores: scoresJson(r.scores), warning: warningJson(r.warning) }));
        const lines = results.map((r, i) => {
          const head = `${i + 1}. [${r.namespace}] ${r.key}${r.title ? ` — ${r.title}` : ''} (v${r.version}, score ${r.scores.final.toFixed(2)}: words ${r.scores.lexical.toFixed(1)}, meaning ${r.scores.semantic.toFixed(2)})`;
          return [head, `   ${clip(r.content.replace(/\s+/g, ' '), 400)}`, r.warning ? `   WARNING: ${r.warning.message}` : ''].filter(Boolean).join('\n');
        });
        const text = results.length
          ? `${lines.join('\n')}${res.truncated ? '\n(More results were cut by token_budget.)' : ''}`
          : `No memory in ${args.namespace} matched (searched ${res.searchedMemories} memories of your organization).`;
        return result(text, { namespace: args.namespace, searched_memories: res.searchedMemories, truncated: res.truncated, results });
      }),
  );

  server.registerTool(
    'fetch_memories',
    FETCH_MEMORIES_TOOL,
    (args) =>
      run(async () => {
        const keys = args.keys ?? [];
        const ids = args.ids ?? [];
        if (!keys.length && !ids.length) return toolError('Give keys (with their namespace) or ids (ctr_… or q_…) to fetch.');
        if (keys.length && !args.namespace) return toolError('Give the namespace of the keys: "knowledge" or "episodes".');
        const [mems, ctrs, qs] = await Promise.all([
          keys.length ? brain.getMemories({ organizationId, namespace: nsEnum(args.namespace!), keys }) : undefined,
          ids.some((i) => i.startsWith('ctr_')) ? brain.listContradictions({ organizationId, ids: ids.filter((i) => i.startsWith('ctr_')) }) : undefined,
          ids.some((i) => i.startsWith('q_')) ? brain.listQuestions({ organizationId, ids: ids.filter((i) => i.startsWith('q_')) }) : undefined,
        ]);
        const memories = (mems?.memories ?? []).map(memoryJson);
        const contradictions = (ctrs?.contradictions ?? []).map(contradictionJson);
        const questions = (qs?.questions ?? []).map(questionJson);
        const missingKeys = mems?.missingKeys ?? [];
        const missingIds = [...(ctrs?.missingIds ?? []), ...(qs?.missingIds ?? [])];
        const parts = [
          ...memories.map((m) => `### ${m.namespace}/${m.key}${m.title ? ` — ${m.title}` : ''} (v${m.version}, updated ${m.updated_at.slice(0, 10)}${m.written_by ? ` by ${m.written_by}` : ''}; worked ${m.worked}, failed ${m.failed})\n${m.content}`),
          ...contradictions.map((c) => `Contradiction ${c.id} (${c.status}): ${c.memories.map((m) => `${m.namespace}/${m.key} v${m.version}`).join(' vs ')}: ${c.reason}${c.resolution ? `\nResolution: ${c.resolution}` : ''}`),
          ...questions.map((q) => `Question ${q.id} (${q.status}): ${q.question}${q.resolution ? `\nAnswer: ${q.resolution}` : ''}`),
          missingKeys.length ? `Not found: ${missingKeys.join(', ')}` : '',
          missingIds.length ? `Unknown ids: ${missingIds.join(', ')}` : '',
        ].filter(Boolean);
        return result(parts.join('\n\n'), { memories, missing_keys: missingKeys, contradictions, questions, missing_ids: missingIds });
      }),
  );

  server.registerTool(
    'manage_memories',
    MANAGE_MEMORIES_TOOL,
    (args) =>
      run(async () => {
        const empty = { duplicates: [], contradictions: [] as ReturnType<typeof contradictionJson>[] };
        switch (args.action) {
          case 'create':
          case 'update': {
            if (!args.namespace || !args.key) return toolError(`${args.action} needs namespace and key.`);
            if (!args.content?.trim()) return toolError(`${args.action} needs content: the memory itself.`);
            if (args.action === 'update' && args.expected_version === undefined) {
              return toolError('update needs expected_version: the version you read with fetch_memories (0 is not valid for update).');
            }
            if (args.action === 'update' && args.expected_version === 0) return toolError('update needs expected_version >= 1; use create for a new key.');
            const res = await brain.putMemory({
              organizationId,
              namespace: nsEnum(args.namespace),
              key: args.key,
              title: args.title ?? '',
              content: args.content,
              tags: args.tags ?? [],
              entities: args.entities ?? [],
              source,
              expectedVersion: BigInt(args.action === 'create' ? 0 : args.expected_version!),
              allowDuplicate: args.allow_duplicate ?? false,
            });
            const duplicates = res.duplicates.map(duplicateJson);
            const contradictions = res.contradictions.map(contradictionJson);
            const outcome =
              res.outcome === WriteOutcome.DUPLICATE ? 'duplicate' : res.outcome === WriteOutcome.UNCHANGED ? 'unchanged' : res.created ? 'created' : 'updated';
            const ref = `${args.namespace}/${args.key}`;
            const lines: string[] = [];
            if (outcome === 'duplicate') {
              lines.push(`Not written: similar memory exists: ${duplicates.map((d) => `${d.namespace}/${d.key} (${d.kind})`).join(', ')}. Update that memory instead, or call again with allow_duplicate: true.`);
            } else {
              lines.push(`${outcome === 'unchanged' ? 'Unchanged' : outcome === 'created' ? 'Created' : 'Updated'} ${ref} (version ${res.memory?.version}).`);
              if (duplicates.length) lines.push(`Similar memories exist: ${duplicates.map((d) => `${d.namespace}/${d.key}`).join(', ')}.`);
            }
            for (const c of contradictions) {
              lines.push(`Flagged contradiction ${c.id} with ${c.memories.filter((m) => `${m.namespace}/${m.key}` !== ref).map((m) => `${m.namespace}/${m.key}`).join(', ')}: ${c.reason}. Fix the wrong memory, then resolve ${c.id}.`);
            }
            return result(lines.join('\n'), {
              action: args.action,
              outcome,
              memory: res.memory ? memoryJson(res.memory) : undefined,
              duplicates,
              contradictions,
            });
          }
          case 'delete': {
            if (!args.namespace || !args.key) return toolError('delete needs namespace and key.');
            await brain.deleteMemory({
              organizationId,
              namespace: nsEnum(args.namespace),
              key: args.key,
              expectedVersion: args.expected_version === undefined ? undefined : BigInt(args.expected_version),
            });
            return result(`Deleted ${args.namespace}/${args.key}.`, { action: 'delete', outcome: 'deleted', ...empty });
          }
          case 'flag_contradiction': {
            if ((args.memories?.length ?? 0) < 2 || !args.reason?.trim()) {
              return toolError('flag_contradiction needs memories (at least 2, as {namespace, key}) and a reason.');
            }
            const res = await brain.flagContradiction({ organizationId, memories: args.memories!.map(toRef), reason: args.reason!, source });
            const c = contradictionJson(res.contradiction!);
            return result(`${res.created ? 'Flagged' : 'Already flagged'} contradiction ${c.id}.`, {
              action: 'flag_contradiction',
              outcome: res.created ? 'flagged' : 'already_flagged',
              duplicates: [],
              contradictions: [c],
            });
          }
          case 'ask_question': {
            if (!args.question?.trim()) return toolError('ask_question needs question: what is not known.');
            const res = await brain.askQuestion({
              organizationId,
              question: args.question,
              memories: (args.memories ?? []).map(toRef),
              entities: args.entities ?? [],
              source,
            });
            const q = questionJson(res.question!);
            return result(`Recorded open question ${q.id}.`, { action: 'ask_question', outcome: 'asked', question: q, ...empty });
          }
          case 'resolve': {
            if (!args.id || !args.status || !args.resolution?.trim()) {
              return toolError('resolve needs id (ctr_… or q_…), status ("resolved" or "dismissed") and resolution.');
            }
            const status = args.status === 'resolved' ? ItemStatus.RESOLVED : ItemStatus.DISMISSED;
            if (args.id.startsWith('ctr_')) {
              const res = await brain.resolveContradiction({ organizationId, id: args.id, status, resolution: args.resolution, source });
              return result(`Contradiction ${args.id} is ${args.status}.`, {
                action: 'resolve',
                outcome: 'resolved',
                duplicates: [],
                contradictions: [contradictionJson(res.contradiction!)],
              });
            }
            if (args.id.startsWith('q_')) {
              const res = await brain.resolveQuestion({ organizationId, id: args.id, status, resolution: args.resolution, source });
              return result(`Question ${args.id} is ${args.status}.`, { action: 'resolve', outcome: 'resolved', question: questionJson(res.question!), ...empty });
            }
            return toolError('id must be a contradiction id (ctr_…) or a question id (q_…).');
          }
        }
      }),
  );

  server.registerTool(
    'feedback_memories',
    FEEDBACK_MEMORIES_TOOL,
    (args) =>
      run(async () => {
        const res = await brain.recordFeedback({
          organizationId,
          memories: args.memories.map(toRef),
          outcome: args.outcome === 'worked' ? Outcome.WORKED : Outcome.FAILED,
          note: args.note ?? '',
          source,
        });
        const updated = res.memories.map((m) => ({ namespace: nsName(m.namespace), key: m.key, worked: m.stats?.worked ?? 0, failed: m.stats?.failed ?? 0 }));
        const missing = res.missing.map(fromRef);
        const text = [
          updated.length ? `Recorded "${args.outcome}" for ${updated.map((u) => `${u.namespace}/${u.key} (worked ${u.worked}, failed ${u.failed})`).join(', ')}.` : '',
          missing.length ? `Not found: ${missing.map((m) => `${m.namespace}/${m.key}`).join(', ')}.` : '',
        ].filter(Boolean).join('\n');
        return result(text, { outcome: args.outcome, updated, missing });
      }),
  );
}
