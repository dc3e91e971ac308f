// Deleting an organization, in two steps the edge's purge job (edge/api/organization-deletion/)
// drives: DeleteOrganization closes it at once (the organization record and its API keys go, so
// it is listed nowhere, no key of it works and its slug is free), then PurgeOrganizationData
// deletes everything else that was its own, a batch per call, until nothing is left. Both are
// safe to repeat, which is what lets an interrupted deletion finish.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteOrganizationResponseSchema,
  PurgeOrganizationDataResponseSchema,
  type DeleteOrganizationRequest,
  type PurgeOrganizationDataRequest,
} from '../../../gen/mindgate/agents/v1/organizations_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { purgeBatch, purgeBatchOf } from '../../common/storage/records/purge.ts';

export interface OrganizationDeletionContext {
  organizations: RecordCollection<RecordDoc>;
  apiKeys: RecordCollection<RecordDoc>;
  /** Everything else keyed by organizationId, in the order it is purged. */
  owned: RecordCollection<RecordDoc>[];
  /**
   * What must stop with the organization at once, not batch by batch (its MCP servers, which the
   * gateway would otherwise go on serving): run before the organization record goes, so a repeat
   * of an interrupted deletion runs them again.
   */
  closeWith?: ((organizationId: string) => Promise<void>)[];
}

export async function deleteOrganization(ctx: OrganizationDeletionContext, req: DeleteOrganizationRequest) {
  const organizationId = requireOrganization(req.organizationId);
  for (const close of ctx.closeWith ?? []) await close(organizationId);
  await ctx.apiKeys.deleteMany({ organizationId });
  const existed = await ctx.organizations.delete(organizationId);
  return create(DeleteOrganizationResponseSchema, { existed });
}

export async function purgeOrganizationData(ctx: OrganizationDeletionContext, req: PurgeOrganizationDataRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (await ctx.organizations.get(organizationId)) {
    throw new ConnectError(`organization "${organizationId}" still exists: delete it first`, Code.FailedPrecondition);
  }
  const targets = [ctx.apiKeys, ...ctx.owned].map((collection) => ({ collection, filter: { organizationId } }));
  const { deleted, done } = await purgeBatchOf(targets, purgeBatch(req.batchSize));
  return create(PurgeOrganizationDataResponseSchema, { deleted: BigInt(deleted), done });
}
