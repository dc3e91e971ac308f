// The Brain's MCP tools: each tool's handler renders a short text for the model and structured
// content for programs (declarations in brain-tool-definitions.ts, conversions in
// brain-tool-json.ts, manage_memories in manage-memories.ts). Every tool calls the brain
// service's RPCs with the organization and client of the verified token, never of input.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type BrainService, Outcome, type Source, SourceSchema } from '../../gen/mindgate/brain/v1/brain_pb.js';
import {
  FEEDBACK_MEMORIES_TOOL,
  FETCH_MEMORIES_TOOL,
  type FeedbackMemoriesArgs,
  type FetchMemoriesArgs,
  MANAGE_MEMORIES_TOOL,
  RECALL_CONTEXT_TOOL,
  type RecallContextArgs,
  SEARCH_MEMORIES_TOOL,
  type SearchMemoriesArgs,
} from './brain-tool-definitions.ts';
import {
  clip,
  contradictionJson,
  fromRef,
  isoArgument,
  memoryJson,
  nsEnum,
  nsName,
  questionJson,
  result,
  run,
  scoresJson,
  toolError,
  toRef,
  toTimestamp,
  warningJson,
} from './brain-tool-json.ts';
import { manageMemories } from './manage-memories.ts';

export interface ToolCaller {
  organizationId: string;
  clientId: string;
  userId: string;
  /** The client's registered name (for a gateway facade client, the original client's). */
  clientName?: string;
  userName?: string;
}

/** What every tool handler acts with: the brain client, and who calls, from the verified token. */
export interface BrainToolContext {
  brain: Client<typeof BrainService>;
  organizationId: string;
  source: Source;
}

async function recallContext({ brain, organizationId }: BrainToolContext, args: RecallContextArgs): Promise<CallToolResult> {
  if (!args.task?.trim() && !args.keys?.length && !args.entities?.length) {
    return toolError('Give a task (what you are about to do), or entities, or keys to recall.');
  }
  const after = isoArgument('after', args.after);
  const before = isoArgument('before', args.before);
  if (typeof after === 'object') return after;
  if (typeof before === 'object') return before;
  const res = await brain.recallContext({
    organizationId,
    task: args.task ?? '',
    entities: args.entities ?? [],
    keys: (args.keys ?? []).map(toRef),
    namespaces: (args.namespaces ?? []).map(nsEnum),
    tokenBudget: args.token_budget ?? 0,
    limit: args.limit ?? 0,
    eventAfter: toTimestamp(after),
    eventBefore: toTimestamp(before),
  });
  const missing = res.missing.map(fromRef);
  const text = [
    res.context,
    missing.length ? `Missing keys: ${missing.map((m) => `${m.namespace}/${m.key}`).join(', ')}` : '',
    res.truncated ? '(Some memories were left out or shortened to fit the budget; raise token_budget or use search_memories.)' : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  return result(text, {
    context: res.context,
    estimated_tokens: res.estimatedTokens,
    truncated: res.truncated,
    memories: res.memories.map((m) => ({
      namespace: nsName(m.memory!.namespace),
      key: m.memory!.key,
      title: m.memory!.title,
      version: Number(m.memory!.version),
      event_time: memoryJson(m.memory!).event_time,
      reasons: m.reasons.map((r) => r.toLowerCase()),
      warning: warningJson(m.warning),
    })),
    contradictions: res.contradictions.map(contradictionJson),
    questions: res.questions.map(questionJson),
    missing,
  });
}

type SearchResultJson = ReturnType<typeof memoryJson> & {
  scores: ReturnType<typeof scoresJson>;
  warning: ReturnType<typeof warningJson>;
  open_contradictions: string[];
};

/** Why a result ranked, naming only the signals that matched: words, meaning, or both. */
function matchedBy(scores: SearchResultJson['scores']): string {
  const by = [
    scores.lexical > 0 ? `words ${scores.lexical.toFixed(1)}` : '',
    scores.semantic > 0 ? `meaning ${scores.semantic.toFixed(2)}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `score ${scores.final.toFixed(2)}${by ? `: ${by}` : ''}`;
}

function searchResultText(r: SearchResultJson, i: number): string {
  const by = r.written_by ? `, by ${r.written_by}` : '';
  const head = `${i + 1}. [${r.namespace}] ${r.key}${r.title ? ` — ${r.title}` : ''} (${r.event_time.slice(0, 10)}, v${r.version}${by}, ${matchedBy(r.scores)})`;
  return [
    head,
    `   ${clip(r.content.replace(/\s+/g, ' '), 400)}`,
    r.superseded_by ? `   HISTORY: superseded by ${r.superseded_by}; read that one.` : '',
    r.open_contradictions.length ? `   CONTRADICTED: open contradiction ${r.open_contradictions.join(', ')} (fetch_memories ids).` : '',
    r.warning ? `   WARNING: ${r.warning.message}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

async function searchMemories({ brain, organizationId }: BrainToolContext, args: SearchMemoriesArgs): Promise<CallToolResult> {
  const after = isoArgument('updated_after', args.updated_after);
  const before = isoArgument('updated_before', args.updated_before);
  const eventAfter = isoArgument('after', args.after);
  const eventBefore = isoArgument('before', args.before);
  if (typeof after === 'object') return after;
  if (typeof before === 'object') return before;
  if (typeof eventAfter === 'object') return eventAfter;
  if (typeof eventBefore === 'object') return eventBefore;
  const res = await brain.searchMemories({
    organizationId,
    namespace: nsEnum(args.namespace),
    query: args.query,
    limit: args.limit ?? 0,
    tags: args.tags ?? [],
    entities: args.entities ?? [],
    updatedAfter: after === undefined ? undefined : timestampFromMs(after),
    updatedBefore: before === undefined ? undefined : timestampFromMs(before),
    tokenBudget: args.token_budget ?? 0,
    eventAfter: toTimestamp(eventAfter),
    eventBefore: toTimestamp(eventBefore),
  });
  const results = res.results.map((r) => ({
    ...memoryJson(r.memory!),
    scores: scoresJson(r.scores),
    warning: warningJson(r.warning),
    open_contradictions: r.openContradictions,
  }));
  const text = results.length
    ? `${results.map(searchResultText).join('\n')}${res.truncated ? '\n(More results were cut by token_budget.)' : ''}`
    : `No memory in ${args.namespace} matched (searched ${res.searchedMemories} memories of your organization).`;
  return result(text, { namespace: args.namespace, searched_memories: res.searchedMemories, truncated: res.truncated, results });
}

async function fetchMemories({ brain, organizationId }: BrainToolContext, args: FetchMemoriesArgs): Promise<CallToolResult> {
  const keys = args.keys ?? [];
  const ids = args.ids ?? [];
  if (!keys.length && !ids.length) return toolError('Give keys (with their namespace) or ids (ctr_… or q_…) to fetch.');
  if (keys.length && !args.namespace) return toolError('Give the namespace of the keys: "knowledge" or "episodes".');
  const unknown = ids.filter((i) => !i.startsWith('ctr_') && !i.startsWith('q_'));
  if (unknown.length) return toolError(`ids are contradiction ids (ctr_…) or question ids (q_…), not ${unknown.join(', ')}.`);
  const [mems, ctrs, qs] = await Promise.all([
    keys.length ? brain.getMemories({ organizationId, namespace: nsEnum(args.namespace!), keys }) : undefined,
    ids.some((i) => i.startsWith('ctr_'))
      ? brain.listContradictions({ organizationId, ids: ids.filter((i) => i.startsWith('ctr_')) })
      : undefined,
    ids.some((i) => i.startsWith('q_')) ? brain.listQuestions({ organizationId, ids: ids.filter((i) => i.startsWith('q_')) }) : undefined,
  ]);
  const memories = (mems?.memories ?? []).map(memoryJson);
  const contradictions = (ctrs?.contradictions ?? []).map(contradictionJson);
  const questions = (qs?.questions ?? []).map(questionJson);
  const missingKeys = mems?.missingKeys ?? [];
  const missingIds = [...(ctrs?.missingIds ?? []), ...(qs?.missingIds ?? [])];
  const parts = [
    ...memories.map(
      (m) =>
        `### ${m.namespace}/${m.key}${m.title ? ` — ${m.title}` : ''} (happened ${m.event_time.slice(0, 10)}, v${m.version}, updated ${m.updated_at.slice(0, 10)}${m.written_by ? ` by ${m.written_by}` : ''}; worked ${m.worked}, failed ${m.failed}${m.supersedes ? `; supersedes ${m.supersedes}` : ''}${m.superseded_by ? `; HISTORY, superseded by ${m.superseded_by}` : ''})\n${m.content}`,
    ),
    ...contradictions.map(
      (c) =>
        `Contradiction ${c.id} (${c.status}): ${c.memories.map((m) => `${m.namespace}/${m.key} v${m.version}`).join(' vs ')}: ${c.reason}${c.resolution ? `\nResolution: ${c.resolution}` : ''}`,
    ),
    ...questions.map((q) => `Question ${q.id} (${q.status}): ${q.question}${q.resolution ? `\nAnswer: ${q.resolution}` : ''}`),
    missingKeys.length ? `Not found: ${missingKeys.join(', ')}` : '',
    missingIds.length ? `Unknown ids: ${missingIds.join(', ')}` : '',
  ].filter(Boolean);
  return result(parts.join('\n\n'), { memories, missing_keys: missingKeys, contradictions, questions, missing_ids: missingIds });
}

async function feedbackMemories({ brain, organizationId, source }: BrainToolContext, args: FeedbackMemoriesArgs): Promise<CallToolResult> {
  const res = await brain.recordFeedback({
    organizationId,
    memories: args.memories.map(toRef),
    outcome: args.outcome === 'worked' ? Outcome.WORKED : Outcome.FAILED,
    note: args.note ?? '',
    source,
  });
  const updated = res.memories.map((m) => ({
    namespace: nsName(m.namespace),
    key: m.key,
    worked: m.stats?.worked ?? 0,
    failed: m.stats?.failed ?? 0,
  }));
  const missing = res.missing.map(fromRef);
  const text = [
    updated.length
      ? `Recorded "${args.outcome}" for ${updated.map((u) => `${u.namespace}/${u.key} (worked ${u.worked}, failed ${u.failed})`).join(', ')}.`
      : '',
    missing.length ? `Not found: ${missing.map((m) => `${m.namespace}/${m.key}`).join(', ')}.` : '',
    args.outcome === 'worked' && updated.some((u) => u.failed > 0)
      ? 'Their last use worked: earlier failures no longer show a WARNING.'
      : '',
  ]
    .filter(Boolean)
    .join('\n');
  return result(text, { outcome: args.outcome, updated, missing });
}

export function registerBrainTools(server: McpServer, brain: Client<typeof BrainService>, caller: ToolCaller): void {
  const t: BrainToolContext = {
    brain,
    organizationId: caller.organizationId,
    source: create(SourceSchema, {
      clientId: caller.clientId,
      userId: caller.userId,
      clientName: caller.clientName ?? '',
      userName: caller.userName ?? '',
    }),
  };
  server.registerTool('recall_context', RECALL_CONTEXT_TOOL, (args) => run(() => recallContext(t, args)));
  server.registerTool('search_memories', SEARCH_MEMORIES_TOOL, (args) => run(() => searchMemories(t, args)));
  server.registerTool('fetch_memories', FETCH_MEMORIES_TOOL, (args) => run(() => fetchMemories(t, args)));
  server.registerTool('manage_memories', MANAGE_MEMORIES_TOOL, (args) => run(() => manageMemories(t, args)));
  server.registerTool('feedback_memories', FEEDBACK_MEMORIES_TOOL, (args) => run(() => feedbackMemories(t, args)));
}
