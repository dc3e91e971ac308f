// Webhooks benchmark, on the embedded records store, to a local receiver that checks every
// signature (test/support/webhook-receiver.ts):
//   1. from a memory write (PutMemory through the Brain) to its memory.created delivery: p50/p99,
//      the writes made one at a time, so each is the whole path (outbox, relay, publish, attempt);
//   2. deliveries per second: EVENTS events published at once (as the relay does) to ENDPOINTS
//      endpoints, until every delivery has been answered.
//
//   ./node_modules/.bin/node test/bench/webhooks.bench.ts     (WRITES=100 EVENTS=2000 ENDPOINTS=4)
import os from 'node:os';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { EventSchema } from '../../gen/mindgate/events/v1/outbox_pb.js';
import { newEventId } from '../../services/common/events/outbox.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { percentile, printTable } from './support.ts';

const WRITES = Number(process.env.WRITES ?? 100);
const EVENTS = Number(process.env.EVENTS ?? 2000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 4);
const BATCH = 200;

async function endpoint(platform: TestPlatform, organizationId: string, receiver: WebhookReceiver, types: string[]): Promise<void> {
  const { secret } = await platform.ctx.clients.webhooks.createWebhookEndpoint({
    organizationId,
    url: receiver.url,
    eventTypes: types,
    createdBy: 'usr_bench',
  });
  receiver.secrets.push(secret);
}

async function writeToDelivery(platform: TestPlatform, organizationId: string): Promise<Record<string, string | number>> {
  const receiver = await startWebhookReceiver();
  try {
    await endpoint(platform, organizationId, receiver, ['memory.created']);
    const ms: number[] = [];
    for (let i = 0; i < WRITES; i++) {
      const key = `bench/${i}`;
      const started = Date.now();
      await platform.ctx.clients.brain.putMemory({
        organizationId,
        namespace: Namespace.KNOWLEDGE,
        key,
        content: `Benchmark fact ${i}: the deploy window of service ${i} is ${i % 24}:00 UTC.`,
      });
      const [delivered] = await receiver.waitFor(1, (r) => r.verified?.data.key === key);
      ms.push(delivered.at - started);
    }
    ms.sort((a, b) => a - b);
    const unverified = receiver.received.filter((r) => r.verifiedWith < 0).length;
    const perSecond = Math.round((WRITES * 1000) / ms.reduce((a, b) => a + b, 0));
    return {
      measure: 'memory write → delivery, one at a time',
      count: WRITES,
      'per s': perSecond,
      'p50 ms': percentile(ms, 50),
      'p99 ms': percentile(ms, 99),
      unverified,
    };
  } finally {
    await receiver.close();
  }
}

async function deliveriesPerSecond(platform: TestPlatform, organizationId: string): Promise<Record<string, string | number>> {
  const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => startWebhookReceiver()));
  try {
    for (const r of receivers) await endpoint(platform, organizationId, r, ['api_key.created']);
    const started = performance.now();
    for (let i = 0; i < EVENTS; i += BATCH) {
      const events = Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, k) =>
        create(EventSchema, {
          eventId: newEventId(Date.now()),
          organizationId,
          type: 'api_key.created',
          time: timestampFromMs(Date.now()),
          dataJson: JSON.stringify({ id: `key_${i + k}`, name: 'bench' }),
        }),
      );
      await platform.ctx.clients.webhooks.publishEvents({ events, monthlyLimits: { [organizationId]: 10_000_000n } });
    }
    await Promise.all(receivers.map((r) => r.waitFor(EVENTS, () => true, 600_000)));
    const seconds = (performance.now() - started) / 1000;
    const unverified = receivers.reduce((n, r) => n + r.received.filter((x) => x.verifiedWith < 0).length, 0);
    const held = Math.max(...receivers.map((r) => r.maxConcurrent));
    return {
      measure: `deliveries/s (${ENDPOINTS} endpoints, most in flight per endpoint: ${held})`,
      count: EVENTS * ENDPOINTS,
      'per s': Math.round((EVENTS * ENDPOINTS) / seconds),
      'p50 ms': '-',
      'p99 ms': '-',
      unverified,
    };
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
}

console.log(`Webhooks benchmark: ${os.cpus().length} cores, Node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}`);
const platform = await startTestPlatform({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'warn' });
try {
  const { organization } = await platform.ctx.clients.organizations.createOrganization({ name: 'Bench', ownerUserId: 'usr_bench' });
  const organizationId = organization!.organizationId;
  const rows = [await writeToDelivery(platform, organizationId), await deliveriesPerSecond(platform, organizationId)];
  printTable('webhooks on the embedded records store', rows);
} finally {
  await platform.stop();
}
