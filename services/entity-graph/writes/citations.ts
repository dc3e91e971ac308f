// Changing the citations of one relationship by compare-and-set: the relationship is created with
// its first citation and becomes a tombstone with its last, so that it exists exactly while some
// memory asserts it. Concurrent writers of the same relationship retry on a lost race, so no
// citation is ever lost.
import { Code, ConnectError } from '@connectrpc/connect';
import type { GraphContext } from '../context.ts';
import {
  isLiveRelationship,
  relationshipDocId,
  relationshipIdOf,
  TOMBSTONE_TTL_MS,
  type CitationRecord,
  type RelationshipRecord,
} from '../records.ts';

export interface Triple {
  subjectId: string;
  predicate: string;
  objectId: string;
}

const ATTEMPTS = 8;

export const sameMemory = (a: Pick<CitationRecord, 'namespace' | 'key'>, b: Pick<CitationRecord, 'namespace' | 'key'>) =>
  a.namespace === b.namespace && a.key === b.key;

/** The list with `citation` in place of the same memory's earlier one. */
export function withCitation(list: CitationRecord[], citation: CitationRecord): CitationRecord[] {
  return [...list.filter((c) => !sameMemory(c, citation)), citation];
}

function sameCitations(a: CitationRecord[], b: CitationRecord[]): boolean {
  return a.length === b.length && a.every((c, i) => JSON.stringify(c) === JSON.stringify(b[i]));
}

/**
 * Applies `change` to the relationship's citations. Returns the live relationship after the
 * change, or undefined when it has none left (or never existed and gained none).
 */
export async function changeCitations(
  ctx: GraphContext,
  organizationId: string,
  triple: Triple,
  change: (citations: CitationRecord[]) => CitationRecord[],
): Promise<RelationshipRecord | undefined> {
  const relationshipId = relationshipIdOf(triple.subjectId, triple.predicate, triple.objectId);
  const id = relationshipDocId(organizationId, relationshipId);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await ctx.relationships.get(id);
    const live = isLiveRelationship(stored) ? stored : undefined;
    const before = live?.citations ?? [];
    const citations = change(before);
    if (sameCitations(before, citations)) return live;
    if (citations.length === 0 && !live) return undefined;
    const now = ctx.now();
    const seq = await ctx.graphs.nextSeq(organizationId);
    const record: RelationshipRecord = {
      _id: id,
      organizationId,
      relationshipId,
      ...triple,
      citations,
      createdAt: live?.createdAt ?? now,
      updatedAt: now,
      rev: (stored?.rev ?? 0) + 1,
      seq,
    };
    if (citations.length === 0) Object.assign(record, { deleted: true, expiresAt: now + TOMBSTONE_TTL_MS });
    if (await ctx.relationships.put(record, { expect: stored ? { rev: stored.rev } : null })) {
      ctx.graphs.applyRelationship(record);
      return record.deleted ? undefined : record;
    }
  }
  throw new ConnectError('relationship changed concurrently, retry', Code.Aborted);
}
