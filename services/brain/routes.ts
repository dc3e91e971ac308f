import type { ConnectRouter } from '@connectrpc/connect';
import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { BrainContext } from './context.ts';
import { flagContradiction, listContradictions, resolveContradiction } from './handlers/contradictions.ts';
import { recordFeedback } from './handlers/feedback.ts';
import { deleteMemory, getMemories, putMemory, searchMemories } from './handlers/memories.ts';
import { putMemories } from './handlers/put-memories.ts';
import { askQuestion, listQuestions, resolveQuestion } from './handlers/questions.ts';
import { recallContext } from './handlers/recall.ts';
import { getUsage } from './handlers/usage.ts';

export function brainRoutes(ctx: BrainContext) {
  return (router: ConnectRouter) => {
    router.service(BrainService, {
      putMemory: (req) => putMemory(ctx, req),
      putMemories: (req) => putMemories(ctx, req),
      getMemories: (req) => getMemories(ctx, req),
      searchMemories: (req) => searchMemories(ctx, req),
      deleteMemory: (req) => deleteMemory(ctx, req),
      recordFeedback: (req) => recordFeedback(ctx, req),
      flagContradiction: (req) => flagContradiction(ctx, req),
      listContradictions: (req) => listContradictions(ctx, req),
      resolveContradiction: (req) => resolveContradiction(ctx, req),
      askQuestion: (req) => askQuestion(ctx, req),
      listQuestions: (req) => listQuestions(ctx, req),
      resolveQuestion: (req) => resolveQuestion(ctx, req),
      recallContext: (req) => recallContext(ctx, req),
      getUsage: (req) => getUsage(ctx, req),
    });
  };
}
