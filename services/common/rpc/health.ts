// grpc.health.v1.Health with liveness and readiness told apart by service name, as the standard
// protocol allows (the name is free-form; an empty name is the server as a whole):
// - "" and "liveness": SERVING while the process answers at all. They never touch a store, so a
//   liveness probe on them does not restart a pod because MongoDB or Qdrant went away.
// - "readiness" and each service's full name (mindgate.brain.v1.BrainService, ...): SERVING when
//   the stores the service needs answer within READINESS_TIMEOUT_MS (the module's probe).
// docs/operations.md, Probes, says which probe uses which name.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
} from '../../../gen/grpc/health/v1/health_pb.js';

/** Reports whether a service can serve (its stores answer); a rejection means it cannot. */
export type HealthProbe = () => Promise<boolean>;

/** The names that only say the process is alive. */
export const LIVENESS_NAMES = ['', 'liveness'] as const;
/** The name that aggregates the readiness of every service on the port. */
export const READINESS_NAME = 'readiness';

export interface HealthOptions {
  /** Fully qualified service names this server offers. */
  services: string[];
  /** Readiness: checked on every Check of a readiness name (the probe keeps its own deadline). */
  probe: HealthProbe;
}

async function readiness(probe: HealthProbe): Promise<ServingStatus> {
  try {
    return (await probe()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  } catch {
    return ServingStatus.NOT_SERVING;
  }
}

/** How long a Watch waits between two looks at readiness. */
const WATCH_INTERVAL_MS = 5_000;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** grpc.health.v1.Health for the given services, as the standard protocol defines it. */
export function registerHealth(router: ConnectRouter, options: HealthOptions): void {
  const liveness = new Set<string>(LIVENESS_NAMES);
  const known = new Set([...liveness, READINESS_NAME, ...options.services]);
  const status = (service: string) => (liveness.has(service) ? Promise.resolve(ServingStatus.SERVING) : readiness(options.probe));
  router.service(Health, {
    async check(req: HealthCheckRequest) {
      if (!known.has(req.service)) {
        throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      }
      return create(HealthCheckResponseSchema, { status: await status(req.service) });
    },
    async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
      if (!known.has(req.service)) {
        yield create(HealthCheckResponseSchema, { status: ServingStatus.SERVICE_UNKNOWN });
        return;
      }
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const current = await status(req.service);
        if (current !== last) {
          last = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        await pause(WATCH_INTERVAL_MS, ctx.signal);
      }
    },
  });
}
