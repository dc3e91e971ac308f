// A run's first step, under its lease: read the source (the stored upload, or the fetched page),
// chunk it into items and store them. Item ids are the run and the position in the source, and
// each is inserted only if absent, so a replica that takes over a half-extracted run extracts
// again and keeps what was stored (extraction is deterministic). The upload is dropped once the
// items hold it.
import type { SeedingContext } from './context.ts';
import { type Candidate, extractCandidates } from './extract/index.ts';
import { fitKey } from './extract/candidate.ts';
import { fetchPage } from './fetch-source.ts';
import { renewLease, updateRun } from './lease.ts';
import { itemId, partId, type SeedingItemDoc, type SeedingRunDoc } from './records.ts';
import { MAX_UPLOAD_BYTES } from './start.ts';

async function sourceBytes(ctx: SeedingContext, run: SeedingRunDoc): Promise<{ mediaType: string; filename: string; bytes: Uint8Array }> {
  if (run.sourceKind === 'url') {
    const page = await fetchPage(ctx.config, run.sourceName, MAX_UPLOAD_BYTES);
    const url = new URL(run.sourceName);
    return { ...page, filename: `${url.hostname}${url.pathname}` };
  }
  const ids = Array.from({ length: run.parts }, (_, n) => partId(run._id, n));
  const parts = await ctx.store.uploads.getMany(ids);
  if (parts.length !== ids.length)
    throw new Error(`seeding run ${run.runId}: ${ids.length - parts.length} parts of its upload are missing`);
  return { mediaType: run.mediaType, filename: run.sourceName, bytes: Buffer.concat(parts.map((p) => Buffer.from(p.data, 'base64'))) };
}

function itemOf(run: SeedingRunDoc, index: number, c: Candidate): SeedingItemDoc {
  const namespace = c.namespace === 'episodes' || c.namespace === 'knowledge' ? c.namespace : run.namespace;
  return {
    _id: itemId(run._id, index),
    organizationId: run.organizationId,
    runKey: run._id,
    index,
    outcome: c.rejected ? 'rejected' : run.review ? 'awaiting_review' : 'pending',
    namespace,
    key: c.rejected ? '' : fitKey(`${run.keyPrefix}${c.key}`),
    title: c.title,
    content: c.content,
    tags: [...new Set([...run.tags, ...c.tags])].slice(0, 32),
    entities: c.entities,
    ...(c.eventTime ? { eventTime: c.eventTime } : {}),
    origin: c.origin,
    reason: c.rejected ?? '',
    duplicates: [],
    contradictionIds: [],
    version: 0,
    seq: 0,
  };
}

/** Extracts the run's items; returns the run as it then is. Throws SourceError for an unreadable source. */
export async function extractRun(ctx: SeedingContext, held: SeedingRunDoc): Promise<SeedingRunDoc> {
  let run = (await updateRun(ctx, held._id, (r) => void (r.status = 'extracting'), held.leaseId))!;
  const source = await sourceBytes(ctx, run);
  const candidates = extractCandidates(source.mediaType, source.filename, source.bytes);
  for (const [index, candidate] of candidates.entries()) {
    if (index % 200 === 199) run = (await renewLease(ctx, run))!;
    const item = itemOf(run, index, candidate);
    if (await ctx.store.items.get(item._id)) continue;
    // A rejected piece is decided now: it takes its number in the run's sequence (its event).
    if (item.outcome === 'rejected') item.seq = (await ctx.store.sequences.increment(run._id, 'seq', 1, {})).seq;
    await ctx.store.items.put(item, { expect: null });
  }
  run = (await updateRun(
    ctx,
    run._id,
    (r) => {
      r.total = candidates.length;
      r.status = r.review ? 'awaiting_review' : 'writing';
      r.mediaType ||= source.mediaType;
      r.sourceBytes ||= source.bytes.length;
      r.parts = 0;
    },
    run.leaseId,
  ))!;
  for (let n = 0; n < held.parts; n++) await ctx.store.uploads.delete(partId(run._id, n));
  return run;
}
