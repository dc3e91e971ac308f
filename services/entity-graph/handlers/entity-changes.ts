// Changing entities: renaming, kinds, aliases and descriptions (UpdateEntity), and folding one
// entity into another (MergeEntities), which moves its names and relationships with their citations.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  MergeEntitiesResponseSchema,
  UpdateEntityResponseSchema,
  type MergeEntitiesRequest,
  type UpdateEntityRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { GraphContext } from '../context.ts';
import { toEntity } from '../convert.ts';
import { ENTITY_ID, entityDocId, nameDocId, normalizeName, TOMBSTONE_TTL_MS, type EntityRecord } from '../records.ts';
import { displayName, entityNamed, liveEntity, writeEntity } from '../writes/entities.ts';
import { moveRelationships } from '../writes/merge.ts';
import { requireKind, requireName } from './validate.ts';

const MAX_ALIASES = 32;

function requireEntityId(field: string, value: string): string {
  if (!ENTITY_ID.test(value)) invalid(field, 'must be an entity id (lower-case letters, digits and dashes)');
  return value;
}

async function mustExist(ctx: GraphContext, organizationId: string, field: string, entityId: string): Promise<EntityRecord> {
  const stored = await ctx.entities.get(entityDocId(organizationId, entityId));
  if (!stored) throw new ConnectError(`${field}: entity ${entityId} does not exist`, Code.NotFound);
  if (stored.mergedInto) throw new ConnectError(`${field}: entity ${entityId} was merged into ${stored.mergedInto}`, Code.NotFound);
  return stored;
}

/** Claims names for an entity; ALREADY_EXISTS naming the holder when another entity has one. */
async function claimNames(ctx: GraphContext, entity: EntityRecord, names: string[]): Promise<void> {
  for (const name of names) {
    if (entity.names.includes(name)) continue;
    const holder = await entityNamed(ctx, entity.organizationId, name);
    if (holder && holder.entityId !== entity.entityId) {
      throw new ConnectError(
        `"${name}" is already a name of entity ${holder.entityId} (${holder.name}): merge them instead`,
        Code.AlreadyExists,
      );
    }
    const claim = await ctx.names.get(nameDocId(entity.organizationId, name));
    const doc = { _id: nameDocId(entity.organizationId, name), organizationId: entity.organizationId, entityId: entity.entityId };
    if (!(await ctx.names.put(doc, { expect: claim ? { entityId: claim.entityId } : null }))) {
      throw new ConnectError(`name "${name}" changed concurrently, retry`, Code.Aborted);
    }
  }
}

async function releaseNames(ctx: GraphContext, entity: EntityRecord, names: string[]): Promise<void> {
  for (const name of names) {
    const claim = await ctx.names.get(nameDocId(entity.organizationId, name));
    if (claim?.entityId === entity.entityId) await ctx.names.delete(claim._id);
  }
}

export async function updateEntity(ctx: GraphContext, req: UpdateEntityRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const entityId = requireEntityId('entity_id', req.entityId);
  const stored = await mustExist(ctx, organizationId, 'entity_id', entityId);
  if (req.expectedVersion !== 0n && BigInt(stored.version) !== req.expectedVersion) {
    throw failure(
      `entity ${entityId} is at version ${stored.version}, not ${req.expectedVersion}`,
      Code.FailedPrecondition,
      REASONS.etagMismatch,
    );
  }
  const name = req.name !== undefined ? displayName(requireName('name', req.name)) : stored.name;
  const kind = req.kind ? requireKind('kind', req.kind) : stored.kind;
  const description = req.description !== undefined ? requireText('description', req.description.trim(), 2_000) : stored.description;
  let aliases = stored.aliases;
  if (req.aliases) {
    if (req.aliases.values.length > MAX_ALIASES)
      invalid('aliases', `must have at most ${MAX_ALIASES} items, got ${req.aliases.values.length}`);
    aliases = req.aliases.values.map((a, i) => displayName(requireName(`aliases[${i}]`, a)));
  }
  aliases = [...new Map(aliases.filter((a) => normalizeName(a) !== normalizeName(name)).map((a) => [normalizeName(a), a])).values()];
  const names = [...new Set([normalizeName(name), ...aliases.map(normalizeName)])];
  await claimNames(ctx, stored, names);
  const written = await writeEntity(ctx, stored, { name, kind, description, aliases, names });
  if (!written) throw new ConnectError(`entity ${entityId} changed concurrently: read it again and retry`, Code.Aborted);
  await releaseNames(
    ctx,
    stored,
    stored.names.filter((n) => !names.includes(n)),
  );
  const graph = await ctx.graphs.fresh(organizationId);
  return create(UpdateEntityResponseSchema, { entity: toEntity(written, graph.degree(entityId)) });
}

export async function mergeEntities(ctx: GraphContext, req: MergeEntitiesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const targetId = requireEntityId('target_entity_id', req.targetEntityId);
  const sourceId = requireEntityId('source_entity_id', req.sourceEntityId);
  if (targetId === sourceId) invalid('source_entity_id', 'must be another entity than the target');
  const target = await mustExist(ctx, organizationId, 'target_entity_id', targetId);
  const source = await mustExist(ctx, organizationId, 'source_entity_id', sourceId);
  const aliases = [...target.aliases];
  for (const n of [source.name, ...source.aliases]) {
    if (![target.name, ...aliases].some((a) => normalizeName(a) === normalizeName(n))) aliases.push(n);
  }
  const names = [...new Set([...target.names, ...source.names])];
  // The source's names now resolve to the target (its records may lag: they are repointed here).
  for (const name of source.names) await ctx.names.put({ _id: nameDocId(organizationId, name), organizationId, entityId: targetId });
  const merged = await writeEntity(ctx, target, {
    aliases: aliases.slice(0, 64),
    names,
    kind: target.kind || source.kind,
    description: target.description || source.description,
  });
  if (!merged) throw new ConnectError(`entity ${targetId} changed concurrently, retry`, Code.Aborted);
  const moved = await moveRelationships(ctx, organizationId, sourceId, targetId);
  const gone = await liveEntity(ctx, organizationId, sourceId);
  if (gone?.entityId === sourceId) {
    await writeEntity(ctx, gone, { mergedInto: targetId, names: [], expiresAt: ctx.now() + TOMBSTONE_TTL_MS }, false);
  }
  const graph = await ctx.graphs.fresh(organizationId);
  return create(MergeEntitiesResponseSchema, { entity: toEntity(merged, graph.degree(targetId)), movedRelationships: moved });
}
