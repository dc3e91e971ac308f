// The JSON shapes of memory seeding on the REST API (edge/api/seeding.ts): runs, their
// progress and items, as the brain's SeedingService describes them.
import * as z from 'zod';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { SeedingItem, SeedingRun } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { iso, OrganizationId } from './rest-route.ts';

export const tags = ['Memory seeding'];
export const notFound = { '404': 'NotFound' } as const;
export const UPLOAD_TYPES = ['text/markdown', 'text/plain', 'text/html', 'application/jsonl', 'application/x-ndjson', 'application/zip'];
export const STATUS_NAMES = ['queued', 'extracting', 'awaiting_review', 'writing', 'succeeded', 'failed', 'cancelled'] as const;
export const OUTCOME_NAMES = [
  'pending',
  'awaiting_review',
  'approved',
  'stored',
  'duplicate',
  'contradiction',
  'unchanged',
  'rejected',
  'failed',
  'skipped',
] as const;

export const SeedingRunId = z
  .string()
  .regex(/^sdr_[a-z2-7]{20}$/, { error: 'must be a seeding run id (sdr_...)' })
  .meta({ description: 'Seeding run id.', example: 'sdr_k3q7v2mz5wx4abcdnp6r' });
export const seedingRunParams = z.object({ organization_id: OrganizationId, run_id: SeedingRunId });
export const NamespaceName = z.enum(['knowledge', 'episodes'], { error: 'must be knowledge or episodes' });
export const KeyPrefix = z
  .string()
  .regex(/^[A-Za-z0-9._:/-]{0,100}$/, { error: 'must be at most 100 characters of A-Z a-z 0-9 . _ : / -' })
  .meta({ description: 'Put before every derived key, e.g. `docs/`.', example: 'docs/' });
export const Tag = z.string().trim().min(1, { error: 'must not be empty' }).max(64, { error: 'must be at most 64 characters' });

const Progress = z
  .object(Object.fromEntries([['total', z.int()], ...OUTCOME_NAMES.map((n) => [n, z.int()])]) as Record<string, z.ZodInt>)
  .meta({ title: 'SeedingProgress', description: 'Items by outcome; `total` once the source is extracted.' });

export const SeedingRunSchema = z
  .object({
    id: z.string().meta({ example: 'sdr_k3q7v2mz5wx4abcdnp6r' }),
    organization_id: z.string(),
    status: z.enum(STATUS_NAMES),
    source: z.object({
      kind: z.enum(['upload', 'url']),
      name: z.string().meta({ description: "The upload's file name, or the URL." }),
      media_type: z.string(),
      bytes: z.int(),
    }),
    namespace: NamespaceName,
    key_prefix: z.string(),
    tags: z.array(z.string()),
    review: z.boolean().meta({ description: 'Extracted memories wait for approval before they are written.' }),
    progress: Progress,
    error: z.string().meta({ description: 'Why it failed or was cancelled.' }),
    stop_reason: z.string().meta({ description: '`plan-limit`, `source` or `cancelled` when it stopped early.' }),
    created_by: z.string(),
    attempt: z.int().meta({ description: 'How many times a replica took it (2 or more after a takeover).' }),
    seq: z.int().meta({ description: 'Items decided so far (the event id of the progress stream).' }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ title: 'SeedingRun' });

export const SeedingItemSchema = z
  .object({
    index: z.int().meta({ description: 'Position in the source.' }),
    outcome: z.enum(OUTCOME_NAMES),
    namespace: NamespaceName,
    key: z.string(),
    title: z.string(),
    content: z.string(),
    tags: z.array(z.string()),
    entities: z.array(z.string()),
    origin: z.string().meta({ description: 'Where in the source.', example: 'runbooks/deploy.md#rollback' }),
    reason: z.string().meta({ description: 'Why it was rejected, failed, skipped or is a duplicate.' }),
    duplicates: z.array(z.object({ namespace: NamespaceName, key: z.string() })),
    contradictions: z.array(z.string()).meta({ description: 'Contradictions the write flagged.' }),
    version: z.int(),
    seq: z.int(),
  })
  .meta({ title: 'SeedingItem' });

const ns = (n: Namespace) => (n === Namespace.EPISODES ? 'episodes' : 'knowledge');

export function seedingRunJson(r: SeedingRun) {
  const p = r.progress;
  return {
    id: r.runId,
    organization_id: r.organizationId,
    status: STATUS_NAMES[r.status - 1] ?? 'queued',
    source: {
      kind: r.sourceKind === 'url' ? ('url' as const) : ('upload' as const),
      name: r.sourceName,
      media_type: r.mediaType,
      bytes: Number(r.sourceBytes),
    },
    namespace: ns(r.namespace),
    key_prefix: r.keyPrefix,
    tags: r.tags,
    review: r.review,
    progress: {
      total: p?.total ?? 0,
      pending: p?.pending ?? 0,
      awaiting_review: p?.awaitingReview ?? 0,
      approved: p?.approved ?? 0,
      stored: p?.stored ?? 0,
      duplicate: p?.duplicate ?? 0,
      contradiction: p?.contradiction ?? 0,
      unchanged: p?.unchanged ?? 0,
      rejected: p?.rejected ?? 0,
      failed: p?.failed ?? 0,
      skipped: p?.skipped ?? 0,
    },
    error: r.error,
    stop_reason: r.stopReason,
    created_by: r.createdBy,
    attempt: r.attempt,
    seq: Number(r.seq),
    created_at: iso(r.createTime),
    updated_at: iso(r.updateTime),
    finished_at: iso(r.finishTime),
  };
}

export const seedingItemJson = (i: SeedingItem) => ({
  index: i.index,
  outcome: OUTCOME_NAMES[i.outcome - 1] ?? 'pending',
  namespace: ns(i.namespace),
  key: i.key,
  title: i.title,
  content: i.content,
  tags: i.tags,
  entities: i.entities,
  origin: i.origin,
  reason: i.reason,
  duplicates: i.duplicates.map((d) => ({ namespace: ns(d.namespace), key: d.key })),
  contradictions: i.contradictionIds,
  version: Number(i.version),
  seq: Number(i.seq),
});
