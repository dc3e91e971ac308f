// PutMemories: several writes of one organization in one call, for seeding and imports. Each
// write is exactly a PutMemory (duplicates, contradictions, versions), but their texts are
// embedded together first: the embedder spreads one call over its worker threads, where
// one-text calls pay a message and a model run each.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { PutMemoriesResponseSchema, PutMemoriesResultSchema, type PutMemoriesRequest } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { memoryText } from '../memory-record.ts';
import { type MemoryWrite, validatePut, writeMemory } from './memories.ts';

export const MAX_BATCH = 100;

/** The writes of a request, validated; INVALID_ARGUMENT names the item. */
export function validatePuts(req: PutMemoriesRequest): MemoryWrite[] {
  const organizationId = requireOrganization(req.organizationId);
  if (req.memories.length === 0) invalid('memories', 'must hold at least one write');
  if (req.memories.length > MAX_BATCH) invalid('memories', `must have at most ${MAX_BATCH} items, got ${req.memories.length}`);
  return req.memories.map((m, i) => {
    if (m.organizationId && m.organizationId !== organizationId) {
      invalid(`memories[${i}].organization_id`, 'must be empty or the request organization_id');
    }
    try {
      return validatePut({ ...m, organizationId });
    } catch (error) {
      if (error instanceof ConnectError) throw new ConnectError(`memories[${i}].${error.rawMessage}`, error.code);
      throw error;
    }
  });
}

/** Errors of one write that leave the others to be written. */
const PER_WRITE = new Set([Code.FailedPrecondition, Code.Aborted, Code.Unavailable, Code.NotFound]);

/** `access` narrows each write's duplicate check; access-guard.ts refuses writes outside it first. */
export async function putMemories(ctx: BrainContext, req: PutMemoriesRequest, access = MemoryAccess.everything) {
  const writes = validatePuts(req);
  const vectors = await ctx.stores.embedder.embed(writes.map(memoryText));
  const results = [];
  // One after the other: a later write's duplicate check sees the earlier ones, and two writes
  // of one key apply in order.
  for (const [i, w] of writes.entries()) {
    try {
      results.push(create(PutMemoriesResultSchema, { response: await writeMemory(ctx, w, { vector: vectors[i], access }) }));
    } catch (error) {
      if (!(error instanceof ConnectError) || !PER_WRITE.has(error.code)) throw error;
      results.push(create(PutMemoriesResultSchema, { error: error.rawMessage, errorCode: codeName(error.code) }));
    }
  }
  return create(PutMemoriesResponseSchema, { results });
}

/** FAILED_PRECONDITION for Code.FailedPrecondition: the gRPC name a client recognizes. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}
