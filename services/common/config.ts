// Reading configuration from the environment. This folder's config.ts files are the only places
// that read process.env; everything else receives typed config objects.

import { join } from 'node:path';
import type { KeyEncryptionConfig } from './key-encryption.ts';

import { readEntityGraphConfig, type EntityGraphConfig } from '../entity-graph/config.ts';
import { readSeedingConfig, type SeedingConfig } from '../brain/seeding/config.ts';

export type Env = Record<string, string | undefined>;

/** A configuration value that cannot be used. The message names the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

export function readString(env: Env, name: string, fallback: string): string;
export function readString(env: Env, name: string): string | undefined;
export function readString(env: Env, name: string, fallback?: string): string | undefined {
  return raw(env, name) ?? fallback;
}

export function readInt(env: Env, name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `expected an integer, got "${value}"`);
  const n = Number(value);
  if (bounds.min !== undefined && n < bounds.min) {
    throw new ConfigError(name, `must be at least ${bounds.min}, got ${n}`);
  }
  if (bounds.max !== undefined && n > bounds.max) {
    throw new ConfigError(name, `must be at most ${bounds.max}, got ${n}`);
  }
  return n;
}

export function readPort(env: Env, name: string, fallback: number): number {
  return readInt(env, name, fallback, { min: 0, max: 65535 });
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(name, `expected true or false, got "${value}"`);
}

export function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${value}"`);
  }
  return value as T;
}

/** An absolute http(s) URL without query or fragment, returned without a trailing slash. */
export function readUrl(env: Env, name: string, fallback: string): string;
export function readUrl(env: Env, name: string): string | undefined;
export function readUrl(env: Env, name: string, fallback?: string): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `expected an absolute URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http or https URL, got "${value}"`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(name, 'must not carry credentials, a query or a fragment');
  }
  return url.href.replace(/\/+$/, '');
}

/** A connection string with one of the given schemes (mongodb://, mongodb+srv://, ...). */
export function readConnectionString(env: Env, name: string, schemes: string[]): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  if (!schemes.some((scheme) => value.startsWith(`${scheme}://`))) {
    throw new ConfigError(name, `expected a ${schemes.join(' or ')} URL`);
  }
  return value;
}

/** A secret: at least `minLength` characters. Never echoed in errors. */
export function readSecret(env: Env, name: string, minLength = 16): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  if (value.length < minLength) {
    throw new ConfigError(name, `must be at least ${minLength} characters long`);
  }
  return value;
}

/** host:port, as used for gRPC addresses. */
export function readAddress(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
  if (!match || Number(match[2]) > 65535) {
    throw new ConfigError(name, `expected host:port, got "${value}"`);
  }
  return value;
}

export interface EmbeddingsConfig {
  /** `use-lite`: the offline Universal Sentence Encoder lite; `openai`: an HTTP endpoint. */
  provider: 'use-lite' | 'openai';
  /** Worker threads running the offline model. */
  threads: number;
  /** OpenAI-compatible base URL (the `/v1/embeddings` path is appended when missing). */
  url?: string;
  model: string;
  apiKey?: string;
}

export interface StorageConfig {
  /** Where the embedded stores keep their files. */
  dataDir: string;
  /** When set, records live in MongoDB instead of the embedded store. */
  mongodbUrl?: string;
  mongodbDatabase: string;
  /** How long a records operation waits for a reachable MongoDB server before failing (UNAVAILABLE). */
  mongodbServerSelectionTimeoutMs: number;
  /** How long a start waits for MongoDB, Qdrant or the embeddings endpoint to answer before it gives up. */
  startTimeoutMs: number;
  /** When set, vectors live in Qdrant instead of the embedded store. */
  qdrantUrl?: string;
  qdrantApiKey?: string;
  /** Prefix of the Qdrant collections this platform creates. */
  qdrantCollectionPrefix: string;
  embeddings: EmbeddingsConfig;
  /** The key-encryption key sealing the secrets kept in the records store (key-encryption.ts). */
  keyEncryption: KeyEncryptionConfig;
  /** How long a store (or an internal service) has to answer a readiness check (readiness.ts). */
  readinessTimeoutMs: number;
  /**
   * Estimated bytes the per-organization search indexes of a process may hold together: the
   * Brain's lexical indexes and the embedded vector store's matrices and graphs
   * (storage/index-budget.ts). Least recently used organizations are evicted past it.
   */
  indexMemoryBytes: number;
}

/**
 * BRAIN_INDEX_MEMORY_MB's default, for one machine running everything (`npm start`): about
 * 200,000 memories' indexes (docs/brain.md). The Helm chart sets 256 for its 1 GiB Brain pods,
 * whose process takes about 515 MiB at peak without any index (docs/operations.md, Resources).
 */
export const DEFAULT_INDEX_MEMORY_MB = 1024;

export function readStorageConfig(env: Env, cpuCount: number): StorageConfig {
  const embeddingsUrl = readUrl(env, 'EMBEDDINGS_URL');
  const provider = readEnum(env, 'EMBEDDINGS_PROVIDER', ['use-lite', 'openai'] as const, embeddingsUrl ? 'openai' : 'use-lite');
  if (provider === 'openai' && !embeddingsUrl) {
    throw new ConfigError('EMBEDDINGS_URL', 'is required when EMBEDDINGS_PROVIDER is openai');
  }
  const dataDir = readString(env, 'DATA_DIR', './data');
  const kekFile = readString(env, 'KEY_ENCRYPTION_KEY_FILE');
  return {
    dataDir,
    mongodbUrl: readConnectionString(env, 'MONGODB_URL', ['mongodb', 'mongodb+srv']),
    mongodbDatabase: readString(env, 'MONGODB_DATABASE', 'mindgate'),
    mongodbServerSelectionTimeoutMs: readInt(env, 'MONGODB_SERVER_SELECTION_TIMEOUT_MS', 5_000, { min: 100, max: 600_000 }),
    startTimeoutMs: readInt(env, 'STORE_START_TIMEOUT_MS', 60_000, { min: 0, max: 3_600_000 }),
    qdrantUrl: readUrl(env, 'QDRANT_URL'),
    qdrantApiKey: readString(env, 'QDRANT_API_KEY'),
    qdrantCollectionPrefix: readString(env, 'QDRANT_COLLECTION_PREFIX', 'mindgate'),
    embeddings: {
      provider,
      threads: readInt(env, 'EMBEDDINGS_THREADS', Math.max(1, Math.min(4, cpuCount)), { min: 1, max: 64 }),
      url: embeddingsUrl,
      model: readString(env, 'EMBEDDINGS_MODEL', provider === 'openai' ? 'text-embedding-3-small' : 'use-lite-512'),
      apiKey: readString(env, 'EMBEDDINGS_API_KEY'),
    },
    // Generated only at the default path: a configured file that is missing is a deployment
    // error (an unmounted Secret), and a new key there would leave the stored secrets unreadable.
    keyEncryption: {
      file: kekFile ?? join(dataDir, 'key-encryption-key'),
      generate: kekFile === undefined,
      previousFile: readString(env, 'KEY_ENCRYPTION_KEY_PREVIOUS_FILE'),
    },
    readinessTimeoutMs: readInt(env, 'READINESS_TIMEOUT_MS', 2_000, { min: 50, max: 60_000 }),
    indexMemoryBytes: readInt(env, 'BRAIN_INDEX_MEMORY_MB', DEFAULT_INDEX_MEMORY_MB, { min: 1, max: 4_194_304 }) * 2 ** 20,
  };
}

/** Accounts (the agents service's UsersService): how failed sign-ins are throttled. */
export interface AccountsConfig {
  /** Failed sign-in attempts allowed per e-mail address per window. */
  signInAttempts: number;
  signInWindowSeconds: number;
}

export function readAccountsConfig(env: Env): AccountsConfig {
  return {
    signInAttempts: readInt(env, 'SIGN_IN_ATTEMPTS', 10, { min: 1, max: 1_000 }),
    signInWindowSeconds: readInt(env, 'SIGN_IN_WINDOW', 900, { min: 1, max: 86_400 }),
  };
}

/** Webhooks (the agents service's WebhooksService): where and how events are delivered. */
export interface WebhooksConfig {
  /** Endpoints may resolve to loopback, private, link-local and metadata addresses (tests, closed networks). */
  allowPrivateUrls: boolean;
  /** One attempt's deadline: connecting, sending, and the answer. */
  timeoutMs: number;
  /** The wait after the first failed attempt; each next one is 3 times longer (up to 6 hours), ±20%. */
  retryBaseMs: number;
  /** Attempts before a delivery is given up (11 at the default base: about a day). */
  maxAttempts: number;
  /** Attempts in flight to one endpoint at once, across replicas. */
  endpointConcurrency: number;
  /** An endpoint whose attempts have all failed this long (and at least disableAfterFailures of them) is disabled. */
  disableAfterMs: number;
  disableAfterFailures: number;
  /** How long a rotated-out secret keeps signing, unless the rotation says otherwise. */
  secretOverlapSeconds: number;
}

export function readWebhooksConfig(env: Env): WebhooksConfig {
  return {
    allowPrivateUrls: readBool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 60_000 }),
    retryBaseMs: readInt(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, { min: 10, max: 3_600_000 }),
    maxAttempts: readInt(env, 'WEBHOOK_MAX_ATTEMPTS', 11, { min: 1, max: 30 }),
    endpointConcurrency: readInt(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 4, { min: 1, max: 64 }),
    disableAfterMs: readInt(env, 'WEBHOOK_DISABLE_AFTER_SECONDS', 259_200, { min: 0, max: 31_536_000 }) * 1000,
    disableAfterFailures: readInt(env, 'WEBHOOK_DISABLE_AFTER_FAILURES', 20, { min: 1, max: 100_000 }),
    secretOverlapSeconds: readInt(env, 'WEBHOOK_SECRET_OVERLAP_SECONDS', 86_400, { min: 0, max: 604_800 }),
  };
}

/** Scheduled jobs (the agents service's JobsService and its scheduler). */
export interface JobsConfig {
  /** How often each replica looks for due occurrences. */
  pollMs: number;
  /** An occurrence found later than this is missed and follows its job's missed-occurrence policy. */
  missedGraceMs: number;
}

export function readJobsConfig(env: Env): JobsConfig {
  return {
    pollMs: readInt(env, 'JOBS_POLL_MS', 5_000, { min: 50, max: 60_000 }),
    missedGraceMs: readInt(env, 'JOBS_MISSED_GRACE_SECONDS', 300, { min: 1, max: 86_400 }) * 1000,
  };
}

/** What a service module is built with besides its stores (SERVICE_MODULES). */
export interface ModuleConfig {
  accounts: AccountsConfig;
  /** The entity-graph service's own settings (its model extractor). */
  entityGraph: EntityGraphConfig;
  webhooks: WebhooksConfig;
  jobs: JobsConfig;
  /** Memory seeding (the brain's SeedingService): URL sources, leases. */
  seeding: SeedingConfig;
  /** The key-encryption key that seals the secrets a service keeps (webhook signing secrets). */
  keyEncryption: KeyEncryptionConfig;
}

/** The Prometheus endpoint of a process (services/common/metrics/listener.ts); absent: none. */
export interface MetricsConfig {
  host: string;
  port: number;
}

/** `METRICS_PORT` unset serves no metrics: the endpoint is opt-in, and loopback unless told. */
export function readMetricsConfig(env: Env): MetricsConfig | undefined {
  if (readString(env, 'METRICS_PORT') === undefined) return undefined;
  return { host: readString(env, 'METRICS_HOST', '127.0.0.1'), port: readPort(env, 'METRICS_PORT', 0) };
}

export interface ServiceConfig extends ModuleConfig {
  /** Address the gRPC listener binds to; loopback unless the deployment says otherwise. */
  host: string;
  port: number;
  /** Shared secret every internal call carries; see resolveInternalToken. */
  internalToken?: string;
  /** host:port of the billing service, which the brain and agents services ask for entitlements; unset: run its code in this process. */
  billingAddress?: string;
  logLevel: string;
  /** How long SIGTERM waits for in-flight calls before closing them. */
  shutdownGraceMs: number;
  /** A new gRPC connection must send its first bytes (an HTTP/2 client its settings) this soon. */
  handshakeTimeoutMs: number;
  /** A gRPC HTTP/2 connection with no call in progress this long is closed. */
  idleTimeoutMs: number;
  storage: StorageConfig;
  /** The process's Prometheus endpoint, when METRICS_PORT is set. */
  metrics?: MetricsConfig;
  /** host:port of the entity-graph service the brain tells of memory writes; unset: run its code in this process. */
  entityGraphAddress?: string;
  /** host:port of the brain, which the agents service's scheduled jobs start seeding runs of; unset: seeding targets are refused. */
  brainAddress?: string;
}

export const SERVICE_PORTS = {
  brain: { variable: 'BRAIN_GRPC_PORT', port: 50051 },
  'entity-graph': { variable: 'ENTITY_GRAPH_GRPC_PORT', port: 50052 },
  agents: { variable: 'AGENTS_GRPC_PORT', port: 50053 },
  billing: { variable: 'BILLING_GRPC_PORT', port: 50054 },
} as const;

export type ServiceName = keyof typeof SERVICE_PORTS;
export const SERVICE_NAMES = Object.keys(SERVICE_PORTS) as ServiceName[];

export function readLogLevel(env: Env): string {
  return readEnum(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info');
}

export function readServiceConfig(env: Env, name: ServiceName, cpuCount: number): ServiceConfig {
  const { variable, port } = SERVICE_PORTS[name];
  const storage = readStorageConfig(env, cpuCount);
  return {
    host: readString(env, 'GRPC_HOST', '127.0.0.1'),
    port: readPort(env, variable, port),
    internalToken: readSecret(env, 'INTERNAL_TOKEN', 32),
    billingAddress: readString(env, 'BILLING_SERVICE_ADDR') ? readAddress(env, 'BILLING_SERVICE_ADDR', '') : undefined,
    logLevel: readLogLevel(env),
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 10_000, { min: 0, max: 600_000 }),
    handshakeTimeoutMs: readInt(env, 'GRPC_HANDSHAKE_TIMEOUT_MS', 10_000, { min: 50, max: 600_000 }),
    idleTimeoutMs: readInt(env, 'GRPC_IDLE_TIMEOUT_MS', 300_000, { min: 50, max: 86_400_000 }),
    storage,
    accounts: readAccountsConfig(env),
    webhooks: readWebhooksConfig(env),
    jobs: readJobsConfig(env),
    seeding: readSeedingConfig(env),
    keyEncryption: storage.keyEncryption,
    metrics: readMetricsConfig(env),
    entityGraphAddress: env.ENTITY_GRAPH_SERVICE_ADDR?.trim() ? readAddress(env, 'ENTITY_GRAPH_SERVICE_ADDR', '') : undefined,
    brainAddress: name === 'agents' && env.BRAIN_SERVICE_ADDR?.trim() ? readAddress(env, 'BRAIN_SERVICE_ADDR', '') : undefined,
    entityGraph: readEntityGraphConfig(env),
  };
}
