// Two replicas of the platform on one MongoDB database (the MongoDB-wire server), sharing the
// key-encryption key as a deployment's replicas do, receive the same Alertmanager notification
// at once, many times: one alert event is opened (its count is every notification), one thread,
// one run; then both receive the next alert of the group and it joins that thread once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertFormat, LabelMatcher_MatchOp } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { alertmanagerPayload } from '../support/alertmanager.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const ORG = 'org_alertreplicas';
let mongo: MongoWireServer | undefined;
const replicas: TestPlatform[] = [];
let source: { id: string; secret: string };

const payload = (fingerprints: string[]) =>
  alertmanagerPayload({
    groupKey: '{}:{alertname="Replicated"}',
    alerts: fingerprints.map((fingerprint) => ({
      fingerprint,
      labels: { alertname: 'Replicated', severity: 'critical' },
      annotations: { summary: `Replicated ${fingerprint}` },
      startsAt: '2026-03-02T09:30:00Z',
    })),
  });

const receive = (replica: TestPlatform, body: Uint8Array) =>
  replica.ctx.clients.alerts.receiveAlerts({ sourceId: source.id, payload: body, authorization: `Bearer ${source.secret}` });

describe.runIf(shouldRunMongoSuite('alerts on two replicas'))('alerts on two replicas of one MongoDB database', () => {
  beforeAll(async () => {
    mongo = await startMongoWireServer();
    const kek = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-kek-')), 'kek');
    fs.writeFileSync(kek, 'k'.repeat(48), { mode: 0o600 });
    const env = { MONGODB_URL: mongo.url, MONGODB_DATABASE: `alerts_${Date.now()}`, KEY_ENCRYPTION_KEY_FILE: kek };
    replicas.push(await startTestPlatform(env), await startTestPlatform(env));
    const alerts = replicas[0].ctx.clients.alerts;
    const created = await alerts.createAlertSource({
      organizationId: ORG,
      name: 'am',
      format: AlertFormat.ALERTMANAGER,
      createdBy: 'usr_a',
    });
    source = { id: created.source!.sourceId, secret: created.secret };
    await alerts.createAlertRule({
      organizationId: ORG,
      createdBy: 'usr_a',
      rule: {
        name: 'critical',
        enabled: true,
        matchers: [{ label: 'alertname', op: LabelMatcher_MatchOp.EQUAL, value: 'Replicated' }],
        action: { case: 'investigate', value: { instructions: 'Look.', executor: Executor.EXTERNAL, timeoutSeconds: 600 } },
      },
    });
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await mongo?.stop();
  });

  it('opens one alert event, one thread and one run for the same alert received by both at once', async () => {
    const body = payload(['fp-replicated']);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => receive(replicas[i % 2], body)));
    expect(results.reduce((n, r) => n + r.opened, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.deduplicated, 0)).toBe(11);
    expect(results.reduce((n, r) => n + r.investigationsOpened, 0)).toBe(1);
    const { alertEvent } = await replicas[1].ctx.clients.alerts.getAlertEvent({
      organizationId: ORG,
      alertEventId: results[0].alertEventIds[0],
    });
    expect(alertEvent!.count).toBe(12);
    const { runs } = await replicas[0].ctx.clients.runs.listRuns({ organizationId: ORG, threadId: alertEvent!.threadId });
    expect(runs).toHaveLength(1);
    const { threads } = await replicas[1].ctx.clients.threads.listThreads({ organizationId: ORG });
    expect(threads).toHaveLength(1);

    const next = payload(['fp-replicated', 'fp-replicated-2']);
    const joined = await Promise.all(Array.from({ length: 6 }, (_, i) => receive(replicas[i % 2], next)));
    expect(joined.reduce((n, r) => n + r.opened, 0)).toBe(1);
    const second = await replicas[0].ctx.clients.alerts.getAlertEvent({ organizationId: ORG, alertEventId: joined[0].alertEventIds[1] });
    expect(second.alertEvent!.threadId).toBe(alertEvent!.threadId);
    expect((await replicas[1].ctx.clients.threads.listThreads({ organizationId: ORG })).threads).toHaveLength(1);
  });
});
