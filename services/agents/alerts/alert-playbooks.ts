// The playbook an alert rule's runs follow, and what the alert gives it. The alert's fields fill
// the playbook's declared inputs of the same names (an input the playbook does not declare is not
// given, as a playbook refuses undeclared inputs); the rule's own `inputs` win over them:
//
//   labels, annotations    object (string map)  the alert's labels and annotations
//   status                 string               firing, acknowledged or snoozed when the run is queued
//   fingerprint            string               the deduplication key
//   severity, title        string               as on the alert event
//   alert_event_id         string               alrt_...
//   source_id, group_key   string               the alert source, the group key ('' without one)
//   generator_url          string               the link back ('' without one)
//   starts_at              string               RFC 3339
//
// A playbook reads a label as `{{ inputs.labels.service }}`. The rule is checked when stored with
// an alert holding every field (empty), so a declared input of a field's name but of another type,
// or a required input neither the alert nor the rule fills, is refused then.
import type { JsonObject } from '@bufbuild/protobuf';
import { AlertStatus, type AlertPlaybook } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import type { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { PlaybookDocument } from '../../common/playbooks/validate.ts';
import { invalid } from '../../common/rpc/validate.ts';
import { planPlaybookRun, storedChoiceFields, type PlaybookChoice } from '../handlers/playbook-runs.ts';
import { STATUS_NAMES } from './events.ts';
import type { AlertEventRecord, AlertPlaybookRecord, AlertsContext } from './records.ts';

const FIELD = 'rule.action.investigate.playbook';

type AlertFields = Pick<
  AlertEventRecord,
  '_id' | 'status' | 'labels' | 'annotations' | 'fingerprint' | 'severity' | 'title' | 'sourceId' | 'groupKey' | 'generatorUrl' | 'startsAt'
>;

/** What an alert offers a playbook, by input name. */
export function alertInputs(e: AlertFields): JsonObject {
  return {
    labels: e.labels,
    annotations: e.annotations,
    status: STATUS_NAMES[e.status as keyof typeof STATUS_NAMES] ?? 'firing',
    fingerprint: e.fingerprint,
    severity: e.severity,
    title: e.title,
    alert_event_id: e._id,
    source_id: e.sourceId,
    group_key: e.groupKey,
    generator_url: e.generatorUrl,
    starts_at: new Date(e.startsAt).toISOString(),
  };
}

/** The run's inputs for a document: the alert's values of its declared inputs, then the rule's. */
export const inputsFor =
  (alert: JsonObject, given: JsonObject) =>
  (document: PlaybookDocument): JsonObject => {
    const declared = new Set((document.inputs ?? []).map((i) => i.name));
    const offered = Object.fromEntries(Object.entries(alert).filter(([name]) => declared.has(name)));
    return { ...offered, ...given };
  };

/** An alert with every field present (empty), to check a rule's playbook against. */
const SAMPLE = alertInputs({
  _id: 'alrt_sample',
  status: AlertStatus.FIRING,
  labels: {},
  annotations: {},
  fingerprint: '',
  severity: '',
  title: '',
  sourceId: '',
  groupKey: '',
  generatorUrl: '',
  startsAt: 0,
});

export function choiceOf(organizationId: string, p: AlertPlaybookRecord, executor: Executor, alert: JsonObject): PlaybookChoice {
  return { organizationId, playbookId: p.playbookId, version: p.version, inputs: inputsFor(alert, p.inputs), executor };
}

/** The rule's playbook, checked against the organization's playbooks (INVALID_ARGUMENT at its field). */
export async function requireAlertPlaybook(
  ctx: AlertsContext,
  organizationId: string,
  p: AlertPlaybook,
  executor: Executor,
): Promise<AlertPlaybookRecord> {
  if (p.playbookId === '') invalid(`${FIELD}.playbook_id`, 'is required');
  const record: AlertPlaybookRecord = {
    playbookId: p.playbookId,
    version: p.version,
    inputs: (p.inputs ?? {}) as JsonObject,
    brainFeedback: p.brainFeedback,
  };
  if (JSON.stringify(record.inputs).length > 20_000) invalid(`${FIELD}.inputs`, 'must be at most 20,000 characters as JSON');
  const fields = { ...storedChoiceFields(FIELD), executor: 'rule.action.investigate.executor' };
  await planPlaybookRun(ctx.playbooks, choiceOf(organizationId, record, executor, SAMPLE), fields);
  return record;
}
