import type { ConnectRouter } from '@connectrpc/connect';
import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { BrainContext } from './context.ts';
import { deleteMemory, getMemories, putMemory, searchMemories } from './handlers/memories.ts';

export function brainRoutes(ctx: BrainContext) {
  return (router: ConnectRouter) => {
    router.service(BrainService, {
      putMemory: (req) => putMemory(ctx, req),
      getMemories: (req) => getMemories(ctx, req),
      searchMemories: (req) => searchMemories(ctx, req),
      deleteMemory: (req) => deleteMemory(ctx, req),
    });
  };
}
