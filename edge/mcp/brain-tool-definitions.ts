// What the Brain's MCP tools declare: input and output schemas and descriptions that teach the
// usage order of the spec (§4.2). The handlers are in brain-tools.ts and manage-memories.ts.
import { z } from 'zod';

/**
 * A choice among fixed values whose error, when missing or wrong, lists the choices in words
 * (the SDK shows the message to the model as the tool's error).
 */
function choice<const T extends readonly [string, ...string[]]>(values: T, meanings: string) {
  const words = values.map((v) => `"${v}"`).join(values.length === 2 ? ' or ' : ', ');
  return z.enum(values, {
    error: (issue) =>
      issue.input === undefined
        ? `missing: give one of ${words} (${meanings})`
        : `${JSON.stringify(issue.input)} is not one of ${words} (${meanings})`,
  });
}

const namespaceSchema = choice(['knowledge', 'episodes'], 'knowledge = reusable learnings, episodes = what happened');
// Lengths and key characters are checked by the brain service, whose errors name the field: the
// limits are not repeated here, where every one costs tokens of each tools/list.
const keySchema = z.string();
const refSchema = z.object({ namespace: namespaceSchema, key: keySchema });
export type NamespaceName = z.infer<typeof namespaceSchema>;
const names = z.array(z.string());
/** ISO 8601, checked by the handler: zod's own date-time pattern costs ~150 tokens of tools/list. */
const isoTime = z.string();

// Output schemas name the top-level fields: clients that validate structured content get their
// shape, and the item fields (docs/brain.md) are not repeated in every tools/list.
const items = z.array(z.unknown());

export const SERVER_INSTRUCTIONS =
  'Shared memory of your organization, written and read by all of its agents and people. ' +
  'Start every task with recall_context (or search_memories for one namespace). ' +
  'At the end, record what you learned with manage_memories (knowledge for reusable learnings, episodes for what happened). ' +
  'Then report with feedback_memories whether the memories you relied on worked or failed.';

// Tool definitions are built once: a zod schema costs more to construct than the rest of a
// stateless request, and the server registers every tool on each request. Their size is held
// under 2,000 tokens in total (test/e2e/brain-mcp.test.ts).
export const RECALL_CONTEXT_TOOL = {
  title: 'Recall context for a task',
  description:
    'Call FIRST in a task: one context block, within a token budget, of the memories for the task (both namespaces), ' +
    'those naming the entities and the keys you ask for, with the open contradictions and questions touching them. ' +
    'WARNING marks memories that failed in use; HISTORY marks superseded ones. ' +
    'At the end: manage_memories to record, feedback_memories to report.',
  inputSchema: z.object({
    task: z.string().optional().describe('what you are about to do'),
    entities: names.optional().describe('people, systems, organizations involved'),
    keys: z.array(refSchema).optional().describe('memories you know you need'),
    namespaces: z.array(namespaceSchema).optional().describe('default both'),
    token_budget: z.number().int().min(200).max(20_000).optional().describe('default 2000'),
    limit: z.number().int().min(1).max(50).optional().describe('default 12'),
    after: isoTime.optional().describe('event time ≥'),
    before: isoTime.optional().describe('event time <'),
  }),
  outputSchema: z.object({
    context: z.string(),
    estimated_tokens: z.number(),
    truncated: z.boolean(),
    memories: items,
    contradictions: items,
    questions: items,
    missing: items,
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const SEARCH_MEMORIES_TOOL = {
  title: 'Search memories',
  description:
    'Search one namespace by words and meaning, with filters; recall_context covers both at once. ' +
    'Results say why they ranked; WARNING (failed in use: prefer another or verify), HISTORY (superseded: read its successor) ' +
    'and open contradictions are marked. Whole memories: fetch_memories.',
  inputSchema: z.object({
    namespace: namespaceSchema,
    query: z.string().min(1),
    limit: z.number().int().min(1).max(50).optional().describe('default 10'),
    tags: z.array(z.string()).optional().describe('all required'),
    entities: names.optional().describe('any of'),
    updated_after: isoTime.optional(),
    updated_before: isoTime.optional(),
    after: isoTime.optional().describe('event time ≥'),
    before: isoTime.optional().describe('event time <'),
    token_budget: z.number().int().min(100).max(50_000).optional(),
  }),
  outputSchema: z.object({ namespace: z.string(), searched_memories: z.number(), truncated: z.boolean(), results: items }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const FETCH_MEMORIES_TOOL = {
  title: 'Fetch memories, contradictions or questions',
  description: 'Read whole memories by key (with their namespace), or contradictions (ctr_…) and questions (q_…) by id.',
  inputSchema: z.object({
    namespace: namespaceSchema.optional(),
    keys: z.array(keySchema).optional(),
    ids: z.array(z.string()).optional(),
  }),
  outputSchema: z.object({
    memories: items,
    missing_keys: z.array(z.string()),
    contradictions: items,
    questions: items,
    missing_ids: z.array(z.string()),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

/**
 * One memory of a batch create or update (manage_memories `items`). tools/list shows only that
 * items are objects (the fields are those of one memory, said in the description); the handler
 * checks each item against this schema.
 */
export const WRITE_ITEM_SCHEMA = z.object({
  namespace: namespaceSchema,
  key: keySchema,
  title: z.string().optional(),
  content: z.string(),
  tags: z.array(z.string()).optional(),
  entities: names.optional(),
  event_time: isoTime.optional(),
  expected_version: z.number().int().min(0).optional(),
  allow_duplicate: z.boolean().optional(),
});

/** One relationship a write states (manage_memories `relationships`), checked by the handler. */
export const RELATIONSHIP_SCHEMA = z.object({ subject: z.string(), predicate: z.string(), object: z.string() }).strict();

export const MANAGE_MEMORIES_TOOL = {
  title: 'Write memories; flag and resolve contradictions and questions',
  description:
    'Call at the END of a task to record what you learned (knowledge: how-tos, facts, decisions) or what happened (episodes). ' +
    'create: new key; update: needs expected_version from a read; delete; ' +
    'a correction: write it with supersedes = the wrong memory (kept as history, its contradictions closed). ' +
    'A write saying the same as another key is NOT stored (update that one, or allow_duplicate); ' +
    'one that disagrees with a close memory is stored and flags a contradiction. ' +
    'flag_contradiction: memories + reason; ask_question: question; resolve: id (ctr_… or q_…), status, resolution.',
  inputSchema: z.object({
    action: choice(['create', 'update', 'delete', 'flag_contradiction', 'ask_question', 'resolve'], 'what to do'),
    namespace: namespaceSchema.optional(),
    key: keySchema.optional(),
    title: z.string().optional(),
    content: z.string().optional().describe('self-contained: a reader has no other context'),
    tags: z.array(z.string()).optional(),
    entities: names.optional(),
    event_time: isoTime.optional().describe('when it happened (default now)'),
    expected_version: z.number().int().min(0).optional(),
    supersedes: refSchema.optional().describe('the memory this write corrects'),
    allow_duplicate: z.boolean().optional(),
    // Listed loosely (fewer tokens); the handler checks each against RELATIONSHIP_SCHEMA.
    relationships: z.array(z.record(z.string(), z.string())).optional().describe('{subject,predicate,object}'),
    memories: z.array(refSchema).optional().describe('flag_contradiction (2+), ask_question'),
    reason: z.string().optional(),
    question: z.string().optional(),
    id: z.string().optional(),
    status: choice(['resolved', 'dismissed'], 'dismissed = not real').optional(),
    resolution: z.string().optional().describe('or the answer'),
    items: z.array(z.record(z.string(), z.unknown())).max(100).optional().describe('several memories: create/update fields each'),
  }),
  outputSchema: z.object({
    action: z.string(),
    outcome: z.string(),
    memory: z.unknown().optional(),
    duplicates: items,
    contradictions: items,
    closed_contradictions: items,
    question: z.unknown().optional(),
    items: items.optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export const FEEDBACK_MEMORIES_TOOL = {
  title: 'Report whether memories worked',
  description:
    'Call at the END of a task for the memories you relied on: "worked", or "failed" with a note on what went wrong. ' +
    'Memories that worked rank higher; a failure shows a WARNING until a later use works.',
  inputSchema: z.object({
    outcome: choice(['worked', 'failed'], 'how the work relying on the memories went'),
    memories: z.array(refSchema).min(1),
    note: z.string().optional(),
  }),
  outputSchema: z.object({ outcome: z.string(), updated: items, missing: items }),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};

export type RecallContextArgs = z.infer<typeof RECALL_CONTEXT_TOOL.inputSchema>;
export type SearchMemoriesArgs = z.infer<typeof SEARCH_MEMORIES_TOOL.inputSchema>;
export type FetchMemoriesArgs = z.infer<typeof FETCH_MEMORIES_TOOL.inputSchema>;
export type ManageMemoriesArgs = z.infer<typeof MANAGE_MEMORIES_TOOL.inputSchema>;
export type FeedbackMemoriesArgs = z.infer<typeof FEEDBACK_MEMORIES_TOOL.inputSchema>;
