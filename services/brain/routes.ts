import type { ConnectRouter, HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { MemoryAccess } from './access.ts';
import type { BrainContext } from './context.ts';
import {
  guardedAskQuestion,
  guardedDeleteMemory,
  guardedFlagContradiction,
  guardedGetMemories,
  guardedListContradictions,
  guardedListMemories,
  guardedListQuestions,
  guardedPutMemories,
  guardedPutMemory,
  guardedRecordFeedback,
  guardedResolveContradiction,
  guardedResolveQuestion,
} from './handlers/access-guard.ts';
import { searchMemories } from './handlers/memories.ts';
import { deleteOrganizationData } from './handlers/organization-data.ts';
import { recallContext } from './handlers/recall.ts';
import { getUsage } from './handlers/usage.ts';
import { getMemoryVersion, listMemoryVersions } from './handlers/versions.ts';

/** What the call may reach: the MemoryAccess header of a narrowed caller, or everything. */
const accessOf = (hc: HandlerContext) => MemoryAccess.fromHeaders(hc.requestHeader);

type BrainImpl = Partial<ServiceImpl<typeof BrainService>>;

/**
 * Every call keeps its organization's in-memory indexes from eviction until it returns
 * (index-budget.ts), so that a search is never answered from an index dropped under it.
 */
function holdingOrganization(ctx: BrainContext, impl: BrainImpl): BrainImpl {
  const held: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(impl)) {
    const call = handler as (req: { organizationId: string }, hc: HandlerContext) => Promise<unknown>;
    held[name] = (req: { organizationId: string }, hc: HandlerContext) => ctx.indexBudget.holding(req.organizationId, () => call(req, hc));
  }
  return held as BrainImpl;
}

export function brainRoutes(ctx: BrainContext) {
  return (router: ConnectRouter) => {
    router.service(
      BrainService,
      holdingOrganization(ctx, {
        putMemory: (req, hc) => guardedPutMemory(ctx, req, accessOf(hc)),
        putMemories: (req, hc) => guardedPutMemories(ctx, req, accessOf(hc)),
        getMemories: (req, hc) => guardedGetMemories(ctx, req, accessOf(hc)),
        searchMemories: (req, hc) => searchMemories(ctx, req, accessOf(hc)),
        deleteMemory: (req, hc) => guardedDeleteMemory(ctx, req, accessOf(hc)),
        recordFeedback: (req, hc) => guardedRecordFeedback(ctx, req, accessOf(hc)),
        flagContradiction: (req, hc) => guardedFlagContradiction(ctx, req, accessOf(hc)),
        listContradictions: (req, hc) => guardedListContradictions(ctx, req, accessOf(hc)),
        resolveContradiction: (req, hc) => guardedResolveContradiction(ctx, req, accessOf(hc)),
        askQuestion: (req, hc) => guardedAskQuestion(ctx, req, accessOf(hc)),
        listQuestions: (req, hc) => guardedListQuestions(ctx, req, accessOf(hc)),
        resolveQuestion: (req, hc) => guardedResolveQuestion(ctx, req, accessOf(hc)),
        recallContext: (req, hc) => recallContext(ctx, req, accessOf(hc)),
        getUsage: (req) => getUsage(ctx, req),
        deleteOrganizationData: (req, hc) => deleteOrganizationData(ctx, req, accessOf(hc)),
        listMemories: (req, hc) => guardedListMemories(ctx, req, accessOf(hc)),
        listMemoryVersions: (req, hc) => listMemoryVersions(ctx, req, accessOf(hc)),
        getMemoryVersion: (req, hc) => getMemoryVersion(ctx, req, accessOf(hc)),
      }),
    );
  };
}
