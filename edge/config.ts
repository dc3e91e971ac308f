// The edge's configuration, read once from the environment and validated at start.
import {
  readAddress,
  readBool,
  readInt,
  readLogLevel,
  readMetricsConfig,
  readPort,
  readSecret,
  readServiceConfig,
  readString,
  readStorageConfig,
  readUrl,
  SERVICE_NAMES,
  type Env,
  type MetricsConfig,
  type ServiceConfig,
  type ServiceName,
  type StorageConfig,
} from '../services/common/config.ts';
import { readBillingConfig, type BillingConfig } from '../services/billing/config.ts';
import { readApiConfig, type ApiConfig } from './api/config.ts';
import { readEdgeBillingConfig, type EdgeBillingConfig } from './api/billing-config.ts';
import { readGatewayConfig, type GatewayConfig } from './gateway/config.ts';
import { readWebConfig, type WebConfig } from './web/config.ts';
import { readAuthConfig, type AuthConfig } from './oauth/config.ts';
import { readMailConfig, type MailConfig } from './mail/config.ts';
import { readRunnerConfig, type RunnerConfig } from './runs/config.ts';
import { readEvaluationConfig, type EvaluationWorkerConfig } from './evaluation/config.ts';

export type SurfaceName = 'gateway' | 'api' | 'web' | 'auth';

export interface EdgeConfig {
  /** Address the four public listeners bind to. */
  host: string;
  ports: Record<SurfaceName, number>;
  /** Public origins used in metadata and links; never derived from a request's Host header. */
  publicUrls: Record<SurfaceName, string>;
  /**
   * Where each internal service runs: `undefined` runs it inside this process (its gRPC port is
   * still served for operators), a host:port reaches a separate process over gRPC.
   */
  serviceAddresses: Record<ServiceName, string | undefined>;
  /** Per-service settings for the services this process runs itself. */
  services: Record<ServiceName, ServiceConfig>;
  internalToken?: string;
  logLevel: string;
  /** Log every successful request at info (true) or debug (false). */
  accessLog: boolean;
  /** Whether this replica relays the services' events to the webhooks service (edge/webhooks/relay.ts). */
  webhookRelay: boolean;
  shutdownGraceMs: number;
  /** Every listener: a request body with no progress this long gets a 408 (edge/http/body-deadlines.ts). */
  bodyTimeoutMs: number;
  /** Every listener: a request whose body has not fully arrived this long after it started gets a 408. */
  requestTimeoutMs: number;
  /** Largest request body any JSON endpoint accepts. */
  maxBodyBytes: number;
  /** Largest file a memory seeding run takes (413 above), checked before the upload is read whole. */
  seedingMaxUploadBytes: number;
  storage: StorageConfig;
  /** The Prometheus endpoint of this process (every service it runs included), when METRICS_PORT is set. */
  metrics?: MetricsConfig;
  /** The authorization server and accounts (edge/oauth/config.ts). */
  auth: AuthConfig;
  /** Outgoing mail: SMTP or the outbox file, and the queue's retries (edge/mail/config.ts). */
  mail: MailConfig;
  /** The LLM runner of investigations: the model provider and the queue (edge/runs/config.ts). */
  runner: RunnerConfig;
  /** The evaluation worker (edge/evaluation/config.ts). */
  evaluation: EvaluationWorkerConfig;
  /** The Agents API (edge/api/config.ts). */
  api: ApiConfig;
  /** The public Web API and site (edge/web/config.ts). */
  web: WebConfig;
  /** The MCP gateway: servers, operator keys, facade secret, proxy limits (edge/gateway/config.ts). */
  gateway: GatewayConfig;
  /** The billing service run in this process: provider, catalogue, brain-pass methods (services/billing/config.ts). */
  billing: BillingConfig;
  /** The edge's side of billing: the trusted country header, the brain-pass rate limit (edge/api/billing-config.ts). */
  billingEdge: EdgeBillingConfig;
}

/** Each public listener's port setting, default port and public-URL setting. */
export const DEFAULT_PORTS: Record<SurfaceName, { variable: string; port: number; url: string }> = {
  gateway: { variable: 'GATEWAY_PORT', port: 8080, url: 'PUBLIC_GATEWAY_URL' },
  api: { variable: 'API_PORT', port: 8081, url: 'PUBLIC_API_URL' },
  web: { variable: 'WEB_PORT', port: 8082, url: 'PUBLIC_WEB_URL' },
  auth: { variable: 'AUTH_PORT', port: 8083, url: 'PUBLIC_AUTH_URL' },
};

const ADDRESS_VARIABLES: Record<ServiceName, string> = {
  brain: 'BRAIN_SERVICE_ADDR',
  'entity-graph': 'ENTITY_GRAPH_SERVICE_ADDR',
  agents: 'AGENTS_SERVICE_ADDR',
  billing: 'BILLING_SERVICE_ADDR',
};

export function readEdgeConfig(env: Env, cpuCount: number): EdgeConfig {
  const host = readString(env, 'HOST', '127.0.0.1');
  const ports = {} as Record<SurfaceName, number>;
  const publicUrls = {} as Record<SurfaceName, string>;
  for (const [name, d] of Object.entries(DEFAULT_PORTS) as [SurfaceName, (typeof DEFAULT_PORTS)[SurfaceName]][]) {
    ports[name] = readPort(env, d.variable, d.port);
    publicUrls[name] = readUrl(env, d.url, `http://localhost:${ports[name]}`);
  }
  const serviceAddresses = {} as Record<ServiceName, string | undefined>;
  const services = {} as Record<ServiceName, ServiceConfig>;
  for (const name of SERVICE_NAMES) {
    serviceAddresses[name] = env[ADDRESS_VARIABLES[name]]?.trim() ? readAddress(env, ADDRESS_VARIABLES[name], '') : undefined;
    services[name] = readServiceConfig(env, name, cpuCount);
  }
  return {
    host,
    ports,
    publicUrls,
    serviceAddresses,
    services,
    internalToken: readSecret(env, 'INTERNAL_TOKEN', 32),
    logLevel: readLogLevel(env),
    accessLog: readBool(env, 'ACCESS_LOG', true),
    webhookRelay: readBool(env, 'WEBHOOK_RELAY', true),
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 10_000, { min: 0, max: 600_000 }),
    bodyTimeoutMs: readInt(env, 'BODY_TIMEOUT_MS', 30_000, { min: 50, max: 3_600_000 }),
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 120_000, { min: 50, max: 86_400_000 }),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', 1_048_576, { min: 1_024, max: 104_857_600 }),
    seedingMaxUploadBytes: readInt(env, 'SEEDING_MAX_UPLOAD_BYTES', 4_194_304, { min: 1_024, max: 6_291_456 }),
    storage: readStorageConfig(env, cpuCount),
    metrics: readMetricsConfig(env),
    auth: readAuthConfig(env),
    mail: readMailConfig(env),
    runner: readRunnerConfig(env),
    evaluation: readEvaluationConfig(env),
    api: readApiConfig(env),
    web: readWebConfig(env),
    gateway: readGatewayConfig(env),
    billing: readBillingConfig(env),
    billingEdge: readEdgeBillingConfig(env),
  };
}
