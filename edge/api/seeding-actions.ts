// What members do to a seeding run, and its items: cancel it, list its items (by outcome), and
// in review mode approve or reject what it extracted (edge/api/seeding.ts has the rest).
import * as z from 'zod';
import { SeedingOutcome } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { requireWholeMemory } from './memory-access.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import {
  notFound,
  OUTCOME_NAMES,
  SeedingItemSchema,
  seedingItemJson,
  SeedingRunSchema,
  seedingRunJson,
  seedingRunParams,
  tags,
} from './seeding-json.ts';

const CancelSchema = z
  .object({ reason: z.string().max(1_000, { error: 'must be at most 1000 characters' }).optional() })
  .strict()
  .meta({ title: 'CancelSeedingRun', example: { reason: 'wrong folder' } });

const Decision = z.enum(['approve', 'reject'], { error: 'must be approve or reject' });
const Reason = z.string().max(1_000).optional().meta({ description: 'Recorded on rejected items.' });
// Exactly one of `indexes` and `all`, stated in the schema (anyOf) so clients and fuzzers see it.
const ReviewSchema = z
  .union(
    [
      z
        .object({
          decision: Decision,
          indexes: z.array(z.int().min(0)).min(1).max(100).meta({ description: 'The items, by `index`.' }),
          reason: Reason,
        })
        .strict(),
      z.object({ decision: Decision, all: z.literal(true).meta({ description: 'Every item still waiting.' }), reason: Reason }).strict(),
    ],
    { error: 'name the items in indexes (1-100), or set all to true' },
  )
  .meta({ title: 'ReviewSeedingItems', example: { decision: 'approve', indexes: [0, 1, 4] } });

const ReviewResult = z.object({ run: SeedingRunSchema, decided: z.int() }).meta({ title: 'SeedingReview' });

function cancelRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/seeding-runs/:run_id/cancel',
      operationId: 'cancelSeedingRun',
      summary: 'Cancel a seeding run',
      description:
        'Stops the run: items not yet written are skipped; memories already written stay. 409 `run-finished` once it has finished.',
      tags,
      params: seedingRunParams,
      responses: { '200': json(SeedingRunSchema, 'The cancelled run.'), '409': 'Conflict', ...errors, ...notFound },
      handler: async (c) => {
        const body = await readJson(c, CancelSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const { run } = await notFoundAs404(() =>
          ctx.clients.seeding.cancelSeedingRun({ organizationId, runId, reason: body.reason ?? '' }),
        );
        sendJson(c.res, 200, seedingRunJson(run!));
      },
    }),
    body: CancelSchema,
  };
}

function listItemsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/seeding-runs/:run_id/items',
    operationId: 'listSeedingItems',
    summary: "List a seeding run's items",
    description:
      'The candidate memories the run extracted, in source order, each with its outcome (and why, for rejected, failed, duplicate and skipped items); `outcome` narrows the list.',
    tags,
    params: seedingRunParams,
    query: pageQuery.extend({ outcome: z.enum(OUTCOME_NAMES).optional().meta({ description: 'Only items with this outcome.' }) }),
    responses: { '200': json(listEnvelope('items', SeedingItemSchema, 'SeedingItemList'), 'One page of items.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      const { outcome, ...page } = c.input.query;
      const res = await listing(() =>
        notFoundAs404(() =>
          ctx.clients.seeding.listSeedingItems({
            organizationId,
            runId,
            outcome: outcome ? ((OUTCOME_NAMES.indexOf(outcome) + 1) as SeedingOutcome) : SeedingOutcome.UNSPECIFIED,
            ...pageArgs(page),
          }),
        ),
      );
      sendPage(c, 'items', res.items.map(seedingItemJson), res.nextPageToken);
    },
  });
}

function reviewRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/seeding-runs/:run_id/review',
      operationId: 'reviewSeedingItems',
      summary: "Approve or reject a seeding run's items",
      description:
        'Review mode: approves (they are then written) or rejects (never written) items waiting for review, named by `indexes` or `all`. Items no longer waiting are left as they are (`decided` counts those that changed). 409 `run-finished` once the run has finished; 422 for a run without review.',
      tags,
      params: seedingRunParams,
      responses: { '200': json(ReviewResult, 'The run after the review.'), '409': 'Conflict', ...errors, ...notFound },
      handler: async (c) => {
        await requireWholeMemory(ctx, c);
        const body = await readJson(c, ReviewSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const res = await notFoundAs404(() =>
          ctx.clients.seeding.reviewSeedingItems({
            organizationId,
            runId,
            approve: body.decision === 'approve',
            indexes: 'indexes' in body ? body.indexes : [],
            all: 'all' in body,
            reason: body.reason ?? '',
          }),
        );
        sendJson(c.res, 200, { run: seedingRunJson(res.run!), decided: res.decided });
      },
    }),
    body: ReviewSchema,
  };
}

export function seedingActionRoutes(deps: RouteDeps): RestRoute[] {
  return [cancelRoute(deps), listItemsRoute(deps), reviewRoute(deps)];
}
