// recall_context in one RPC: the keys asked for, the memories mentioning the named entities,
// those the task's search ranks first and those the entity graph ties to the named entities (or
// to those the task names), with the open contradictions and questions touching them, packed
// into a token budget (recall-render.ts).
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  MemoryRefSchema,
  RecallContextResponseSchema,
  RecalledMemorySchema,
  type MemoryRef,
  type RecallContextRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import type { GraphClient } from '../graph-sync.ts';
import { eventRange, eventTimeOf } from '../event-time.ts';
import { toContradiction, toQuestion } from '../items-record.ts';
import { isLive, memoryId, namespaceEnum, refString, toMemory, type NamespaceName } from '../memory-record.ts';
import { hybridSearch } from '../search/hybrid.ts';
import { failureWarning, feedbackScore, recencyScore } from '../search/ranking.ts';
import { estimateTokens } from '../text.ts';
import { listContradictionRecords } from './contradictions.ts';
import { toScores, toWarning } from './memories.ts';
import { listQuestionRecords } from './questions.ts';
import { composeContext, MAX_CONTRADICTIONS, MAX_QUESTIONS, type Picked } from './recall-render.ts';
import { requireNamespace, requireRefs } from './validate.ts';

export { renderContradiction, renderMemoryHeader, renderQuestion } from './recall-render.ts';

/** Entity matches are ranked as if this relevant: a named entity is an explicit request. */
const ENTITY_RELEVANCE = 0.5;
/** Search results less relevant than this share of the best one are left out. */
const MIN_SEARCH_RELEVANCE = 0.15;

interface Recall {
  organizationId: string;
  task: string;
  keys: { namespace: NamespaceName; key: string }[];
  entities: string[];
  namespaces: NamespaceName[];
  budget: number;
  limit: number;
  now: number;
  /** Event times asked for (event_after, event_before). */
  range: { eventAfter?: number; eventBefore?: number };
  /** What the caller may reach (services/brain/access.ts). */
  access: MemoryAccess;
}

type PickedMap = Map<string, Picked>;

function validate(ctx: BrainContext, req: RecallContextRequest, access: MemoryAccess): Recall {
  const organizationId = requireOrganization(req.organizationId);
  const task = requireText('task', req.task.trim(), 4_000);
  const keys = req.keys.length ? requireRefs('keys', req.keys, 1, 20) : [];
  const entities = requireList('entities', req.entities, 20, 200);
  if (!task && !keys.length && !entities.length) invalid('task', 'is required unless keys or entities are given');
  if (req.namespaces.length > 2) invalid('namespaces', 'must have at most 2 items');
  const namespaces: NamespaceName[] = req.namespaces.length
    ? [...new Set(req.namespaces.map((n, i) => requireNamespace(n, `namespaces[${i}]`)))]
    : ['knowledge', 'episodes'];
  if (req.tokenBudget !== 0 && (req.tokenBudget < 200 || req.tokenBudget > 20_000)) {
    invalid('token_budget', `must be 0 (2000) or 200-20000, got ${req.tokenBudget}`);
  }
  if (req.limit > 50) invalid('limit', `must be at most 50, got ${req.limit}`);
  const range = eventRange(req.eventAfter, req.eventBefore);
  // A narrowed caller searches only the namespaces it may reach.
  const searched = namespaces.filter((n) => access.allowsNamespace(n));
  const [budget, limit] = [req.tokenBudget || 2_000, req.limit || 12];
  return { organizationId, task, keys, entities, namespaces: searched, budget, limit, now: ctx.now(), range, access };
}

/** 1. The keys asked for, first and in order; returns the ones that do not exist. */
async function pickKeys(ctx: BrainContext, r: Recall, picked: PickedMap): Promise<MemoryRef[]> {
  if (!r.keys.length) return [];
  const records = (await ctx.memories.getMany(r.keys.map((k) => memoryId(r.organizationId, k.namespace, k.key)))).filter(isLive);
  const missing: MemoryRef[] = [];
  r.keys.forEach((k, i) => {
    // A memory the caller may not reach is missing to it, like one that does not exist.
    const record = records.find((m) => m.namespace === k.namespace && m.key === k.key && r.access.allows(m.namespace, m.key));
    if (!record) {
      missing.push(create(MemoryRefSchema, { namespace: namespaceEnum(k.namespace), key: k.key }));
      return;
    }
    picked.set(refString(k.namespace, k.key), { record, reasons: ['KEY'], warning: failureWarning(record.stats, r.now), rank: 1_000 - i });
  });
  return missing;
}

/** 2. The task searched in each namespace, sharing one query embedding. */
async function pickSearch(ctx: BrainContext, r: Recall, picked: PickedMap): Promise<void> {
  const vector = await ctx.queryEmbeddings.embed(r.task);
  const found = await Promise.all(
    r.namespaces.map((namespace) =>
      hybridSearch(ctx, {
        organizationId: r.organizationId,
        namespace,
        query: r.task,
        vector,
        limit: r.limit,
        filter: { ...r.range, allowKey: r.access.keyFilter(namespace) },
      }),
    ),
  );
  for (const result of found.flatMap((f) => f.results)) {
    // Relevance is relative to the best candidate; the tail would only spend the budget.
    if (result.scores.relevance < MIN_SEARCH_RELEVANCE) continue;
    const ref = refString(result.record.namespace, result.record.key);
    const existing = picked.get(ref);
    if (existing) {
      existing.reasons.push('SEARCH');
      existing.scores = result.scores;
      continue;
    }
    picked.set(ref, {
      record: result.record,
      reasons: ['SEARCH'],
      scores: result.scores,
      warning: result.warning,
      rank: result.scores.final,
    });
  }
}

/** Relationships read per requested entity, each way, from the entity graph. */
const GRAPH_NEIGHBOURS = 20;
/** Entities the graph reads in a task, when the caller names none. */
const TASK_ENTITIES = 5;
/**
 * Longest wait for each call to the graph. Every recall with a task asks the graph, so one that
 * hangs must not hold recall for the client's own deadline (30 s, or none): past this it costs
 * the graph part only (brain-graph.test.ts, a server that never answers).
 */
const GRAPH_TIMEOUT_MS = 3_000;

type GraphRef = { name: string } | { entityId: string };
type Citing = { namespace: NamespaceName; key: string };

/**
 * The graph entities recall reads: those the caller requests, or else those the task names (by
 * name or alias, FindMentionedEntities), which no memory may list among its `entities` when the
 * graph learnt them from relationships read out of memories' text.
 */
async function graphEntities(ctx: BrainContext, graph: GraphClient, r: Recall): Promise<GraphRef[]> {
  if (r.entities.length) return r.entities.map((name) => ({ name }));
  if (!r.task) return [];
  try {
    const res = await graph.findMentionedEntities(
      { organizationId: r.organizationId, text: r.task, limit: TASK_ENTITIES },
      { timeoutMs: GRAPH_TIMEOUT_MS },
    );
    return res.mentions.flatMap((m) => (m.entity ? [{ entityId: m.entity.id }] : []));
  } catch (err) {
    ctx.logger.warn({ err }, "recall_context: the entity graph did not read the task's entities; no graph part");
    return [];
  }
}

/** The memories citing one entity's relationships, in the namespaces recalled; none when the graph does not answer. */
async function citingMemories(ctx: BrainContext, graph: GraphClient, r: Recall, ref: GraphRef): Promise<Citing[]> {
  try {
    const res = await graph.getEntity(
      { organizationId: r.organizationId, ...ref, neighbourLimit: GRAPH_NEIGHBOURS },
      { timeoutMs: GRAPH_TIMEOUT_MS },
    );
    const out: Citing[] = [];
    for (const rel of [...res.outgoing, ...res.incoming]) {
      for (const c of rel.citations) {
        if ((c.namespace === 'knowledge' || c.namespace === 'episodes') && r.namespaces.includes(c.namespace))
          out.push({ namespace: c.namespace, key: c.key });
      }
    }
    return out;
  } catch (err) {
    if (!(err instanceof ConnectError && err.code === Code.NotFound))
      ctx.logger.warn({ err }, 'recall_context: the entity graph did not answer; no memories by graph for this entity');
    return [];
  }
}

/** Whether the organization's plan includes the graph; a billing service that cannot say costs the graph part only. */
async function graphEntitled(ctx: BrainContext, organizationId: string): Promise<boolean> {
  try {
    return (await ctx.graphEntitled?.(organizationId)) ?? true;
  } catch (err) {
    ctx.logger.warn({ err }, 'recall_context: the plan is unknown (billing did not answer); no graph part');
    return false;
  }
}

/**
 * The memories citing the relationships of the requested entities, or of those the task names,
 * in the entity graph (what a service depends on, who owns it...), when the Brain has a graph and
 * the organization's plan includes it. A graph that does not answer costs only this part of the
 * context.
 */
async function graphCitations(ctx: BrainContext, r: Recall): Promise<Citing[]> {
  if (!ctx.graph || !(await graphEntitled(ctx, r.organizationId))) return [];
  const graph = ctx.graph();
  const refs = await graphEntities(ctx, graph, r);
  return (await Promise.all(refs.map((ref) => citingMemories(ctx, graph, r, ref)))).flat();
}

/**
 * 3. The memories mentioning the requested entities, and those citing their relationships in the
 * graph (or, with none requested, the relationships of the entities the task names).
 */
async function pickEntities(ctx: BrainContext, r: Recall, picked: PickedMap): Promise<void> {
  const wanted: { namespace: NamespaceName; key: string; reason?: string }[] = [];
  // The lexical index lists memories by the entities requested; those a task names only reach the graph.
  for (const namespace of r.entities.length ? r.namespaces : []) {
    const index = await ctx.indexes.fresh(r.organizationId, namespace);
    for (const entity of r.entities) {
      const keys = index.keysForEntity(entity).filter((key) => index.matches(key, { ...r.range, allowKey: r.access.keyFilter(namespace) }));
      for (const key of keys.slice(0, r.limit)) wanted.push({ namespace, key });
    }
  }
  const seen = new Set(wanted.map((w) => refString(w.namespace, w.key)));
  for (const c of await graphCitations(ctx, r)) {
    if (seen.has(refString(c.namespace, c.key))) continue;
    // What the caller may reach, in the event times asked for, as for the memories found by entity.
    const index = await ctx.indexes.fresh(r.organizationId, c.namespace);
    if (!index.matches(c.key, { ...r.range, allowKey: r.access.keyFilter(c.namespace) })) continue;
    seen.add(refString(c.namespace, c.key));
    wanted.push({ ...c, reason: 'GRAPH' });
  }
  const fresh = wanted.filter((w) => !picked.has(refString(w.namespace, w.key)));
  const records = fresh.length
    ? (await ctx.memories.getMany(fresh.map((w) => memoryId(r.organizationId, w.namespace, w.key)))).filter(isLive)
    : [];
  for (const w of wanted) {
    const ref = refString(w.namespace, w.key);
    const existing = picked.get(ref);
    const reason = w.reason ?? 'ENTITY';
    if (existing) {
      if (!existing.reasons.includes(reason)) {
        existing.reasons.push(reason);
        if (!existing.reasons.includes('KEY')) existing.rank += ENTITY_RELEVANCE;
      }
      continue;
    }
    const record = records.find((m) => m.namespace === w.namespace && m.key === w.key);
    if (!record) continue;
    const rank = ENTITY_RELEVANCE + 0.2 * feedbackScore(record.stats, r.now) + 0.05 * recencyScore(eventTimeOf(record), r.now);
    picked.set(ref, { record, reasons: [reason], warning: failureWarning(record.stats, r.now), rank });
  }
}

export async function recallContext(ctx: BrainContext, req: RecallContextRequest, access = MemoryAccess.everything) {
  const r = validate(ctx, req, access);
  const picked: PickedMap = new Map();
  const missing = await pickKeys(ctx, r, picked);
  if (r.task) await pickSearch(ctx, r, picked);
  if (r.entities.length || (ctx.graph && r.task)) await pickEntities(ctx, r, picked);

  const ordered = [...picked.values()].sort((a, b) => b.rank - a.rank);
  const chosen = ordered.slice(0, Math.max(r.limit, ordered.filter((p) => p.reasons.includes('KEY')).length));
  // 4. Open contradictions and questions touching the chosen memories or the entities.
  const refs = chosen.map((p) => ({ namespace: p.record.namespace, key: p.record.key }));
  const [allContradictions, allQuestions] = await Promise.all([
    refs.length ? listContradictionRecords(ctx, r.organizationId, refs, 'open', 4 * MAX_CONTRADICTIONS) : [],
    refs.length || r.entities.length ? listQuestionRecords(ctx, r.organizationId, refs, r.entities, 'open', 4 * MAX_QUESTIONS) : [],
  ]);
  // Items naming a memory the caller may not reach are left out.
  const contradictions = allContradictions.filter((c) => access.allowsRefs(c.refs));
  const questions = allQuestions.filter((q) => access.allowsRefs(q.refs));
  // 5. Render within the budget (recall-render.ts).
  const header = r.task ? `Organization memory for: ${r.task.length > 300 ? `${r.task.slice(0, 299)}…` : r.task}` : 'Organization memory';
  const composed = composeContext({ header, chosen, contradictions, questions, entities: r.entities, budget: r.budget });
  return create(RecallContextResponseSchema, {
    memories: composed.included.map((p) =>
      create(RecalledMemorySchema, {
        memory: toMemory(p.record),
        reasons: p.reasons,
        scores: p.scores ? toScores(p.scores) : undefined,
        warning: toWarning(p.warning),
        truncated: p.truncated ?? false,
      }),
    ),
    contradictions: composed.contradictions.map(toContradiction),
    questions: composed.questions.map(toQuestion),
    missing,
    context: composed.context,
    estimatedTokens: estimateTokens(composed.context),
    truncated: composed.truncated || ordered.length > chosen.length,
  });
}
