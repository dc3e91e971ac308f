// An organization's usage this month against its plan's entitlements: memories in its brain
// (brain service), members and runs queued (agents service) and Agents API calls. API calls are counted per
// organization and calendar month (UTC) in the records store, shared by every replica, by the
// same guard step that rate-limits them (rate-limits.ts).
import * as z from 'zod';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import type { RecordCollection, RecordDoc } from '../../services/common/storage/records/interface.ts';
import { EntitlementsSchema, entitlementsJson } from './billing-json.ts';
import { errors, json, orgParams, type RestRoute, type RouteDeps } from './rest-route.ts';

interface UsageDoc extends RecordDoc {
  calls: number;
  /** Whose count it is, so that an organization's deletion takes it (absent on older counts). */
  organizationId?: string;
}

export const USAGE_COLLECTION = 'api_usage';

/** The calendar month (UTC) of `at`: its key, start and end. */
export function monthOf(at: number): { key: string; start: number; end: number } {
  const d = new Date(at);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`, start, end };
}

export interface ApiCallCounter {
  /** Counts one call; never throws (a store outage loses counts, not requests). */
  count(organizationId: string): void;
  read(organizationId: string): Promise<number>;
}

export function createApiCallCounter(ctx: AppContext): ApiCallCounter {
  const usage: RecordCollection<UsageDoc> = ctx.stores.records.collection<UsageDoc>(USAGE_COLLECTION, {
    indexes: [{ fields: ['organizationId'] }],
  });
  const id = (organizationId: string, at: number) => `${organizationId}|${monthOf(at).key}`;
  return {
    count(organizationId) {
      const now = ctx.now();
      // Kept a month past the month's end, so last month's figure can still be read.
      const expiresAt = monthOf(monthOf(now).end).end;
      usage.increment(id(organizationId, now), 'calls', 1, { expiresAt, fields: { organizationId } }).catch((err: unknown) => {
        ctx.logger.warn({ err, organizationId }, 'API call not counted');
      });
    },
    async read(organizationId) {
      return (await usage.get(id(organizationId, ctx.now())))?.calls ?? 0;
    },
  };
}

const Quantity = (description: string) =>
  z.object({ used: z.int(), limit: z.int().nullable().meta({ description: 'null: no limit on this plan.' }) }).meta({ description });

export const UsageSchema = z
  .object({
    plan: z.enum(['starter', 'professional']).meta({ description: 'The plan in force.' }),
    plan_name: z.string(),
    period: z.object({ start: z.string(), end: z.string() }).meta({ description: 'This calendar month (UTC).' }),
    memories: Quantity("Memories in the organization's brain."),
    members: Quantity('Members of the organization.'),
    runs: Quantity("Runs queued this month (new runs and retries), against the plan's runs_per_month."),
    api_calls: Quantity('Authenticated Agents API calls this month.'),
    entitlements: EntitlementsSchema.meta({ description: 'Everything the plan in force grants, for the areas that count their own use.' }),
  })
  .meta({ title: 'Usage' });

export function usageRoute({ ctx }: RouteDeps, calls: ApiCallCounter): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/usage',
    operationId: 'getOrganizationUsage',
    summary: 'Usage this month',
    description:
      "Memories, members, runs queued this month and API calls against the plan's entitlements; `entitlements` lists everything the plan grants (the entity graph, webhook events and runs per month, the API rate limit).",
    tags: ['Organizations'],
    params: orgParams,
    responses: { '200': json(UsageSchema, 'The usage.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const organizationId = c.input.params.organization_id;
      const [entitlements, brain, members, runs, used] = await Promise.all([
        ctx.clients.billing.getEntitlements({ organizationId }),
        ctx.clients.brain.getUsage({ organizationId }),
        ctx.clients.organizations.countMembers({ organizationId }),
        ctx.clients.runUsage.getRunUsage({ organizationId }),
        calls.read(organizationId),
      ]);
      const month = monthOf(ctx.now());
      const granted = entitlementsJson(entitlements.entitlements);
      sendJson(c.res, 200, {
        plan: entitlements.effectivePlan === Plan.PROFESSIONAL ? 'professional' : 'starter',
        plan_name: entitlements.planName,
        period: { start: new Date(month.start).toISOString(), end: new Date(month.end).toISOString() },
        memories: { used: Number(brain.memories), limit: granted.max_memories > 0 ? granted.max_memories : null },
        members: { used: members.count, limit: granted.max_members },
        runs: { used: Number(runs.queued), limit: granted.runs_per_month > 0 ? granted.runs_per_month : null },
        api_calls: { used, limit: null },
        entitlements: granted,
      });
    },
  });
}
