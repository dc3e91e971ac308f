// A webhook delivery whose delivering process dies mid-attempt: the agents service runs as its own
// process, claims the delivery and sends it to a receiver that holds the request; the process is
// then killed (SIGKILL). Two replicas of the agents service opened over the same records store
// (in this process, their clocks past the dead one's lease) take the delivery over: it is
// completed exactly once, by one of them, with the same webhook-id, and the dead process's
// unanswered request leaves no attempt in the log. The same two replicas then share a stream of
// events without ever delivering one twice.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClients, type ServiceClients } from '../../edge/clients.ts';
import { DeliveryStatus } from '../../gen/mindgate/agents/v1/webhooks_pb.js';
import { EventSchema } from '../../gen/mindgate/events/v1/outbox_pb.js';
import { createAgentsModule } from '../../services/agents/index.ts';
import { readServiceConfig } from '../../services/common/config.ts';
import { newEventId } from '../../services/common/events/outbox.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RpcServiceModule } from '../../services/common/rpc/server.ts';
import { openStores, type Stores } from '../../services/common/stores.ts';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TOKEN = 'the-agents-internal-token-0123456789abcdef';
/** Past the dead process's lease (WEBHOOK_TIMEOUT_MS + 30 s). */
const LATER_MS = 120_000;
const logger = createLogger({ level: 'silent' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-webhook-takeover-'));
const env = {
  DATA_DIR: dir,
  AGENTS_GRPC_PORT: '0',
  INTERNAL_TOKEN: TOKEN,
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_TIMEOUT_MS: '60000',
  EMBEDDINGS_THREADS: '1',
};

let agents: ServiceProcess | undefined;
let receiver: WebhookReceiver;
let stores: Stores | undefined;
const replicas: RpcServiceModule[] = [];
/** The replicas here only publish and deliver: nothing of theirs asks billing. */
const noBilling = (): never => {
  throw new Error('billing is not used by webhook delivery');
};

function clientsOf(target: { address: string } | { module: RpcServiceModule }): ServiceClients {
  return createServiceClients({
    targets: { brain: target, 'entity-graph': target, agents: target, billing: target },
    internalToken: TOKEN,
    logger,
  });
}

function memoryEvent(organizationId: string, key: string) {
  const now = Date.now();
  return create(EventSchema, {
    eventId: newEventId(now),
    organizationId,
    type: 'memory.created',
    time: timestampFromMs(now),
    dataJson: JSON.stringify({ namespace: 'knowledge', key }),
  });
}

/** The organization's deliveries once none is pending (the receiver answers before the log is written). */
async function settled(clients: ServiceClients, organizationId: string, count: number) {
  for (;;) {
    const { deliveries } = await clients.webhooks.listDeliveries({ organizationId, pageSize: 100 });
    if (deliveries.length >= count && deliveries.every((d) => d.status !== DeliveryStatus.PENDING)) return deliveries;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  agents = await startServiceProcess('agents', env);
}, 120_000);

afterAll(async () => {
  for (const replica of replicas) await replica.close?.();
  await stores?.close();
  await stopServiceProcess(agents);
  await receiver?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a delivery whose process dies', () => {
  it('is taken over when its lease ends and completed exactly once, then replicas never deliver twice', async () => {
    const remote = clientsOf({ address: agents!.address });
    const { organization } = await remote.organizations.createOrganization({ name: 'Takeover', ownerUserId: 'usr_takeover' });
    const organizationId = organization!.organizationId;
    const { secret } = await remote.webhooks.createWebhookEndpoint({
      organizationId,
      url: receiver.url,
      eventTypes: ['memory.*'],
      createdBy: 'usr_takeover',
    });
    receiver.secrets.push(secret);
    receiver.holding = true;
    const first = memoryEvent(organizationId, 'first');
    const monthlyLimits = { [organizationId]: 1_000n };
    expect((await remote.webhooks.publishEvents({ events: [first], monthlyLimits })).published).toBe(1);
    await receiver.waitForArrival(1, (r) => r.headers['webhook-id'] === first.eventId);
    agents!.child.kill('SIGKILL');
    await agents!.exited;
    receiver.holding = false;

    // Two replicas over the same store, their clocks past the dead process's lease.
    const config = readServiceConfig({ ...env, AGENTS_GRPC_PORT: '0' }, 'agents', 1);
    stores = await openStores(config.storage, { logger });
    const later = () => Date.now() + LATER_MS;
    for (let i = 0; i < 2; i++) replicas.push(createAgentsModule(stores, logger, config, { now: later, billing: noBilling }));
    const local = clientsOf({ module: replicas[0]! });
    const [done] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === first.eventId);
    expect(done.status).toBe(200);
    expect(done.verified?.type).toBe('memory.created');

    const more = Array.from({ length: 20 }, (_, i) => memoryEvent(organizationId, `more-${i}`));
    expect((await local.webhooks.publishEvents({ events: more, monthlyLimits })).published).toBe(20);
    const ids = [first, ...more].map((e) => e.eventId);
    await receiver.waitFor(ids.length, (r) => ids.includes(r.headers['webhook-id']!));
    const deliveries = await settled(local, organizationId, ids.length);
    expect(deliveries).toHaveLength(ids.length);
    for (const d of deliveries) {
      expect(d.status).toBe(DeliveryStatus.SUCCEEDED);
      expect(d.attempts).toBe(1);
    }
    // The dead process's request arrived, unanswered; every event was answered exactly once.
    expect(receiver.arrived.filter((r) => r.headers['webhook-id'] === first.eventId)).toHaveLength(2);
    for (const id of ids) expect(receiver.received.filter((r) => r.headers['webhook-id'] === id)).toHaveLength(1);
    const taken = deliveries.find((d) => d.eventId === first.eventId)!;
    const { attempts } = await local.webhooks.getDelivery({ organizationId, deliveryId: taken.deliveryId });
    expect(attempts.map((a) => a.responseStatus)).toEqual([200]);
  }, 120_000);
});
