// What an organization's brain holds, for the Agents API's usage (against the plan's entitlements).
import { create } from '@bufbuild/protobuf';
import { GetUsageResponseSchema, type GetUsageRequest } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';
import { countLiveMemories } from '../memory-limit.ts';

export async function getUsage(ctx: BrainContext, req: GetUsageRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const memories = await countLiveMemories(ctx.memories, organizationId);
  return create(GetUsageResponseSchema, { memories: BigInt(memories) });
}
