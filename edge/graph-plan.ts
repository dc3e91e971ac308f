// Whether an organization's plan includes the memory graph (the catalogue's `entity_graph`
// entitlement: Professional and its trial), as the billing service says now, so that an expired
// trial loses the graph on its next request. One check for both ways in: the Brain MCP server's
// graph tools (edge/mcp/brain-server.ts) and the Agents API's graph operations (edge/api/graph.ts).
import type { AppContext } from './context.ts';

/** Undefined when the plan includes the graph; otherwise the name of the plan in force. */
export async function planWithoutGraph(ctx: AppContext, organizationId: string): Promise<string | undefined> {
  const { entitlements, planName } = await ctx.clients.billing.getEntitlements({ organizationId });
  if (entitlements?.entityGraph === true) return undefined;
  return planName || 'current';
}

/** Why the graph is withheld, to end a sentence that names what needs it. */
export function graphPlanRefusal(plan: string): string {
  return (
    `which the ${plan} plan of this organization does not include: it comes with the Professional plan (and its trial). ` +
    'Use recall_context and search_memories instead, or ask an owner of the organization to upgrade.'
  );
}
