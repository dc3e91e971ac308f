// Retrieval evaluation shared by the quality suites and their benchmarks: a labeled set is
// written through the brain's PutMemories RPC (embedding included), then its questions are run
// through the brain's own hybrid search under several weightings, sharing the query embeddings.
import type { Client } from '@connectrpc/connect';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { type BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { BrainContext } from '../../services/brain/context.ts';
import { hybridSearch } from '../../services/brain/search/hybrid.ts';

export interface LabeledMemory {
  namespace: 'knowledge' | 'episodes';
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  event_time?: string;
}

export interface LabeledQuery {
  namespace: 'knowledge' | 'episodes';
  query: string;
  /** The memories holding the evidence (one or more). */
  relevant: string[];
  kind: string;
}

/**
 * Writes the memories 25 per PutMemories call, `parallel` calls in flight, each call allowed two
 * minutes (the client's default 30 s is short for 25 embeddings on a heavily loaded machine).
 */
export async function ingest(brain: Client<typeof BrainService>, organizationId: string, memories: LabeledMemory[], parallel = 2) {
  const batches: LabeledMemory[][] = [];
  for (let i = 0; i < memories.length; i += 25) batches.push(memories.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const res = await brain.putMemories(
          {
            organizationId,
            memories: batch.map((m) => ({
              namespace: m.namespace === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE,
              key: m.key,
              title: m.title,
              content: m.content,
              tags: m.tags,
              entities: m.entities,
              allowDuplicate: true,
              eventTime: m.event_time ? timestampFromMs(Date.parse(m.event_time)) : undefined,
            })),
          },
          { timeoutMs: 120_000 },
        );
        const failed = res.results.find((r) => r.error);
        if (failed) throw new Error(`ingest failed: ${failed.error}`);
      }
    }),
  );
}

export const CUTOFFS = [1, 5, 10, 20] as const;

export interface Metrics {
  /** Share of each question's evidence found in the top k, averaged over the questions. */
  recall: Record<(typeof CUTOFFS)[number], number>;
  /** Mean reciprocal rank of the first evidence memory within the top 20. */
  mrr: number;
  n: number;
}

export interface Report extends Metrics {
  byKind: Record<string, Metrics>;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function summarize(ranks: { found: number[][]; evidence: number }[]): Metrics {
  const recall = Object.fromEntries(CUTOFFS.map((k) => [k, 0])) as Metrics['recall'];
  let rr = 0;
  for (const { found, evidence } of ranks) {
    const positions = found.flat();
    for (const k of CUTOFFS) recall[k] += positions.filter((p) => p < k).length / evidence;
    if (positions.length) rr += 1 / (Math.min(...positions) + 1);
  }
  const n = ranks.length || 1;
  for (const k of CUTOFFS) recall[k] = round(recall[k] / n);
  return { recall, mrr: round(rr / n), n: ranks.length };
}

/** Runs every query through the brain's hybrid search of `ctx` (its weights) at limit 20. */
export async function evaluate(
  ctx: BrainContext,
  organizationId: string,
  queries: LabeledQuery[],
  vectors: Float32Array[],
): Promise<Report> {
  const rows: { kind: string; found: number[][]; evidence: number }[] = [];
  for (const [i, q] of queries.entries()) {
    const { results } = await hybridSearch(ctx, {
      organizationId,
      namespace: q.namespace,
      query: q.query,
      vector: vectors[i],
      limit: 20,
    });
    const keys = results.map((r) => r.record.key);
    rows.push({ kind: q.kind, found: [q.relevant.map((k) => keys.indexOf(k)).filter((p) => p >= 0)], evidence: q.relevant.length });
  }
  const kinds = [...new Set(rows.map((r) => r.kind))].sort();
  return {
    ...summarize(rows),
    byKind: Object.fromEntries(kinds.map((kind) => [kind, summarize(rows.filter((r) => r.kind === kind))])),
  };
}

/** Query embeddings, computed once and shared by every weighting. */
export async function embedQueries(ctx: BrainContext, queries: LabeledQuery[]): Promise<Float32Array[]> {
  return ctx.stores.embedder.embed(queries.map((q) => q.query));
}
