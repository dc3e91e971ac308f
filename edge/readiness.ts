// What each public listener needs to serve, checked for its `/readyz`: the edge's records store
// (sessions, replay caches, rate-limit windows live there) and the internal services its routes
// call. A service is asked over the same transport as its typed client (grpc.health.v1 Check
// on its full name), so a Brain in another process that is down, or whose own stores do not
// answer, makes the gateway not ready. Each dependency is one shared check (readiness.ts): the
// four listeners polled together still cost one round trip each.
import { AgentsService } from '../gen/mindgate/agents/v1/agents_pb.js';
import { BillingService } from '../gen/mindgate/billing/v1/billing_pb.js';
import { BrainService } from '../gen/mindgate/brain/v1/brain_pb.js';
import { HealthCheckResponse_ServingStatus as ServingStatus } from '../gen/grpc/health/v1/health_pb.js';
import { EntityGraphService } from '../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { ServiceName } from '../services/common/config.ts';
import { createCheck, type Check } from '../services/common/readiness.ts';
import type { SurfaceName } from './config.ts';
import type { AppContext } from './context.ts';

const TYPE_NAMES: Record<ServiceName, string> = {
  brain: BrainService.typeName,
  'entity-graph': EntityGraphService.typeName,
  agents: AgentsService.typeName,
  billing: BillingService.typeName,
};

/** A service answered its health check, but not SERVING. */
class NotServingError extends Error {
  readonly code: string;
  constructor(status: ServingStatus) {
    const name = ServingStatus[status] ?? 'UNKNOWN';
    super(`health check answered ${name}`);
    this.code = name;
  }
}

/** The services each listener's routes call. */
function servicesOf(ctx: AppContext): Record<SurfaceName, ServiceName[]> {
  // The Brain's MCP endpoint, when the gateway serves it, calls the Brain and reads the plan.
  const localBrain = ctx.config.gateway.servers.some((s) => s.name === 'brain' && !s.url);
  return {
    gateway: localBrain ? ['brain', 'billing'] : [],
    api: ['agents', 'billing'],
    web: [],
    auth: ['agents'],
  };
}

/** The readiness checks of each public listener. */
export function createEdgeReadiness(ctx: AppContext): Record<SurfaceName, Check[]> {
  const options = { timeoutMs: ctx.config.storage.readinessTimeoutMs, logger: ctx.logger.child({ component: 'readiness' }) };
  const records = createCheck('records', () => ctx.stores.records.ping(), options);
  const services = new Map<ServiceName, Check>();
  const service = (name: ServiceName) => {
    let check = services.get(name);
    if (!check) {
      check = createCheck(
        name,
        async (signal) => {
          const res = await ctx.clients.health(name).check({ service: TYPE_NAMES[name] }, { signal, timeoutMs: options.timeoutMs });
          if (res.status !== ServingStatus.SERVING) throw new NotServingError(res.status);
        },
        options,
      );
      services.set(name, check);
    }
    return check;
  };
  const needs = servicesOf(ctx);
  const out = {} as Record<SurfaceName, Check[]>;
  for (const surface of Object.keys(needs) as SurfaceName[]) out[surface] = [records, ...needs[surface].map(service)];
  return out;
}
