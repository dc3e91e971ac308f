// The steps of deleting an organization, in order. Each service deletes its own data through an
// RPC; the authorization server's records and the Agents API's own are deleted here. Every step
// is safe to repeat and does a bounded batch per call (`done` says whether the step is over), so
// the job (purge-job.ts) can stop between any two calls, on a crash, and resume.
import type { AppContext } from '../../context.ts';
import type { OAuthManagement } from '../../oauth/management.ts';
import { createRevocationStore } from '../../oauth/revocations.ts';
import { IDEMPOTENCY_COLLECTION } from '../idempotency.ts';
import { USAGE_COLLECTION } from '../usage.ts';

export interface StepResult {
  deleted: number;
  done: boolean;
}

export interface PurgeStep {
  name: string;
  run(organizationId: string, batch: number): Promise<StepResult>;
}

export function purgeSteps(ctx: AppContext, management: OAuthManagement): PurgeStep[] {
  const revocations = createRevocationStore(ctx.stores.records, ctx.now);
  const big = (n: bigint) => Number(n);
  return [
    {
      // At once (the request runs it too): no token or key of the organization works any more.
      name: 'close',
      async run(organizationId) {
        await revocations.revokeOrganization(organizationId);
        await ctx.clients.organizations.deleteOrganization({ organizationId });
        return { deleted: 0, done: true };
      },
    },
    { name: 'credentials', run: (organizationId, batch) => management.purgeOrganization(organizationId, batch) },
    {
      name: 'brain',
      async run(organizationId, batchSize) {
        const res = await ctx.clients.brain.deleteOrganizationData({ organizationId, batchSize });
        return { deleted: big(res.deleted), done: res.done };
      },
    },
    {
      name: 'entity_graph',
      async run(organizationId, batchSize) {
        const res = await ctx.clients.entityGraph.deleteOrganizationData({ organizationId, batchSize });
        return { deleted: big(res.deleted), done: res.done };
      },
    },
    {
      name: 'billing',
      async run(organizationId) {
        const res = await ctx.clients.billing.deleteSubscription({ organizationId });
        return { deleted: res.existed ? 1 : 0, done: true };
      },
    },
    {
      // The Agents API's own records: stored answers of Idempotency-Key (they may hold secrets)
      // and the monthly call counts. Rate-limit windows expire within a minute by themselves.
      name: 'api_records',
      async run(organizationId) {
        let deleted = 0;
        for (const name of [IDEMPOTENCY_COLLECTION, USAGE_COLLECTION]) {
          deleted += await ctx.stores.records.collection(name).deleteMany({ organizationId });
        }
        return { deleted, done: true };
      },
    },
    {
      // Last: members, teams, invitations, the audit log. Until then the deletion's audit trail
      // (who asked, when) is in the job record and the process log.
      name: 'agents',
      async run(organizationId, batchSize) {
        const res = await ctx.clients.organizations.purgeOrganizationData({ organizationId, batchSize });
        return { deleted: big(res.deleted), done: res.done };
      },
    },
  ];
}
