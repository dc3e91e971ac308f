// What one memory asserts, kept in graph_assertions so that an update retracts exactly what the
// memory stopped saying and a deletion everything it said. A sync first records the union of the
// old and new assertions as `touched`, then changes the relationships, then records the result:
// a sync interrupted half-way leaves `touched`, and the next one retracts from it too.
import { Code, ConnectError } from '@connectrpc/connect';
import { CitationOrigin } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { GraphContext } from '../context.ts';
import { assertionDocId, relationshipDocId, type AssertionItem, type AssertionRecord, type RelationshipRecord } from '../records.ts';
import { changeCitations, sameMemory, withCitation, type Triple } from './citations.ts';

export interface MemoryVersion {
  organizationId: string;
  namespace: string;
  key: string;
  version: number;
  title: string;
}

export interface Desired {
  triple: Triple;
  origin: CitationOrigin;
}

export interface SyncOutcome {
  relationships: RelationshipRecord[];
  retracted: number;
  stale: boolean;
}

const ATTEMPTS = 8;

async function writeAssertion(
  ctx: GraphContext,
  stored: AssertionRecord | undefined,
  next: Omit<AssertionRecord, 'rev'>,
): Promise<AssertionRecord | undefined> {
  const record = { ...next, rev: (stored?.rev ?? 0) + 1 } as AssertionRecord;
  if (!record.touched) delete record.touched;
  return (await ctx.assertions.put(record, { expect: stored ? { rev: stored.rev } : null })) ? record : undefined;
}

/** The relationship's triple, read from its record (for retracting ids whose triple is not at hand). */
async function tripleOf(ctx: GraphContext, organizationId: string, relationshipId: string): Promise<Triple | undefined> {
  const r = await ctx.relationships.get(relationshipDocId(organizationId, relationshipId));
  return r ? { subjectId: r.subjectId, predicate: r.predicate, objectId: r.objectId } : undefined;
}

/** Removes the memory's citation from a relationship; true when it had one. */
export async function dropCitation(
  ctx: GraphContext,
  organizationId: string,
  relationshipId: string,
  memory: { namespace: string; key: string },
): Promise<boolean> {
  const triple = await tripleOf(ctx, organizationId, relationshipId);
  if (!triple) return false;
  let had = false;
  await changeCitations(ctx, organizationId, triple, (list) => {
    had = list.some((c) => sameMemory(c, memory));
    return list.filter((c) => !sameMemory(c, memory));
  });
  return had;
}

/** Makes the memory assert exactly `desired` (plus what was asserted of it by hand). */
export async function syncAssertions(ctx: GraphContext, memory: MemoryVersion, desired: Map<string, Desired>): Promise<SyncOutcome> {
  const id = assertionDocId(memory.organizationId, memory.namespace, memory.key);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await ctx.assertions.get(id);
    if (stored && stored.version > memory.version) return { relationships: [], retracted: 0, stale: true };
    const manual = new Set((stored?.items ?? []).filter((i) => i.origin === CitationOrigin.MANUAL).map((i) => i.relationshipId));
    const previous = new Set([...(stored?.items ?? []).map((i) => i.relationshipId), ...(stored?.touched ?? [])]);
    const items: AssertionItem[] = [...desired].map(([relationshipId, d]) => ({ relationshipId, origin: d.origin }));
    for (const relationshipId of manual) if (!desired.has(relationshipId)) items.push({ relationshipId, origin: CitationOrigin.MANUAL });
    const base = { _id: id, organizationId: memory.organizationId, namespace: memory.namespace, key: memory.key, version: memory.version };
    const marked = await writeAssertion(ctx, stored, {
      ...base,
      items: stored?.items ?? [],
      touched: [...new Set([...previous, ...desired.keys()])],
    });
    if (!marked) continue;
    let retracted = 0;
    for (const relationshipId of previous) {
      if (desired.has(relationshipId) || manual.has(relationshipId)) continue;
      if (await dropCitation(ctx, memory.organizationId, relationshipId, memory)) retracted++;
    }
    const relationships: RelationshipRecord[] = [];
    for (const item of items) {
      const d = desired.get(item.relationshipId);
      const triple = d?.triple ?? (await tripleOf(ctx, memory.organizationId, item.relationshipId));
      if (!triple) continue;
      const citation = {
        namespace: memory.namespace,
        key: memory.key,
        version: memory.version,
        origin: item.origin,
        title: memory.title,
        assertedAt: ctx.now(),
      };
      const written = await changeCitations(ctx, memory.organizationId, triple, (list) => withCitation(list, citation));
      if (written) relationships.push(written);
    }
    if (!(await writeAssertion(ctx, marked, { ...base, items }))) continue;
    return { relationships, retracted, stale: false };
  }
  throw new ConnectError(`memory "${memory.key}" was synced concurrently, retry`, Code.Aborted);
}

/** Retracts everything the memory asserted and forgets it. */
export async function forgetAssertions(ctx: GraphContext, organizationId: string, namespace: string, key: string): Promise<number> {
  const id = assertionDocId(organizationId, namespace, key);
  const stored = await ctx.assertions.get(id);
  if (!stored) return 0;
  let retracted = 0;
  for (const relationshipId of new Set([...stored.items.map((i) => i.relationshipId), ...(stored.touched ?? [])])) {
    if (await dropCitation(ctx, organizationId, relationshipId, { namespace, key })) retracted++;
  }
  await ctx.assertions.delete(id);
  return retracted;
}

/** Records one relationship asserted by hand, citing the memory (AssertRelationship). */
export async function addManualAssertion(
  ctx: GraphContext,
  memory: MemoryVersion,
  triple: Triple,
  relationshipId: string,
): Promise<RelationshipRecord> {
  const id = assertionDocId(memory.organizationId, memory.namespace, memory.key);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const stored = await ctx.assertions.get(id);
    const items = stored?.items ?? [];
    const has = items.some((i) => i.relationshipId === relationshipId);
    const next = has ? items : [...items, { relationshipId, origin: CitationOrigin.MANUAL }];
    const written = await writeAssertion(ctx, stored, {
      _id: id,
      organizationId: memory.organizationId,
      namespace: memory.namespace,
      key: memory.key,
      version: Math.max(stored?.version ?? 0, memory.version),
      items: next,
      touched: stored?.touched,
    });
    if (!written) continue;
    const existingOrigin = items.find((i) => i.relationshipId === relationshipId)?.origin;
    const citation = {
      namespace: memory.namespace,
      key: memory.key,
      version: memory.version,
      origin: existingOrigin ?? CitationOrigin.MANUAL,
      title: memory.title,
      assertedAt: ctx.now(),
    };
    const relationship = await changeCitations(ctx, memory.organizationId, triple, (list) => withCitation(list, citation));
    if (relationship) return relationship;
  }
  throw new ConnectError('relationship changed concurrently, retry', Code.Aborted);
}
