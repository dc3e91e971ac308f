// Replicas of the agents service on one MongoDB database (the MongoDB-wire server), as a
// deployment runs them: the platform in the test's process and agents services started as their
// own processes (`node services/agents/main.ts`), sharing what createReplicaStore sets up.
// - startAgentsReplicaPair: the platform and one agents process, both working side by side;
// - startWriteKillHarness: agents processes that reach the database through a freezing proxy
//   (freezing-proxy.ts), each killed (SIGKILL) inside a chosen write, while the platform, on the
//   database directly, finishes what they left.
import type { ServiceClients } from '../../edge/clients.ts';
import { startFreezingProxy, type FreezingProxy } from './freezing-proxy.ts';
import { startMongoWireServer, type MongoWireServer } from './mongo-server.ts';
import { startTestPlatform, type TestPlatform, type TestPlatformOptions } from './platform.ts';
import { createReplicaStore, type ReplicaStore } from './replica-store.ts';
import { killServiceProcess, serviceClientsAt, startServiceProcess, stopServiceProcess, type ServiceProcess } from './service-process.ts';

export interface AgentsReplicaPair {
  store: ReplicaStore;
  /** The platform in this process. */
  first: TestPlatform;
  /** The agents service in its own process. */
  second: ServiceProcess;
  stop(): Promise<void>;
}

export interface AgentsReplicaOptions {
  /** Given to every replica besides the shared store's. */
  env?: Record<string, string>;
  /** Given to the agents process only. */
  processEnv?: Record<string, string>;
  /** Given to the platform only. */
  platformEnv?: Record<string, string>;
  platformOptions?: TestPlatformOptions;
}

/** `name` names the test's database and files (createReplicaStore). */
export async function startAgentsReplicaPair(name: string, options: AgentsReplicaOptions = {}): Promise<AgentsReplicaPair> {
  const mongo = await startMongoWireServer();
  const store = createReplicaStore(name);
  const shared = { ...store.env, MONGODB_URL: mongo.url, ...options.env };
  const first = await startTestPlatform({ ...shared, ...options.platformEnv }, options.platformOptions);
  const second = await startServiceProcess('agents', { ...shared, AGENTS_GRPC_PORT: '0', ...options.processEnv });
  return {
    store,
    first,
    second,
    async stop() {
      await stopServiceProcess(second);
      await first.stop();
      await mongo.stop();
      store.remove();
    },
  };
}

/** The write an agents process is killed inside: the `nth` (1st unless told) `command` on `collection`. */
export interface FatalWrite {
  command: Parameters<FreezingProxy['freezeAt']>[0];
  collection: string;
  nth?: number;
}

export interface WriteKillHarness {
  store: ReplicaStore;
  /** The platform in this process, on the database directly. */
  platform: TestPlatform;
  /**
   * Starts an agents process that reaches the database through the proxy, has `work` call it
   * (through the edge's clients), kills it once it is inside `write`, and then gives what `work`
   * came to (a call cut by the kill comes to whatever `work` makes of that).
   */
  killedAt<T>(write: FatalWrite, work: (clients: ServiceClients) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

export async function startWriteKillHarness(name: string, options: AgentsReplicaOptions = {}): Promise<WriteKillHarness> {
  const mongo: MongoWireServer = await startMongoWireServer();
  const proxy = await startFreezingProxy(mongo.url);
  const store = createReplicaStore(name);
  const platform = await startTestPlatform(
    { ...store.env, ...options.env, MONGODB_URL: mongo.url, ...options.platformEnv },
    options.platformOptions,
  );
  const killed: ServiceProcess[] = [];
  return {
    store,
    platform,
    async killedAt(write, work) {
      const env = { ...store.env, ...options.env, MONGODB_URL: proxy.url, AGENTS_GRPC_PORT: '0', ...options.processEnv };
      const child = await startServiceProcess('agents', env);
      killed.push(child);
      const frozen = proxy.freezeAt(write.command, write.collection, write.nth);
      const outcome = work(serviceClientsAt(child.address, store.token));
      // A call refused before the write is the test's failure, not a wait for a write never made.
      await Promise.race([frozen, outcome.then(() => frozen)]);
      await killServiceProcess(child);
      return outcome;
    },
    async stop() {
      for (const child of killed) await killServiceProcess(child);
      await platform.stop();
      await proxy.close();
      await mongo.stop();
      store.remove();
    },
  };
}
