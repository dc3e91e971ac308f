// Alert intake benchmark: ALERTS Alertmanager notifications (one alert each) received through the
// agents service's ReceiveAlerts, CONCURRENCY at once: first every alert new (each opens an alert
// event, and one rule opens an investigation — a thread and a queued run — per group of 10), then
// every alert again (each a repeat: a compare-and-set on its alert event). On the embedded records
// store and on the MongoDB-wire test server.
//
//   ./node_modules/.bin/node test/bench/alerts.bench.ts          (ALERTS=400 CONCURRENCY=8)
import { AlertFormat, LabelMatcher_MatchOp } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { alertmanagerPayload } from '../support/alertmanager.ts';
import { mongoWireServerAvailability, startMongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform } from '../support/platform.ts';
import { measure, printTable } from './support.ts';

const ALERTS = Number(process.env.ALERTS ?? 400);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const ORG = 'org_alertbench';

const payload = (i: number) =>
  alertmanagerPayload({
    groupKey: `{}:{group="g${Math.floor(i / 10)}"}`,
    alerts: [
      {
        fingerprint: `fp-${i}`,
        labels: { alertname: `Alert${i}`, severity: 'critical', service: 'checkout' },
        annotations: { summary: `Alert ${i}` },
        startsAt: '2026-03-02T09:30:00Z',
      },
    ],
  });

async function measureStore(name: string, env: Record<string, string>): Promise<Record<string, string | number>[]> {
  const platform = await startTestPlatform({ LOG_LEVEL: 'warn', ...env });
  try {
    const alerts = platform.ctx.clients.alerts;
    const created = await alerts.createAlertSource({
      organizationId: ORG,
      name: 'bench',
      format: AlertFormat.ALERTMANAGER,
      createdBy: 'usr_b',
    });
    const sourceId = created.source!.sourceId;
    await alerts.createAlertRule({
      organizationId: ORG,
      createdBy: 'usr_b',
      rule: {
        name: 'all',
        enabled: true,
        matchers: [{ label: 'service', op: LabelMatcher_MatchOp.REGEX, value: 'check.*' }],
        action: { case: 'investigate', value: { executor: Executor.EXTERNAL } },
      },
    });
    const send = (i: number) => alerts.receiveAlerts({ sourceId, payload: payload(i), authorization: `Bearer ${created.secret}` });
    const row = (phase: string, s: Awaited<ReturnType<typeof measure>>) => ({
      store: name,
      phase,
      alerts: s.count,
      'alerts/s': Math.round(s.perSecond),
      'p50 ms': s.p50.toFixed(1),
      'p99 ms': s.p99.toFixed(1),
    });
    const fresh = await measure(ALERTS, CONCURRENCY, send);
    const repeats = await measure(ALERTS, CONCURRENCY, send);
    const { threads } = await platform.ctx.clients.threads.listThreads({ organizationId: ORG, pageSize: 100 });
    if (threads.length !== Math.min(100, Math.ceil(ALERTS / 10))) throw new Error(`${threads.length} threads for ${ALERTS / 10} groups`);
    return [row('new (10 per group)', fresh), row('repeat', repeats)];
  } finally {
    await platform.stop();
  }
}

const rows = await measureStore('embedded (SQLite)', {});
if (mongoWireServerAvailability().available) {
  const mongo = await startMongoWireServer();
  try {
    rows.push(
      ...(await measureStore('MongoDB wire (mongo-java-server)', { MONGODB_URL: mongo.url, MONGODB_DATABASE: `abench_${Date.now()}` })),
    );
  } finally {
    await mongo.stop();
  }
}
printTable(`Alert intake: ReceiveAlerts, ${CONCURRENCY} at once`, rows);
