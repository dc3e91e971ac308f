// Reading runs and their items: get with progress, the organization's runs newest first, and a
// run's items in source order or in the order their outcomes were decided (progress streams).
import { create } from '@bufbuild/protobuf';
import {
  GetSeedingRunResponseSchema,
  ListSeedingItemsResponseSchema,
  ListSeedingRunsResponseSchema,
  SeedingOutcome,
  type GetSeedingRunRequest,
  type ListSeedingItemsRequest,
  type ListSeedingRunsRequest,
} from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import { Code, ConnectError } from '@connectrpc/connect';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import type { SeedingContext } from './context.ts';
import {
  countItems,
  currentSeq,
  type Counts,
  itemProto,
  OUTCOME_NAMES,
  outcomeOf,
  RUN_ID,
  runKey,
  runProto,
  type SeedingRunDoc,
} from './records.ts';

export const emptyCounts = (): Counts => Object.fromEntries(OUTCOME_NAMES.map((n) => [n, 0])) as Counts;

/** The run, or NOT_FOUND (a run of another organization is not found either). */
export async function requireRun(ctx: SeedingContext, organizationId: string, runId: string): Promise<SeedingRunDoc> {
  requireOrganization(organizationId);
  if (!RUN_ID.test(runId)) invalid('run_id', 'must be a seeding run id (sdr_…)');
  const doc = await ctx.store.runs.get(runKey(organizationId, runId));
  if (!doc || doc.organizationId !== organizationId) throw new ConnectError(`seeding run ${runId} not found`, Code.NotFound);
  return doc;
}

export async function runWithProgress(ctx: SeedingContext, doc: SeedingRunDoc) {
  const [counts, seq] = await Promise.all([countItems(ctx.store, doc._id), currentSeq(ctx.store, doc._id)]);
  return runProto(doc, counts, seq);
}

export async function getSeedingRun(ctx: SeedingContext, req: GetSeedingRunRequest) {
  const doc = await requireRun(ctx, req.organizationId, req.runId);
  return create(GetSeedingRunResponseSchema, { run: await runWithProgress(ctx, doc) });
}

export async function listSeedingRuns(ctx: SeedingContext, req: ListSeedingRunsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(
    ctx.store.runs,
    { organizationId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', direction: 'desc', scope: `seeding-runs:${organizationId}` },
  );
  const runs = await Promise.all(page.items.map((doc) => runWithProgress(ctx, doc)));
  return create(ListSeedingRunsResponseSchema, { runs, nextPageToken: page.nextPageToken });
}

export async function listSeedingItems(ctx: SeedingContext, req: ListSeedingItemsRequest) {
  const doc = await requireRun(ctx, req.organizationId, req.runId);
  const filter: Filter = { runKey: doc._id };
  if (req.outcome !== SeedingOutcome.UNSPECIFIED) {
    const outcome = outcomeOf(req.outcome);
    if (!outcome) invalid('outcome', 'is not a seeding outcome');
    filter.outcome = outcome;
  }
  const changed = req.changedAfter !== undefined;
  const page = await findPage(
    ctx.store.items,
    filter,
    { pageSize: req.pageSize, pageToken: req.pageToken },
    changed
      ? { field: 'seq', range: { gte: Number(req.changedAfter) + 1 }, scope: `seeding-changes:${doc._id}:${req.changedAfter}` }
      : { field: 'index', scope: `seeding-items:${doc._id}:${req.outcome}` },
  );
  return create(ListSeedingItemsResponseSchema, { items: page.items.map(itemProto), nextPageToken: page.nextPageToken });
}
