// Platform status, measured: each internal service answers grpc.health.v1 Check over the same
// transport as its typed client, each store answers a round trip, and every check is timed
// against a deadline. The result is reused for a few seconds and concurrent requests share one
// measurement, so the endpoint stays cheap however often it is polled.
import { Code, ConnectError } from '@connectrpc/connect';
import { AgentsService } from '../../gen/mindgate/agents/v1/agents_pb.js';
import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { HealthCheckResponse_ServingStatus as ServingStatus } from '../../gen/grpc/health/v1/health_pb.js';
import { SERVICE_NAMES, type ServiceName } from '../../services/common/config.ts';
import type { AppContext } from '../context.ts';

export type ComponentStatus = 'operational' | 'degraded' | 'outage';
export type OverallStatus = 'operational' | 'degraded' | 'major_outage';

export interface ComponentHealth {
  id: string;
  name: string;
  kind: 'service' | 'store';
  status: ComponentStatus;
  /** Time the check took, in milliseconds (to the deadline when it timed out). */
  latency_ms: number;
  /** Whether the platform is down without it. */
  critical: boolean;
  detail?: string;
}

export interface PlatformStatus {
  status: OverallStatus;
  description: string;
  checked_at: string;
  components: ComponentHealth[];
}

const SERVICE_LABELS: Record<ServiceName, { name: string; typeName: string; critical: boolean }> = {
  brain: { name: 'Brain service', typeName: BrainService.typeName, critical: true },
  'entity-graph': { name: 'Entity graph service', typeName: EntityGraphService.typeName, critical: false },
  agents: { name: 'Agents service', typeName: AgentsService.typeName, critical: false },
  billing: { name: 'Billing service', typeName: BillingService.typeName, critical: false },
};

const DESCRIPTIONS: Record<OverallStatus, string> = {
  operational: 'All systems operational',
  degraded: 'Some components are degraded or down',
  major_outage: 'Major outage: a critical component is down',
};

export interface StatusTimings {
  timeoutMs: number;
  slowMs: number;
  cacheMs: number;
}

/** The rule the status page states: a critical outage is major, anything else not green is degraded. */
export function overallStatus(components: ComponentHealth[]): OverallStatus {
  if (components.some((c) => c.critical && c.status === 'outage')) return 'major_outage';
  if (components.some((c) => c.status !== 'operational')) return 'degraded';
  return 'operational';
}

async function timed(
  check: (signal: AbortSignal) => Promise<string | undefined>,
  timings: StatusTimings,
): Promise<{ status: ComponentStatus; latency_ms: number; detail?: string }> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timings.timeoutMs} ms`));
    }, timings.timeoutMs);
  });
  try {
    const problem = await Promise.race([check(controller.signal), deadline]);
    const latency = Math.round((performance.now() - started) * 100) / 100;
    if (problem) return { status: 'outage', latency_ms: latency, detail: problem };
    if (latency > timings.slowMs) return { status: 'degraded', latency_ms: latency, detail: `slow: ${latency} ms` };
    return { status: 'operational', latency_ms: latency };
  } catch (err) {
    const latency = Math.round((performance.now() - started) * 100) / 100;
    const detail = err instanceof ConnectError ? `${Code[err.code]}: ${err.rawMessage}` : (err as Error).message;
    return { status: 'outage', latency_ms: latency, detail };
  } finally {
    clearTimeout(timer);
  }
}

export interface StatusMonitor {
  /** The current status: measured now, or the one measured less than `cacheMs` ago. */
  current(): Promise<PlatformStatus>;
}

export function createStatusMonitor(ctx: AppContext, timings: StatusTimings): StatusMonitor {
  async function measure(): Promise<PlatformStatus> {
    const checks: Array<Promise<ComponentHealth>> = [];
    for (const service of SERVICE_NAMES) {
      const label = SERVICE_LABELS[service];
      checks.push(
        timed(async (signal) => {
          const res = await ctx.clients.health(service).check({ service: label.typeName }, { signal, timeoutMs: timings.timeoutMs });
          return res.status === ServingStatus.SERVING ? undefined : `health check answered ${ServingStatus[res.status]}`;
        }, timings).then((r) => ({ id: service, name: label.name, kind: 'service', critical: label.critical, ...r })),
      );
    }
    const { records, vectors, embedder } = ctx.stores;
    checks.push(
      timed(async () => {
        await records.ping();
        return undefined;
      }, timings).then((r) => ({ id: 'records', name: `Records store (${records.kind})`, kind: 'store', critical: true, ...r })),
      timed(async () => {
        await vectors.ping();
        return undefined;
      }, timings).then((r) => ({ id: 'vectors', name: `Vectors store (${vectors.kind})`, kind: 'store', critical: true, ...r })),
      timed(async () => {
        const [vector] = await embedder.embed(['status check']);
        return vector?.length === embedder.dimensions ? undefined : 'unexpected embedding size';
      }, timings).then((r) => ({ id: 'embeddings', name: `Embeddings (${embedder.model})`, kind: 'store', critical: false, ...r })),
    );
    const components = (await Promise.all(checks)) as ComponentHealth[];
    const status = overallStatus(components);
    return { status, description: DESCRIPTIONS[status], checked_at: new Date(ctx.now()).toISOString(), components };
  }

  let cached: { at: number; value: PlatformStatus } | undefined;
  let inflight: Promise<PlatformStatus> | undefined;
  return {
    current() {
      const now = ctx.now();
      if (cached && now - cached.at < timings.cacheMs) return Promise.resolve(cached.value);
      inflight ??= measure()
        .then((value) => {
          cached = { at: ctx.now(), value };
          return value;
        })
        .finally(() => {
          inflight = undefined;
        });
      return inflight;
    },
  };
}
