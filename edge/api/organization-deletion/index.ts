// Deleting an organization: `DELETE /organizations/{organization_id}` (owner only, with the
// organization's slug as confirmation) closes it at once and records a job; the purge worker
// (purge-job.ts, on every replica) then deletes everything the organization owned, service by
// service (steps.ts). docs/api.md, "Deleting an organization", says what goes and when.
import * as z from 'zod';
import type { AppContext } from '../../context.ts';
import { defineApiRoute } from '../../http/api-route.ts';
import { sendJson } from '../../http/respond.ts';
import { RequestValidationError } from '../../http/validation.ts';
import { createOAuthManagement } from '../../oauth/management.ts';
import { callerOf } from '../access.ts';
import { errors, json, notFoundAs404, orgParams, type RestRoute } from '../rest-route.ts';
import { deletionJobs, startPurgeWorker, type DeletionJob, type PurgeWorker } from './purge-job.ts';
import { purgeSteps, type PurgeStep } from './steps.ts';

export const OrganizationDeletionSchema = z
  .object({
    organization_id: z.string(),
    state: z.literal('deleting'),
    requested_at: z.string(),
    purge_after: z.string().meta({ description: 'When the background purge of its data begins (a few seconds later).' }),
  })
  .meta({
    title: 'OrganizationDeletion',
    examples: [
      {
        organization_id: 'org_3hT9xQ2mZr8vKp1L',
        state: 'deleting',
        requested_at: '2026-03-01T12:00:00.000Z',
        purge_after: '2026-03-01T12:00:05.000Z',
      },
    ],
  });

const ConfirmQuery = z.object({
  // Checked by the handler, after the caller is authorized: a caller who may not delete is told
  // so (403), not asked for a confirmation.
  confirm: z
    .string()
    .max(200, { error: 'must be at most 200 characters' })
    .optional()
    .meta({ description: "The organization's slug (or its id, when it has no slug), to confirm the deletion." }),
});

export interface OrganizationDeletion {
  route: RestRoute;
  worker: PurgeWorker;
}

async function recordJob(ctx: AppContext, job: DeletionJob): Promise<void> {
  // A repeated request finds the job already there, which is as good.
  await deletionJobs(ctx).put(job, { expect: null });
}

function deleteOrganizationRoute(ctx: AppContext, close: PurgeStep, worker: PurgeWorker): RestRoute {
  const { delayMs } = ctx.config.api.organizationPurge;
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id',
    operationId: 'deleteOrganization',
    summary: 'Delete an organization',
    description:
      "Deletes the organization and everything it owns. At once: it is listed nowhere, its slug is free, and every access token and API key acting for it stops working at the Agents API and the Brain (within about 2 s on other replicas). Then, starting a few seconds later, in the background and surviving restarts: its memories with their vectors, its entity graph, its OAuth grants and confidential clients, its subscription, its members, teams, invitations, API keys, stored Idempotency-Key answers, usage counts and audit log. Owners only; `confirm` must be the organization's slug.",
    tags: ['Organizations'],
    params: orgParams,
    query: ConfirmQuery,
    responses: {
      '202': json(OrganizationDeletionSchema, 'Deleted; the purge of its data proceeds in the background.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const organizationId = c.input.params.organization_id;
      const { organization } = await notFoundAs404(() => ctx.clients.organizations.getOrganization({ organizationId }));
      const expected = organization!.slug || organizationId;
      if (c.input.query.confirm !== expected) {
        // Required, but checked here so that the matrix (403) comes first.
        throw new RequestValidationError([
          { type: 'value_error', loc: ['query', 'confirm'], msg: `must be the organization's slug, "${expected}"` },
        ]);
      }
      const now = ctx.now();
      const caller = callerOf(c);
      await recordJob(ctx, {
        _id: organizationId,
        organizationId,
        name: organization!.name,
        slug: organization!.slug,
        requestedBy: `${caller.kind}:${caller.subject}`,
        requestedAt: now,
        state: 'pending',
        step: 0,
        deleted: {},
        dueAt: now + delayMs,
        owner: '',
        attempts: 0,
        version: 1,
      });
      try {
        await close.run(organizationId, 1);
      } catch (err) {
        // The job is recorded: its first step closes the organization again, once the service answers.
        ctx.logger.warn({ err, organizationId }, 'organization deletion recorded; closing it is left to the purge job');
      }
      if (delayMs === 0) void worker.poke();
      sendJson(c.res, 202, {
        organization_id: organizationId,
        state: 'deleting',
        requested_at: new Date(now).toISOString(),
        purge_after: new Date(now + delayMs).toISOString(),
      });
    },
  });
}

export function organizationDeletion(ctx: AppContext): OrganizationDeletion {
  const management = createOAuthManagement(ctx.stores.records, ctx.keyEncryption, ctx.config, ctx.now);
  const steps = purgeSteps(ctx, management);
  const worker = startPurgeWorker(ctx, steps, { batch: ctx.config.api.organizationPurge.batch });
  return { route: deleteOrganizationRoute(ctx, steps[0], worker), worker };
}
