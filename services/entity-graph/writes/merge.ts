// Moving an entity's relationships to the entity it is merged into: each relationship is asserted
// again on the target with all its citations, then retracted from the source, and the citing
// memories' assertion records are pointed at the new relationship, so that a later update of one
// of those memories retracts the moved relationship as it would have the old one. Safe to run again
// after an interruption: what is left on the source is moved then.
import type { GraphContext } from '../context.ts';
import { assertionDocId, relationshipIdOf, type RelationshipRecord } from '../records.ts';
import { changeCitations, withCitation } from './citations.ts';

const PAGE = 500;

export async function moveRelationships(ctx: GraphContext, organizationId: string, sourceId: string, targetId: string): Promise<number> {
  let moved = 0;
  for (const field of ['subjectId', 'objectId'] as const) {
    for (;;) {
      const page = await ctx.relationships.find({ organizationId, [field]: sourceId, deleted: { $ne: true } }, { limit: PAGE });
      if (page.length === 0) break;
      for (const r of page) {
        await moveOne(ctx, r, sourceId, targetId);
        moved++;
      }
    }
  }
  return moved;
}

async function moveOne(ctx: GraphContext, r: RelationshipRecord, sourceId: string, targetId: string): Promise<void> {
  const swap = (id: string) => (id === sourceId ? targetId : id);
  const next = { subjectId: swap(r.subjectId), predicate: r.predicate, objectId: swap(r.objectId) };
  const old = { subjectId: r.subjectId, predicate: r.predicate, objectId: r.objectId };
  // A relationship between the two merged entities would now point at itself: it is dropped.
  const newId = next.subjectId === next.objectId ? undefined : relationshipIdOf(next.subjectId, next.predicate, next.objectId);
  if (newId) await changeCitations(ctx, r.organizationId, next, (list) => r.citations.reduce((acc, c) => withCitation(acc, c), list));
  await changeCitations(ctx, r.organizationId, old, () => []);
  for (const c of r.citations) await repoint(ctx, r.organizationId, c.namespace, c.key, r.relationshipId, newId);
}

async function repoint(
  ctx: GraphContext,
  organizationId: string,
  namespace: string,
  key: string,
  from: string,
  to: string | undefined,
): Promise<void> {
  const id = assertionDocId(organizationId, namespace, key);
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await ctx.assertions.get(id);
    if (!stored) return;
    const items = stored.items.flatMap((i) => (i.relationshipId !== from ? [i] : to ? [{ ...i, relationshipId: to }] : []));
    const unique = [...new Map(items.map((i) => [i.relationshipId, i])).values()];
    if (await ctx.assertions.put({ ...stored, items: unique, rev: stored.rev + 1 }, { expect: { rev: stored.rev } })) return;
  }
}
