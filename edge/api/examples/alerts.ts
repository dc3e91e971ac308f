// Examples of the alerts' bodies, by the title of their schema (index.ts merges them into the
// document's; the schema fuzzer sends the request examples, so each must be accepted as it is).
import { AT, ORG, USER } from './common.ts';
const SOURCE = 'als_Vb7kP2xQm9Lr4Tn8Zs1w';
const RULE = 'alr_Hq3nW8xLp2Vr6Tk9Ms4d';

const source = {
  id: SOURCE,
  organization_id: ORG,
  name: 'Production Alertmanager',
  format: 'alertmanager',
  receive_url: `https://api.example.com/alert-sources/${SOURCE}/alerts`,
  secret_prefix: 'alsec_Q2mZ',
  created_by: USER,
  created_at: AT,
  last_received_at: '2026-03-02T09:41:12.000Z',
};

const investigate = {
  type: 'investigate',
  instructions: 'Find what changed before the alert fired and whether a rollback fixes it.',
  executor: 'llm',
  timeout_seconds: 1800,
};
const definition = {
  name: 'Critical checkout alerts',
  enabled: true,
  severities: ['critical'],
  matchers: [
    { label: 'service', op: '=', value: 'checkout' },
    { label: 'alertname', op: '=~', value: 'High.*' },
  ],
  source_ids: [SOURCE],
  action: investigate,
};

const alertEvent = {
  id: 'alrt_Zk2mQ8vLx4Pr7Tn1Ws9bHc3dFg6jKl0A',
  organization_id: ORG,
  source_id: SOURCE,
  status: 'firing',
  title: 'p99 latency of checkout above 2 s',
  severity: 'critical',
  labels: { alertname: 'HighLatency', service: 'checkout', severity: 'critical' },
  annotations: { summary: 'p99 latency of checkout above 2 s' },
  fingerprint: 'c1a9f1f2b3d4e5f6',
  group_key: '{}:{alertname="HighLatency"}',
  generator_url: 'https://prometheus.example.com/graph?g0.expr=histogram_quantile',
  count: 3,
  thread_id: 'thr_Qm8x2LkP0aZr7Tn4Vw1s',
  run_id: 'run_Tn4Vw1sQm8x2LkP0aZr7',
  rule_id: RULE,
  acknowledged_by: null,
  resolved_by: null,
  note: '',
  starts_at: AT,
  last_seen_at: '2026-03-02T09:40:00.000Z',
  ends_at: null,
  acknowledged_at: null,
  snoozed_until: null,
  created_at: AT,
};

/** An Alertmanager notification as Alertmanager sends it. */
export const ALERTMANAGER_EXAMPLE = {
  version: '4',
  groupKey: '{}/{severity="critical"}:{alertname="HighLatency"}',
  truncatedAlerts: 0,
  status: 'firing',
  receiver: 'mindgate',
  groupLabels: { alertname: 'HighLatency' },
  commonLabels: { alertname: 'HighLatency', service: 'checkout', severity: 'critical' },
  commonAnnotations: { summary: 'p99 latency of checkout above 2 s' },
  externalURL: 'https://alertmanager.example.com',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'HighLatency', service: 'checkout', severity: 'critical', instance: 'checkout-7d9f:9090' },
      annotations: { summary: 'p99 latency of checkout above 2 s' },
      startsAt: AT,
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'https://prometheus.example.com/graph?g0.expr=histogram_quantile',
      fingerprint: 'c1a9f1f2b3d4e5f6',
    },
  ],
};

export const ALERT_EXAMPLES: Record<string, unknown> = {
  AlertPayload: ALERTMANAGER_EXAMPLE,
  AlertSource: source,
  AlertSourceWithSecret: { source, secret: 'alsec_Q2mZr8vKp1L3hT9xQ2mZr8vKp1L3hT9xQ2mZr8vKp1' },
  CreateAlertSource: { name: 'Production Alertmanager', format: 'alertmanager' },
  AlertRule: {
    id: RULE,
    organization_id: ORG,
    ...definition,
    action: {
      type: 'investigate',
      instructions: '',
      executor: 'llm',
      timeout_seconds: 1800,
      playbook: { id: 'pbk_Rk4vT9mQ2xLp7Wn3Zs8d', version: null, inputs: { team: 'payments' }, brain_feedback: false },
    },
    notifications: { emails: ['oncall@example.com'], webhook_endpoint_ids: ['whe_4kT8pQ2wZr9xLm3N7bVc'] },
    created_by: USER,
    created_at: AT,
    updated_at: AT,
  },
  // Sent as it is by the schema fuzzer: no playbook or endpoint it could not find.
  CreateAlertRule: { ...definition, notifications: { emails: ['oncall@example.com'], webhook_endpoint_ids: [] } },
  UpdateAlertRule: { enabled: false },
  AlertEvent: alertEvent,
  SnoozeAlertEvent: { until: '2026-03-02T13:30:00.000Z' },
  AlertReceipt: {
    received: 2,
    opened: 1,
    deduplicated: 1,
    resolved: 0,
    investigations_opened: 1,
    alert_event_ids: ['alrt_Zk2mQ8vLx4Pr7Tn1Ws9bHc3dFg6jKl0A', 'alrt_Pr7Tn1Ws9bHc3dFg6jKl0AZk2mQ8vL'],
  },
};
