import type { KeyEncryption } from '../services/common/key-encryption.ts';
import type { Logger } from '../services/common/log.ts';
import type { Metrics } from '../services/common/metrics/registry.ts';
import type { Stores } from '../services/common/stores.ts';
import type { ServiceClients } from './clients.ts';
import type { EdgeConfig } from './config.ts';
import type { MailQueue } from './mail/queue.ts';
import type { TokenVerifier } from './oauth/verify.ts';

/** Built once at start and handed to every surface of the edge. */
export interface AppContext {
  config: EdgeConfig;
  logger: Logger;
  /** Typed clients of the internal services (brain, entity graph, agents, billing). */
  clients: ServiceClients;
  /**
   * The edge's own stores: records hold what replicas share (replay caches, rate-limit counters,
   * sessions); the embedder serves the Web API's search.
   */
  stores: Stores;
  /** Seals the secrets the edge keeps in the records store (signing keys, client secrets). */
  keyEncryption: KeyEncryption;
  now: () => number;
  /** Verifies access tokens of the authorization server for a resource (REST API, Brain MCP). */
  tokens: TokenVerifier;
  /** Outgoing mail (verification links, invitations): durable, retried, delivered by one replica. */
  mail: MailQueue;
  /** The process's Prometheus registry and the instruments the listeners and services share. */
  metrics: Metrics;
  /** The authorization server's RFC 8414 / OpenID discovery document (issuer `{auth_url}`). */
  authMetadata(): Promise<Record<string, unknown>>;
}
