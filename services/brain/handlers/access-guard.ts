// The checks of a narrowed caller (access.ts) that sit around the handlers rather than in them:
// refusing writes outside the access before they run, and leaving out of read answers what the
// caller may not see (reported as missing, so that existence is not revealed). Searches, recall
// and the duplicate check of a write narrow inside their handlers, where the ranking and the
// limits are applied.
import type {
  Contradiction,
  DeleteMemoryRequest,
  FlagContradictionRequest,
  GetMemoriesRequest,
  ListContradictionsRequest,
  ListMemoriesRequest,
  ListQuestionsRequest,
  MemoryRef,
  OpenQuestion,
  PutMemoriesRequest,
  PutMemoryRequest,
  RecordFeedbackRequest,
  AskQuestionRequest,
  ResolveContradictionRequest,
  ResolveQuestionRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { itemDocId } from '../items-record.ts';
import { namespaceName, type NamespaceName } from '../memory-record.ts';
import { askQuestion, listQuestions, resolveQuestion } from './questions.ts';
import { flagContradiction, listContradictions, requireId, resolveContradiction } from './contradictions.ts';
import { recordFeedback } from './feedback.ts';
import { deleteMemory, getMemories, putMemory } from './memories.ts';
import { putMemories, validatePuts } from './put-memories.ts';
import { listMemories } from './list-memories.ts';
import { requireKey, requireNamespace, requireRefs } from './validate.ts';

const refOf = (r: MemoryRef | undefined) => ({ namespace: namespaceName(r?.namespace ?? 0) as NamespaceName, key: r?.key ?? '' });
const visibleContradiction = (access: MemoryAccess, c: Contradiction) =>
  c.memories.every((m) => access.allows(refOf(m.ref).namespace, refOf(m.ref).key));
const visibleQuestion = (access: MemoryAccess, q: OpenQuestion) => q.memories.every((m) => access.allows(refOf(m).namespace, refOf(m).key));

/** The memories a write changes: its own, and the one it supersedes (marked as corrected). */
function writeRefs(access: MemoryAccess, req: Pick<PutMemoryRequest, 'namespace' | 'key' | 'supersedes'>) {
  const refs = [{ namespace: requireNamespace(req.namespace), key: requireKey('key', req.key) }];
  if (req.supersedes && (access.restricted || access.readOnly)) {
    refs.push({
      namespace: requireNamespace(req.supersedes.namespace, 'supersedes.namespace'),
      key: requireKey('supersedes.key', req.supersedes.key),
    });
  }
  return refs;
}

export async function guardedPutMemory(ctx: BrainContext, req: PutMemoryRequest, access: MemoryAccess) {
  access.requireWrite(writeRefs(access, req));
  return putMemory(ctx, req, access);
}

/** A batch is written only if every one of its writes is within reach. */
export async function guardedPutMemories(ctx: BrainContext, req: PutMemoriesRequest, access: MemoryAccess) {
  validatePuts(req); // each item's errors first, named by index
  access.requireWrite(req.memories.flatMap((m) => writeRefs(access, m)));
  return putMemories(ctx, req, access);
}

export async function guardedDeleteMemory(ctx: BrainContext, req: DeleteMemoryRequest, access: MemoryAccess) {
  access.requireWrite([{ namespace: requireNamespace(req.namespace), key: requireKey('key', req.key) }]);
  return deleteMemory(ctx, req);
}

export async function guardedRecordFeedback(ctx: BrainContext, req: RecordFeedbackRequest, access: MemoryAccess) {
  access.requireWrite(requireRefs('memories', req.memories, 1, 50));
  return recordFeedback(ctx, req);
}

export async function guardedFlagContradiction(ctx: BrainContext, req: FlagContradictionRequest, access: MemoryAccess) {
  access.requireWrite(requireRefs('memories', req.memories, 2, 10));
  return flagContradiction(ctx, req);
}

export async function guardedAskQuestion(ctx: BrainContext, req: AskQuestionRequest, access: MemoryAccess) {
  access.requireWrite(req.memories.length ? requireRefs('memories', req.memories, 1, 20) : []);
  return askQuestion(ctx, req);
}

export async function guardedResolveContradiction(ctx: BrainContext, req: ResolveContradictionRequest, access: MemoryAccess) {
  if (access.restricted || access.readOnly) {
    const organizationId = requireOrganization(req.organizationId);
    const record = await ctx.contradictions.get(itemDocId(organizationId, requireId('id', req.id, 'ctr')));
    access.requireWrite(record?.organizationId === organizationId ? record.members : []);
  }
  return resolveContradiction(ctx, req);
}

export async function guardedResolveQuestion(ctx: BrainContext, req: ResolveQuestionRequest, access: MemoryAccess) {
  if (access.restricted || access.readOnly) {
    const organizationId = requireOrganization(req.organizationId);
    const record = await ctx.questions.get(itemDocId(organizationId, requireId('id', req.id, 'q')));
    access.requireWrite(record?.organizationId === organizationId ? record.members : []);
  }
  return resolveQuestion(ctx, req);
}

export async function guardedGetMemories(ctx: BrainContext, req: GetMemoriesRequest, access: MemoryAccess) {
  const res = await getMemories(ctx, req);
  if (!access.restricted) return res;
  const hidden = res.memories.filter((m) => !access.allows(namespaceName(m.namespace) as NamespaceName, m.key)).map((m) => m.key);
  res.memories = res.memories.filter((m) => !hidden.includes(m.key));
  res.missingKeys = req.keys.filter((k) => res.missingKeys.includes(k) || hidden.includes(k));
  return res;
}

export async function guardedListContradictions(ctx: BrainContext, req: ListContradictionsRequest, access: MemoryAccess) {
  const res = await listContradictions(ctx, req);
  if (!access.restricted) return res;
  const hidden = res.contradictions.filter((c) => !visibleContradiction(access, c)).map((c) => c.id);
  res.contradictions = res.contradictions.filter((c) => !hidden.includes(c.id));
  if (req.ids.length) res.missingIds = req.ids.filter((id) => res.missingIds.includes(id) || hidden.includes(id));
  return res;
}

export async function guardedListQuestions(ctx: BrainContext, req: ListQuestionsRequest, access: MemoryAccess) {
  const res = await listQuestions(ctx, req);
  if (!access.restricted) return res;
  const hidden = res.questions.filter((q) => !visibleQuestion(access, q)).map((q) => q.id);
  res.questions = res.questions.filter((q) => !hidden.includes(q.id));
  if (req.ids.length) res.missingIds = req.ids.filter((id) => res.missingIds.includes(id) || hidden.includes(id));
  return res;
}

/** A narrowed caller's pages leave out what it may not reach (so a page may hold fewer items). */
export async function guardedListMemories(ctx: BrainContext, req: ListMemoriesRequest, access: MemoryAccess) {
  if (access.restricted) access.requireNamespace(requireNamespace(req.namespace));
  const res = await listMemories(ctx, req);
  if (!access.restricted) return res;
  res.memories = res.memories.filter((m) => access.allows(namespaceName(m.namespace) as NamespaceName, m.key));
  return res;
}
