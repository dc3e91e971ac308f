// Starts the whole platform in one process: the four public listeners and every internal service
// not configured at a remote address, each of those on its own gRPC port.
import { SERVICE_NAMES, SERVICE_PORTS, type ServiceName } from '../services/common/config.ts';
import { resolveInternalToken } from '../services/common/internal-token.ts';
import { loadKeyEncryption } from '../services/common/key-encryption.ts';
import { resealAtStart } from '../services/common/key-encryption-reseal.ts';
import type { Logger } from '../services/common/log.ts';
import { startMetricsListener, type MetricsListener } from '../services/common/metrics/listener.ts';
import { createMetrics, type Metrics } from '../services/common/metrics/registry.ts';
import { startRpcServer, type RpcServer } from '../services/common/rpc/server.ts';
import { openStores, type Stores } from '../services/common/stores.ts';
import { SERVICE_MODULES, type ServiceDeps } from '../services/modules.ts';
import { createServiceClients, type ServiceClients, type ServiceTarget } from './clients.ts';
import type { EdgeConfig, SurfaceName } from './config.ts';
import type { AppContext } from './context.ts';
import { startEdge, type Edge } from './index.ts';
import { sealedClientSecrets } from './oauth/adapter.ts';
import { loadAuthKeys, sealedAuthKeys } from './oauth/keys.ts';
import { createRevocationStore } from './oauth/revocations.ts';
import { createTokenVerifier } from './oauth/verify.ts';
import { createMailQueue, sealedMailTexts } from './mail/queue.ts';
import { sealedAnswers } from './api/idempotency.ts';
import { createMailTransport } from './mail/transport.ts';
import { startRunners } from './runs/runners.ts';
import { createEvaluationWorker } from './evaluation/worker.ts';
import { createEventRelay } from './webhooks/relay.ts';

export interface Platform {
  ctx: AppContext;
  edge: Edge;
  /** Local URL of each public listener. */
  urls: Record<SurfaceName, string>;
  /** host:port of each gRPC service run by this process. */
  grpc: Partial<Record<ServiceName, string>>;
  /** URL of the Prometheus endpoint, when METRICS_PORT is set. */
  metricsUrl?: string;
  internalToken: string;
  /** Drains the listeners and the services' ports together, then closes the stores. */
  stop(graceMs?: number): Promise<void>;
}

export interface PlatformOptions {
  config: EdgeConfig;
  logger: Logger;
  /** Stores to use instead of opening them from config.storage (tests share one set). */
  stores?: Stores;
  /** The platform's clock: the edge's and, for stores it opens, the records' expiries. */
  now?: () => number;
}

/**
 * The authorization server's discovery document: read once from its listener (in this process)
 * after the edge has started, then served from memory.
 */
function authMetadataLoader() {
  let listening: (url: string) => void = () => {};
  const authListener = new Promise<string>((resolve) => (listening = resolve));
  let metadata: Promise<Record<string, unknown>> | undefined;
  const load = () => {
    metadata ??= authListener
      .then((url) => fetch(`${url}/.well-known/openid-configuration`))
      .then(async (res) => {
        if (!res.ok) throw new Error(`authorization server metadata: HTTP ${res.status}`);
        return (await res.json()) as Record<string, unknown>;
      });
    metadata.catch(() => (metadata = undefined));
    return metadata;
  };
  return { load, listening: (url: string) => listening(url) };
}

interface LocalServices {
  config: EdgeConfig;
  logger: Logger;
  stores: Stores;
  internalToken: string;
  metrics: Metrics;
  /** Filled in: the servers started, where each service is reached, and the gRPC addresses. */
  servers: RpcServer[];
  targets: Record<ServiceName, ServiceTarget>;
  grpc: Partial<Record<ServiceName, string>>;
  /** The clock, and the billing and entity-graph clients, every module may use. */
  deps: ServiceDeps;
}

/** Starts, each on its gRPC port, every service not configured at a remote address. */
async function startLocalServices(s: LocalServices): Promise<void> {
  for (const name of SERVICE_NAMES) {
    const address = s.config.serviceAddresses[name];
    if (address) {
      s.targets[name] = { address };
      continue;
    }
    const module = SERVICE_MODULES[name](s.stores, s.logger, s.config.services[name], s.deps);
    const service = s.config.services[name];
    const server = await startRpcServer({
      module,
      host: service.host,
      port: service.port,
      settings: { host: 'GRPC_HOST', port: SERVICE_PORTS[name].variable },
      handshakeTimeoutMs: service.handshakeTimeoutMs,
      idleTimeoutMs: service.idleTimeoutMs,
      internalToken: s.internalToken,
      logger: s.logger.child({ service: name }),
      metrics: s.metrics,
    });
    s.servers.push(server);
    s.grpc[name] = server.address;
    s.targets[name] = { module };
  }
}

export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const { config, logger } = options;
  const now = options.now ?? Date.now;
  // Stores first: opening them creates DATA_DIR private and repairs the modes of what is in it.
  const stores = options.stores ?? (await openStores(config.storage, { logger, now }));
  const servers: RpcServer[] = [];
  const targets = {} as Record<ServiceName, ServiceTarget>;
  const grpc: Partial<Record<ServiceName, string>> = {};
  const metrics = createMetrics();
  let metricsListener: MetricsListener | undefined;
  try {
    if (config.metrics) metricsListener = await startMetricsListener({ ...config.metrics, registry: metrics.registry, logger });
    const internalToken = resolveInternalToken(config.internalToken, config.storage.dataDir);
    const keyEncryption = loadKeyEncryption(config.storage.keyEncryption);
    // Opens, and seals again after an upgrade or a rotation, every secret the edge stores before
    // any listener starts: a wrong key-encryption key stops the start here, with one error. The
    // count tells an operator rotating the key when the previous one is no longer needed. The
    // agents service does the same with its own records when its module starts.
    await resealAtStart(logger, 'edge', keyEncryption, [
      sealedAuthKeys(stores.records, keyEncryption),
      sealedClientSecrets(stores.records, keyEncryption),
      sealedMailTexts(stores.records, keyEncryption, now),
      sealedAnswers(stores.records, keyEncryption),
    ]);
    // The services that enforce a plan ask billing, and the brain tells the entity graph of memory
    // writes, through the same clients as the edge, built below.
    let clients: ServiceClients | undefined;
    const deps: ServiceDeps = {
      now,
      dataDir: config.storage.dataDir,
      billingConfig: config.billing,
      billing: () => clients!.billing,
      entityGraph: () => clients!.entityGraph,
      seeding: () => clients!.seeding,
    };
    await startLocalServices({ config, logger, stores, internalToken, metrics, servers, targets, grpc, deps });
    clients = createServiceClients({ targets, internalToken, logger, metrics });
    const authKeys = await loadAuthKeys(config.auth, stores.records, keyEncryption);
    const tokens = createTokenVerifier({
      issuer: config.publicUrls.auth,
      jwks: authKeys.publicJwks,
      revocations: createRevocationStore(stores.records, now),
      now,
    });
    const metadata = authMetadataLoader();
    const mail = createMailQueue({
      records: stores.records,
      kek: keyEncryption,
      transport: createMailTransport({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, dataDir: config.storage.dataDir }),
      config: config.mail,
      logger: logger.child({ component: 'mail' }),
      now,
    });
    const ctx: AppContext = { config, logger, clients, stores, keyEncryption, now, tokens, mail, authMetadata: metadata.load, metrics };
    const edge = await startEdge(ctx);
    metadata.listening(edge.listeners.auth.url);
    mail.start();
    const runners = startRunners({ clients, config, logger, now, gatewayUrl: edge.listeners.gateway?.url ?? config.publicUrls.gateway });
    const evaluation = createEvaluationWorker({
      clients,
      config: config.evaluation,
      llm: config.runner,
      logger: logger.child({ component: 'evaluation' }),
    });
    evaluation.start();
    // Events of the services' outboxes to the webhooks service (edge/webhooks/relay.ts).
    // Replicas share the work; an operator may leave it to some of them (WEBHOOK_RELAY=false).
    const relay = createEventRelay(ctx);
    if (config.webhookRelay) relay.start();
    const urls = Object.fromEntries(Object.entries(edge.listeners).map(([name, l]) => [name, l.url])) as Record<SurfaceName, string>;
    return {
      ctx,
      edge,
      urls,
      grpc,
      metricsUrl: metricsListener?.url,
      internalToken,
      async stop(graceMs = config.shutdownGraceMs) {
        // Together: one grace for the whole process, and every port refuses new work at once.
        const evaluationStopped = evaluation.stop();
        await Promise.all([edge.close(graceMs), mail.stop(), runners.stop(), relay.stop(), ...servers.map((s) => s.close(graceMs))]);
        await evaluationStopped;
        await metricsListener?.close();
        if (!options.stores) await stores.close();
      },
    };
  } catch (err) {
    await Promise.allSettled([...servers.map((s) => s.close(0)), metricsListener?.close()]);
    if (!options.stores) await stores.close();
    throw err;
  }
}
