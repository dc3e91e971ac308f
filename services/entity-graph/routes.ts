import type { ConnectRouter } from '@connectrpc/connect';
import { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { GraphContext } from './context.ts';
import { assertRelationship, retractRelationship } from './handlers/assert.ts';
import { mergeEntities, updateEntity } from './handlers/entity-changes.ts';
import { findMentionedEntities, getEntity, listEntities, searchEntities } from './handlers/entities.ts';
import { extractRelationships, forgetMemory, syncMemory } from './handlers/memories.ts';
import { deleteOrganizationData } from './handlers/organization-data.ts';
import { listRelationships } from './handlers/relationships.ts';
import { findPaths, getAffectedEntities } from './handlers/walks.ts';

export function graphRoutes(ctx: GraphContext) {
  return (router: ConnectRouter) => {
    router.service(EntityGraphService, {
      assertRelationship: (req) => assertRelationship(ctx, req),
      retractRelationship: (req) => retractRelationship(ctx, req),
      syncMemory: (req) => syncMemory(ctx, req),
      forgetMemory: (req) => forgetMemory(ctx, req),
      extractRelationships: (req) => extractRelationships(ctx, req),
      getEntity: (req) => getEntity(ctx, req),
      listEntities: (req) => listEntities(ctx, req),
      searchEntities: (req) => searchEntities(ctx, req),
      findMentionedEntities: (req) => findMentionedEntities(ctx, req),
      updateEntity: (req) => updateEntity(ctx, req),
      mergeEntities: (req) => mergeEntities(ctx, req),
      listRelationships: (req) => listRelationships(ctx, req),
      findPaths: (req) => findPaths(ctx, req),
      getAffectedEntities: (req) => getAffectedEntities(ctx, req),
      deleteOrganizationData: (req) => deleteOrganizationData(ctx, req),
    });
  };
}
