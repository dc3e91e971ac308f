// recall_context in one RPC: the keys asked for, the memories mentioning the named entities and
// those the task's search ranks first, with the open contradictions and questions touching them,
// packed into a token budget.
import { create } from '@bufbuild/protobuf';
import {
  MemoryRefSchema,
  RecallContextResponseSchema,
  RecalledMemorySchema,
  type MemoryRef,
  type RecallContextRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';
import { toContradiction, toQuestion, type ContradictionRecord, type QuestionRecord } from '../items-record.ts';
import { isLive, memoryId, namespaceEnum, refString, toMemory, type MemoryRecord, type NamespaceName } from '../memory-record.ts';
import { hybridSearch, type ResultScores } from '../search/hybrid.ts';
import { failureWarning, feedbackScore, recencyScore, type Warning } from '../search/ranking.ts';
import { estimateTokens } from '../text.ts';
import { listContradictionRecords } from './contradictions.ts';
import { toScores, toWarning } from './memories.ts';
import { listQuestionRecords } from './questions.ts';
import { requireNamespace, requireRefs } from './validate.ts';

interface Picked {
  record: MemoryRecord;
  reasons: string[];
  scores?: ResultScores;
  warning?: Warning;
  rank: number;
  truncated?: boolean;
}

/** Entity matches are ranked as if this relevant: a named entity is an explicit request. */
const ENTITY_RELEVANCE = 0.5;
/** Search results less relevant than this share of the best one are left out. */
const MIN_SEARCH_RELEVANCE = 0.15;
/** Share of the budget the open contradictions and questions may use. */
const ITEMS_SHARE = 0.3;

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function renderMemoryHeader(r: MemoryRecord): string {
  const by = r.source.clientName || r.source.clientId;
  const stats = r.stats.worked || r.stats.failed ? `; worked ${r.stats.worked}, failed ${r.stats.failed}` : '';
  const title = r.title ? ` — ${r.title}` : '';
  return `### ${r.namespace}/${r.key}${title} (v${r.version}, updated ${day(r.updatedAt)}${by ? ` by ${by}` : ''}${stats})`;
}

export function renderContradiction(c: ContradictionRecord): string {
  return `- ${c.id}: ${c.refs.join(' vs ')}: ${clip(c.reason, 300)}`;
}

export function renderQuestion(q: QuestionRecord): string {
  const about = [...q.refs, ...q.entityNames];
  return `- ${q.id}: ${clip(q.question, 300)}${about.length ? ` (about ${about.join(', ')})` : ''}`;
}

export async function recallContext(ctx: BrainContext, req: RecallContextRequest) {
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
  const budget = req.tokenBudget || 2_000;
  const limit = req.limit || 12;
  const now = ctx.now();

  const picked = new Map<string, Picked>();
  const missing: MemoryRef[] = [];
  // 1. Keys asked for, first and in order.
  if (keys.length) {
    const records = (await ctx.memories.getMany(keys.map((k) => memoryId(organizationId, k.namespace, k.key)))).filter(isLive);
    keys.forEach((k, i) => {
      const record = records.find((r) => r.namespace === k.namespace && r.key === k.key);
      if (!record) {
        missing.push(create(MemoryRefSchema, { namespace: namespaceEnum(k.namespace), key: k.key }));
        return;
      }
      picked.set(refString(k.namespace, k.key), {
        record,
        reasons: ['KEY'],
        warning: failureWarning(record.stats, now),
        rank: 1_000 - i,
      });
    });
  }
  // 2. Task search in each namespace, sharing one query embedding.
  if (task) {
    const [vector] = await ctx.stores.embedder.embed([task]);
    const found = await Promise.all(
      namespaces.map((namespace) => hybridSearch(ctx, { organizationId, namespace, query: task, vector, limit })),
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
  // 3. Memories mentioning the entities.
  if (entities.length) {
    const wanted: { namespace: NamespaceName; key: string }[] = [];
    for (const namespace of namespaces) {
      const index = await ctx.indexes.fresh(organizationId, namespace);
      for (const entity of entities) {
        for (const key of index.keysForEntity(entity).slice(0, limit)) wanted.push({ namespace, key });
      }
    }
    const fresh = wanted.filter((w) => !picked.has(refString(w.namespace, w.key)));
    const records = fresh.length
      ? (await ctx.memories.getMany(fresh.map((w) => memoryId(organizationId, w.namespace, w.key)))).filter(isLive)
      : [];
    for (const w of wanted) {
      const ref = refString(w.namespace, w.key);
      const existing = picked.get(ref);
      if (existing) {
        if (!existing.reasons.includes('ENTITY')) {
          existing.reasons.push('ENTITY');
          if (!existing.reasons.includes('KEY')) existing.rank += ENTITY_RELEVANCE;
        }
        continue;
      }
      const record = records.find((r) => r.namespace === w.namespace && r.key === w.key);
      if (!record) continue;
      const rank = ENTITY_RELEVANCE + 0.2 * feedbackScore(record.stats, now) + 0.05 * recencyScore(record.updatedAt, now);
      picked.set(ref, { record, reasons: ['ENTITY'], warning: failureWarning(record.stats, now), rank });
    }
  }

  const ordered = [...picked.values()].sort((a, b) => b.rank - a.rank);
  const chosen = ordered.slice(0, Math.max(limit, ordered.filter((p) => p.reasons.includes('KEY')).length));
  let truncated = ordered.length > chosen.length;

  // 4. Open contradictions and questions touching the chosen memories or the entities.
  const refs = chosen.map((p) => ({ namespace: p.record.namespace, key: p.record.key }));
  const [contradictions, questions] = await Promise.all([
    refs.length ? listContradictionRecords(ctx, organizationId, refs, 'open', 10) : Promise.resolve([]),
    refs.length || entities.length ? listQuestionRecords(ctx, organizationId, refs, entities, 'open', 10) : Promise.resolve([]),
  ]);

  // 5. Render within the budget: header, open items (at most ITEMS_SHARE), then memories.
  const parts: string[] = [];
  let used = 0;
  const add = (text: string) => {
    parts.push(text);
    used += estimateTokens(text) + 1;
  };
  add(task ? `Organization memory for: ${clip(task, 300)}` : 'Organization memory');
  const itemsBudget = budget * ITEMS_SHARE;
  const keptContradictions: ContradictionRecord[] = [];
  const keptQuestions: QuestionRecord[] = [];
  for (const [title, list, render, kept] of [
    ['Open contradictions (resolve with manage_memories):', contradictions, renderContradiction, keptContradictions],
    ['Open questions:', questions, renderQuestion, keptQuestions],
  ] as const) {
    if (!list.length) continue;
    const lines: string[] = [];
    for (const item of list) {
      const line = (render as (x: typeof item) => string)(item);
      if (used + estimateTokens(`${title}\n${lines.join('\n')}\n${line}`) > itemsBudget) {
        truncated = true;
        break;
      }
      lines.push(line);
      (kept as (typeof item)[]).push(item);
    }
    if (lines.length) add(`${title}\n${lines.join('\n')}`);
  }
  const included: Picked[] = [];
  for (const p of chosen) {
    const header = renderMemoryHeader(p.record);
    const warning = p.warning ? `WARNING: ${p.warning.message}` : '';
    const head = [header, warning].filter(Boolean).join('\n');
    const full = `${head}\n${p.record.content}`;
    const remaining = budget - used;
    if (estimateTokens(full) + 1 <= remaining) {
      add(full);
      included.push(p);
      continue;
    }
    truncated = true;
    const room = (remaining - estimateTokens(head) - 3) * 4;
    if (room >= 200) {
      add(`${head}\n${p.record.content.slice(0, room - 1)}…`);
      included.push({ ...p, truncated: true });
    }
    break;
  }
  if (included.length === 0 && chosen.length === 0) add('No memory matched. Record what you learn with manage_memories.');
  const context = parts.join('\n\n');
  return create(RecallContextResponseSchema, {
    memories: included.map((p) =>
      create(RecalledMemorySchema, {
        memory: toMemory(p.record),
        reasons: p.reasons,
        scores: p.scores ? toScores(p.scores) : undefined,
        warning: toWarning(p.warning),
        truncated: p.truncated ?? false,
      }),
    ),
    contradictions: keptContradictions.map(toContradiction),
    questions: keptQuestions.map(toQuestion),
    missing,
    context,
    estimatedTokens: estimateTokens(context),
    truncated,
  });
}
