// Keeps this replica's registry in step with the servers and keys managed through the Agents API:
// every GATEWAY_REGISTRY_POLL_MS it asks the agents service for the registry version, and when the
// version moved, for everything, which it applies to the registry and the keyring. A change made on
// any replica is therefore served by every replica within about one interval. Once a minute it asks
// for everything regardless, so that a change whose version bump was lost (a process that died
// between the two writes) is still picked up.
import type { Client } from '@connectrpc/connect';
import type { GatewayRegistryService } from '../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { Logger } from '../../services/common/log.ts';
import type { GatewayServerConfig } from './config.ts';
import type { GatewayKeyring } from './keyring.ts';
import { managedServerConfig } from './managed-servers.ts';
import type { RegistryChange, ServerRegistry } from './registry.ts';

export interface RegistrySyncOptions {
  client: Client<typeof GatewayRegistryService>;
  registry: ServerRegistry;
  keyring: GatewayKeyring;
  kek: KeyEncryption;
  intervalMs: number;
  logger: Logger;
  /** After servers were added, changed or removed (the facade's upstream clients follow). */
  onChange(change: RegistryChange): void;
}

export interface RegistrySync {
  /** Resolves once the first poll has been applied, or has failed (and was logged). */
  readonly ready: Promise<void>;
  /** Polls now; resolves when applied. */
  refresh(): Promise<void>;
  /** The version applied last; 0 before the first poll. */
  readonly version: bigint;
  close(): void;
}

const FULL_REFRESH_MS = 60_000;

export function startRegistrySync(options: RegistrySyncOptions): RegistrySync {
  const { client, registry, keyring, kek, logger } = options;
  let version = 0n;
  let lastFull = 0;
  let failing = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  function configsOf(servers: Parameters<typeof managedServerConfig>[0][]): GatewayServerConfig[] {
    const configs: GatewayServerConfig[] = [];
    for (const server of servers) {
      try {
        configs.push(managedServerConfig(server, kek));
      } catch (err) {
        // One server whose secret does not open (a key-encryption key mix-up) must not hold back the others.
        logger.error(
          { server: server.name, err: (err as Error).message },
          `MCP server ${server.name} is not served: its client secret does not open`,
        );
      }
    }
    return configs;
  }

  async function poll(): Promise<void> {
    const full = Date.now() - lastFull >= FULL_REFRESH_MS;
    const res = await client.getGatewayRegistry({ knownVersion: full ? 0n : version });
    if (failing) logger.info({ version: res.version }, 'gateway registry reachable again');
    failing = false;
    if (!res.changed) return;
    if (full) lastFull = Date.now();
    const change = registry.replaceManaged(configsOf(res.servers));
    keyring.replaceStored(res.keys);
    if (change.updated.length + change.removed.length > 0 || res.version !== version) {
      logger.info(
        { version: res.version, updated: change.updated.map((s) => s.name), removed: change.removed, shadowed: change.shadowed },
        `gateway registry at version ${res.version}`,
      );
    }
    for (const name of change.shadowed) {
      logger.warn({ server: name }, `MCP server ${name} of the Agents API is not served: the servers file has a server of that name`);
    }
    version = res.version;
    options.onChange(change);
  }

  function run(): Promise<void> {
    running ??= poll()
      .catch((err: unknown) => {
        if (!failing)
          logger.warn({ err: (err as Error).message }, 'gateway registry: the agents service did not answer; keeping the servers known');
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => void run().then(schedule), options.intervalMs);
    timer.unref();
  }

  const ready = run().then(schedule);
  return {
    ready,
    refresh: run,
    get version() {
      return version;
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
