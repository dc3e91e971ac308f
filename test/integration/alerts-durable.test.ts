// Alert intake killed in the middle: an agents service started as its own process (`node
// services/agents/main.ts`) on a MongoDB-wire server, reaching it through a proxy that stops the
// process at a chosen write (test/support/freezing-proxy.ts), receives an Alertmanager
// notification and is killed with SIGKILL inside its processing; the platform in this process, on
// the same database, receives the alert's next repeat (Alertmanager re-sends a firing group) and
// finishes the investigation: one alert event, one thread, one run, whether the process died
// before it queued the run or after queueing it but before linking it to the alert event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertFormat, AlertStatus } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { alertRunId, type AlertEventRecord } from '../../services/agents/alerts/records.ts';
import { alertmanagerNotification } from '../support/alertmanager.ts';
import { startWriteKillHarness, type WriteKillHarness } from '../support/agents-replicas.ts';
import { shouldRunMongoSuite } from '../support/mongo-server.ts';
import type { TestPlatform } from '../support/platform.ts';

const ORG = 'org_alertsdurable';

/** An Alertmanager notification of one firing alert. */
const notification = (fingerprint: string, group: string) =>
  alertmanagerNotification({
    groupKey: `{}:{group="${group}"}`,
    alerts: [
      {
        fingerprint,
        labels: { alertname: 'QueueBacklog', service: 'billing', severity: 'critical' },
        annotations: { summary: 'Invoice queue backlog above 10k' },
        startsAt: '2026-06-01T07:00:00.000Z',
      },
    ],
  });

describe.runIf(shouldRunMongoSuite('alert intake killed mid-step'))('alert intake killed mid-step', () => {
  let harness: WriteKillHarness;
  let platform: TestPlatform;
  let source: { id: string; secret: string };

  beforeAll(async () => {
    harness = await startWriteKillHarness('alerts-durable', { platformEnv: { PLAYBOOK_RUNNER: 'false' } });
    platform = harness.platform;
    const alerts = platform.ctx.clients.alerts;
    const created = await alerts.createAlertSource({
      organizationId: ORG,
      name: 'Alertmanager',
      format: AlertFormat.ALERTMANAGER,
      createdBy: 'usr_a',
    });
    source = { id: created.source!.sourceId, secret: created.secret };
    await alerts.createAlertRule({
      organizationId: ORG,
      rule: {
        name: 'Billing critical',
        enabled: true,
        severities: ['critical'],
        action: { case: 'investigate', value: { instructions: 'Find the stuck consumer.', executor: Executor.EXTERNAL } },
      },
      createdBy: 'usr_a',
    });
  }, 300_000);

  afterAll(async () => {
    await harness?.stop();
  });

  const receive = (clients: Pick<typeof platform.ctx.clients, 'alerts'>, body: unknown) =>
    clients.alerts.receiveAlerts({
      sourceId: source.id,
      payload: new TextEncoder().encode(JSON.stringify(body)),
      authorization: `Bearer ${source.secret}`,
    });

  /** Sends the alert to a replica that is killed at the write named; what it left behind. */
  async function killedAt(command: 'insert' | 'update', collection: string, fingerprint: string) {
    const answer = await harness.killedAt({ command, collection }, (remote) =>
      receive(remote, notification(fingerprint, fingerprint)).then(
        () => 'answered',
        () => 'cut',
      ),
    );
    expect(answer).toBe('cut');
    const events = await platform.ctx.stores.records.collection<AlertEventRecord>('alert_events').find({ fingerprint });
    expect(events).toHaveLength(1);
    return events[0]!;
  }

  async function investigation(fingerprint: string) {
    const { alertEvents } = await platform.ctx.clients.alerts.listAlertEvents({ organizationId: ORG, pageSize: 100 });
    const mine = alertEvents.filter((e) => e.fingerprint === fingerprint);
    const threadId = mine[0]?.threadId ?? '';
    const { runs } = await platform.ctx.clients.runs.listRuns({ organizationId: ORG, threadId, pageSize: 100 });
    return { events: mine, threadId, runs };
  }

  it('queues the run once, at the next repeat, when the replica died before queueing it', async () => {
    const left = await killedAt('insert', 'runs', 'fp-before-run');
    // It died with the alert event open, not attached, and its thread opened without a run.
    expect(left).toMatchObject({ status: AlertStatus.FIRING, attached: false, runId: '' });

    const repeat = await receive(platform.ctx.clients, notification('fp-before-run', 'fp-before-run'));
    expect(repeat).toMatchObject({ received: 1, opened: 0, deduplicated: 1 });
    const { events, threadId, runs } = await investigation('fp-before-run');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ count: 2, runId: alertRunId(threadId) });
    expect(runs.map((r) => r.runId)).toEqual([alertRunId(threadId)]);
    expect(runs[0]).toMatchObject({ instructions: 'Find the stuck consumer.', executor: Executor.EXTERNAL });
    const { threads } = await platform.ctx.clients.threads.listThreads({ organizationId: ORG, pageSize: 100 });
    expect(threads.filter((t) => t.threadId === threadId)).toHaveLength(1);
  }, 240_000);

  it('links the run it queued, at the next repeat, when the replica died before linking it', async () => {
    // The alert event's first update is its link to the thread and run.
    const left = await killedAt('update', 'alert_events', 'fp-after-run');
    expect(left).toMatchObject({ attached: false, threadId: '', runId: '' });
    const before = await platform.ctx.clients.runs.listRuns({ organizationId: ORG, pageSize: 100 });

    await receive(platform.ctx.clients, notification('fp-after-run', 'fp-after-run'));
    const { events, threadId, runs } = await investigation('fp-after-run');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ count: 2, threadId, runId: alertRunId(threadId) });
    expect(runs.map((r) => r.runId)).toEqual([alertRunId(threadId)]);
    // The run was the dead replica's: the repeat queued none.
    expect(before.runs.map((r) => r.runId)).toContain(alertRunId(threadId));
  }, 240_000);
});
