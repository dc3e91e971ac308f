import { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { assertRelationship, getEntity, type EntityRecord, type GraphContext, type RelationshipRecord } from './handlers/graph.ts';

export function createEntityGraphModule(stores: Stores, _logger: Logger): RpcServiceModule {
  const ctx: GraphContext = {
    entities: stores.records.collection<EntityRecord>('entities'),
    relationships: stores.records.collection<RelationshipRecord>('relationships', {
      indexes: [{ fields: ['organizationId', 'subjectId'] }, { fields: ['organizationId', 'objectId'] }],
    }),
  };
  return {
    services: [EntityGraphService],
    routes: (router) => {
      router.service(EntityGraphService, {
        assertRelationship: (req) => assertRelationship(ctx, req),
        getEntity: (req) => getEntity(ctx, req),
      });
    },
    // Only the records store: this service keeps no vectors.
    probe: () => stores.probe(['records']),
  };
}
