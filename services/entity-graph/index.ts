import { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { RecordStores } from '../common/stores.ts';
import { createGraphContext, type GraphContextOptions } from './context.ts';
import { graphRoutes } from './routes.ts';

export function createEntityGraphModule(stores: RecordStores, logger: Logger, options: GraphContextOptions = {}): RpcServiceModule {
  const ctx = createGraphContext(stores.records, logger.child({ service: 'entity-graph' }), options);
  return {
    services: [EntityGraphService],
    routes: graphRoutes(ctx),
    // Only the records store: this service keeps no vectors.
    probe: () => stores.probe(['records']),
  };
}
