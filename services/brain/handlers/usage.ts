// What an organization's brain holds, for the Agents API's usage (against the plan's entitlements).
import { create } from '@bufbuild/protobuf';
import { GetUsageResponseSchema, type GetUsageRequest } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';

export async function getUsage(ctx: BrainContext, req: GetUsageRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const memories = await ctx.memories.count({ organizationId, deleted: { $ne: true } });
  return create(GetUsageResponseSchema, { memories: BigInt(memories) });
}
