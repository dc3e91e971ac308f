// What the Brain's MCP tools declare: input and output schemas and descriptions that teach the
// usage order of the spec (§4.2). The handlers are in brain-tools.ts and manage-memories.ts.
import { z } from 'zod';

const namespaceSchema = z.enum(['episodes', 'knowledge']).describe('episodes = what happened; knowledge = reusable learnings');
const keySchema = z
  .string()
  .regex(/^[A-Za-z0-9._:/-]{1,200}$/)
  .describe('exact memory key, e.g. "deploy/api-steps"');
const refSchema = z.object({ namespace: namespaceSchema, key: keySchema });
export type NamespaceName = z.infer<typeof namespaceSchema>;

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
const duplicateOut = z.object({
  namespace: namespaceSchema,
  key: z.string(),
  title: z.string(),
  kind: z.enum(['exact', 'near']),
  overlap: z.number(),
  semantic: z.number(),
});

export const SERVER_INSTRUCTIONS =
  'Shared memory of your organization, written and read by all of its agents and people. ' +
  'Start every task with recall_context (or search_memories for one namespace). ' +
  'At the end, record what you learned with manage_memories (knowledge for reusable learnings, episodes for what happened). ' +
  'Then report with feedback_memories whether the memories you relied on worked or failed.';

// Tool definitions are built once: a zod schema costs more to construct than the rest of a
// stateless request, and the server registers every tool on each request.
export const RECALL_CONTEXT_TOOL = {
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
    memories: z.array(
      z.object({
        namespace: namespaceSchema,
        key: z.string(),
        title: z.string(),
        version: z.number(),
        reasons: z.array(z.string()),
        warning: warningOut.optional(),
      }),
    ),
    contradictions: z.array(contradictionOut),
    questions: z.array(questionOut),
    missing: z.array(refSchema),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const SEARCH_MEMORIES_TOOL = {
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

export const FETCH_MEMORIES_TOOL = {
  title: 'Fetch memories, contradictions or questions',
  description:
    'Read whole memories by exact key (with their namespace), or a flagged contradiction (id ctr_…) or open question ' +
    '(id q_…) by id, as named by recall_context, search_memories or manage_memories.',
  inputSchema: z.object({
    namespace: namespaceSchema.optional().describe('namespace of the keys (required with keys)'),
    keys: z.array(keySchema).max(100).optional(),
    ids: z
      .array(z.string().regex(/^(ctr|q)_[a-z2-7]{20}$/))
      .max(100)
      .optional()
      .describe('contradiction (ctr_…) or question (q_…) ids'),
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

export const MANAGE_MEMORIES_TOOL = {
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

export const FEEDBACK_MEMORIES_TOOL = {
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

export type RecallContextArgs = z.infer<typeof RECALL_CONTEXT_TOOL.inputSchema>;
export type SearchMemoriesArgs = z.infer<typeof SEARCH_MEMORIES_TOOL.inputSchema>;
export type FetchMemoriesArgs = z.infer<typeof FETCH_MEMORIES_TOOL.inputSchema>;
export type ManageMemoriesArgs = z.infer<typeof MANAGE_MEMORIES_TOOL.inputSchema>;
export type FeedbackMemoriesArgs = z.infer<typeof FEEDBACK_MEMORIES_TOOL.inputSchema>;
