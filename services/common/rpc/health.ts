import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
} from '../../../gen/grpc/health/v1/health_pb.js';

/** Reports whether a service can serve; `''` is the whole server. */
export type HealthProbe = () => Promise<boolean>;

export interface HealthOptions {
  /** Fully qualified service names this server offers. */
  services: string[];
  /** Checked on every Check call; a failing probe (for example a closed store) means NOT_SERVING. */
  probe: HealthProbe;
}

async function status(probe: HealthProbe): Promise<ServingStatus> {
  try {
    return (await probe()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  } catch {
    return ServingStatus.NOT_SERVING;
  }
}

/** grpc.health.v1.Health for the given services, as the standard protocol defines it. */
export function registerHealth(router: ConnectRouter, options: HealthOptions): void {
  const known = new Set(['', ...options.services]);
  router.service(Health, {
    async check(req: HealthCheckRequest) {
      if (!known.has(req.service)) {
        throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      }
      return create(HealthCheckResponseSchema, { status: await status(options.probe) });
    },
    async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
      if (!known.has(req.service)) {
        yield create(HealthCheckResponseSchema, { status: ServingStatus.SERVICE_UNKNOWN });
        return;
      }
      let last: ServingStatus | undefined;
      while (!ctx.signal.aborted) {
        const current = await status(options.probe);
        if (current !== last) {
          last = current;
          yield create(HealthCheckResponseSchema, { status: current });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          ctx.signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
      }
    },
  });
}
