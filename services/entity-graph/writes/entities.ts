// Creating entities as memories mention them. A name (or alias) belongs to one entity: the
// graph_names record claims it by insert-if-absent, so two replicas naming "Payments API" at the
// same moment end up with one entity. A claim whose entity does not list the name (a creation
// that lost a race for its id, or was interrupted) is dangling and is taken over.
import { Code, ConnectError } from '@connectrpc/connect';
import type { GraphContext } from '../context.ts';
import { entityDocId, nameDocId, normalizeName, slugOf, type EntityRecord } from '../records.ts';
import type { KindName } from '../vocabulary.ts';

const ATTEMPTS = 6;
/** Merges of merges are followed this many hops. */
const MERGE_HOPS = 8;

/** The live entity with this id, following merges. */
export async function liveEntity(ctx: GraphContext, organizationId: string, entityId: string): Promise<EntityRecord | undefined> {
  let id = entityId;
  for (let hop = 0; hop < MERGE_HOPS; hop++) {
    const record = await ctx.entities.get(entityDocId(organizationId, id));
    if (!record) return undefined;
    if (record.mergedInto === undefined) return record;
    id = record.mergedInto;
  }
  return undefined;
}

/** The entity a name or alias belongs to, by the write-time authority (not the in-memory index). */
export async function entityNamed(ctx: GraphContext, organizationId: string, normalized: string): Promise<EntityRecord | undefined> {
  const claim = await ctx.names.get(nameDocId(organizationId, normalized));
  if (!claim) return undefined;
  const entity = await liveEntity(ctx, organizationId, claim.entityId);
  return entity?.names.includes(normalized) ? entity : undefined;
}

/** Trims and collapses whitespace; the name as shown. */
export function displayName(raw: string): string {
  return raw.normalize('NFKC').trim().replace(/\s+/g, ' ');
}

async function freeSlug(ctx: GraphContext, organizationId: string, name: string): Promise<string> {
  const base = slugOf(name);
  for (let i = 1; i <= 50; i++) {
    const id = i === 1 ? base : `${base}-${i}`;
    if (!(await ctx.entities.get(entityDocId(organizationId, id)))) return id;
  }
  throw new ConnectError(`too many entities named like "${name}"`, Code.ResourceExhausted);
}

/** The entity named `rawName`, created when no entity has that name or alias. */
export async function ensureEntity(ctx: GraphContext, organizationId: string, rawName: string, kind: KindName): Promise<EntityRecord> {
  const name = displayName(rawName);
  const normalized = normalizeName(name);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const claim = await ctx.names.get(nameDocId(organizationId, normalized));
    if (claim) {
      const entity = await liveEntity(ctx, organizationId, claim.entityId);
      if (entity?.names.includes(normalized)) return kind && !entity.kind ? setKind(ctx, entity, kind) : entity;
    }
    const entityId = await freeSlug(ctx, organizationId, name);
    const claimed = await ctx.names.put(
      { _id: nameDocId(organizationId, normalized), organizationId, entityId },
      { expect: claim ? { entityId: claim.entityId } : null },
    );
    if (!claimed) continue;
    const now = ctx.now();
    const record: EntityRecord = {
      _id: entityDocId(organizationId, entityId),
      organizationId,
      entityId,
      name,
      kind,
      aliases: [],
      description: '',
      names: [normalized],
      createdAt: now,
      updatedAt: now,
      version: 1,
      rev: 1,
      seq: await ctx.graphs.nextSeq(organizationId),
    };
    if (await ctx.entities.put(record, { expect: null })) {
      ctx.graphs.applyEntity(record);
      return record;
    }
  }
  throw new ConnectError(`entity "${name}" changed concurrently, retry`, Code.Aborted);
}

/** Writes a changed entity by compare-and-set on `rev`; false when it changed meanwhile. */
export async function writeEntity(
  ctx: GraphContext,
  stored: EntityRecord,
  changes: Partial<EntityRecord>,
  bumpVersion = true,
): Promise<EntityRecord | undefined> {
  const record: EntityRecord = {
    ...stored,
    ...changes,
    updatedAt: ctx.now(),
    version: stored.version + (bumpVersion ? 1 : 0),
    rev: stored.rev + 1,
    seq: await ctx.graphs.nextSeq(stored.organizationId),
  };
  if (!(await ctx.entities.put(record, { expect: { rev: stored.rev } }))) return undefined;
  ctx.graphs.applyEntity(record);
  return record;
}

async function setKind(ctx: GraphContext, entity: EntityRecord, kind: KindName): Promise<EntityRecord> {
  let stored: EntityRecord | undefined = entity;
  for (let attempt = 0; attempt < ATTEMPTS && stored; attempt++) {
    if (stored.kind) return stored;
    const written = await writeEntity(ctx, stored, { kind });
    if (written) return written;
    stored = await liveEntity(ctx, entity.organizationId, entity.entityId);
  }
  return stored ?? entity;
}
