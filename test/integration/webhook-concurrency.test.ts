// The per-endpoint concurrency cap (WEBHOOK_ENDPOINT_CONCURRENCY) holds across replicas: two
// agents service processes over one MongoDB-wire server deliver to a receiver that holds every
// request open and counts how many it holds at once. Each process is shown to have looked at the
// capped endpoint's waiting deliveries while the cap was reached, without sending one: the other
// process is stopped (SIGSTOP), an event for a second endpoint is published, and its delivery by
// the running process comes from a pass that met the first endpoint's deliveries first (they are
// older) and found no free slot. Then the held requests are answered and the rest follow, never
// more than the cap at once, each delivered once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClients } from '../../edge/clients.ts';
import { DeliveryStatus } from '../../gen/mindgate/agents/v1/webhooks_pb.js';
import { EventSchema } from '../../gen/mindgate/events/v1/outbox_pb.js';
import { newEventId } from '../../services/common/events/outbox.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { serviceClientsAt, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TOKEN = 'the-agents-internal-token-0123456789abcdef';
const CAP = 2;

function event(organizationId: string, type: string, key: string) {
  const now = Date.now();
  return create(EventSchema, {
    eventId: newEventId(now),
    organizationId,
    type,
    time: timestampFromMs(now),
    dataJson: JSON.stringify({ namespace: 'knowledge', key }),
  });
}

describe.runIf(shouldRunMongoSuite('webhook concurrency across replicas'))('the per-endpoint concurrency cap', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-webhook-cap-'));
  let mongo: MongoWireServer;
  let held: WebhookReceiver;
  let quick: WebhookReceiver;
  const replicas: ServiceProcess[] = [];
  const clients: ServiceClients[] = [];

  beforeAll(async () => {
    mongo = await startMongoWireServer();
    held = await startWebhookReceiver();
    quick = await startWebhookReceiver();
    // Both replicas open the endpoints' signing secrets with one key-encryption key.
    const kek = path.join(dir, 'kek');
    fs.writeFileSync(kek, 'k'.repeat(48), { mode: 0o600 });
    for (const name of ['a', 'b']) {
      const replica = await startServiceProcess('agents', {
        DATA_DIR: path.join(dir, name),
        MONGODB_URL: mongo.url,
        MONGODB_DATABASE: 'webhook_cap',
        KEY_ENCRYPTION_KEY_FILE: kek,
        AGENTS_GRPC_PORT: '0',
        INTERNAL_TOKEN: TOKEN,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_ENDPOINT_CONCURRENCY: String(CAP),
      });
      replicas.push(replica);
      clients.push(serviceClientsAt(replica.address, TOKEN));
    }
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) {
      replica.child.kill('SIGCONT');
      await stopServiceProcess(replica);
    }
    await held?.close();
    await quick?.close();
    await mongo?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('never has more than WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight to one endpoint, across two processes', async () => {
    const [a, b] = clients as [ServiceClients, ServiceClients];
    const { organization } = await a.organizations.createOrganization({ name: 'Capped', ownerUserId: 'usr_capped' });
    const organizationId = organization!.organizationId;
    for (const [receiver, type] of [
      [held, 'memory.created'],
      [quick, 'memory.deleted'],
    ] as const) {
      const { secret } = await a.webhooks.createWebhookEndpoint({
        organizationId,
        url: receiver.url,
        eventTypes: [type],
        createdBy: 'usr_capped',
      });
      receiver.secrets.push(secret);
    }
    const monthlyLimits = { [organizationId]: 1_000n };
    held.holding = true;
    const capped = Array.from({ length: 4 * CAP }, (_, i) => event(organizationId, 'memory.created', `capped-${i}`));
    expect((await a.webhooks.publishEvents({ events: capped, monthlyLimits })).published).toBe(capped.length);
    await held.waitForArrival(CAP);

    // Each process in turn, the other one stopped: its delivery of the later event shows it passed
    // over the capped endpoint's older deliveries and found every slot held.
    const turns: [ServiceProcess, ServiceClients][] = [
      [replicas[1]!, a],
      [replicas[0]!, b],
    ];
    for (const [i, [stopped, client]] of turns.entries()) {
      stopped.child.kill('SIGSTOP');
      try {
        const later = event(organizationId, 'memory.deleted', `later-${i}`);
        await client.webhooks.publishEvents({ events: [later], monthlyLimits });
        await quick.waitFor(1, (r) => r.headers['webhook-id'] === later.eventId);
      } finally {
        stopped.child.kill('SIGCONT');
      }
      expect(held.arrived, `after a pass of process ${i}`).toHaveLength(CAP);
      expect(held.held).toBe(CAP);
    }

    // Answered, the held attempts free their slots and the rest follow, never more than CAP at once.
    held.holding = false;
    held.release();
    const ids = capped.map((e) => e.eventId);
    await held.waitFor(ids.length, (r) => ids.includes(r.headers['webhook-id']!), 60_000);
    expect(held.maxConcurrent).toBe(CAP);
    for (const id of ids) expect(held.received.filter((r) => r.headers['webhook-id'] === id)).toHaveLength(1);
    for (const r of held.received) expect(r.verified?.type).toBe('memory.created');
    for (;;) {
      const { deliveries } = await a.webhooks.listDeliveries({ organizationId, pageSize: 100 });
      const mine = deliveries.filter((d) => ids.includes(d.eventId));
      if (mine.length === ids.length && mine.every((d) => d.status === DeliveryStatus.SUCCEEDED)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 180_000);
});
