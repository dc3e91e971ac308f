// An alert rule's notification channels: e-mail addresses and webhook endpoints of the
// organization that hear of the rule's investigations. The announcements are events of the
// service's outbox written with the change that makes them: alert.investigation_opened with the
// run's queueing (or, when the plan refuses the run, with the alert event's link to the thread),
// alert.investigation_finished with the run's end (runs.ts, from the channels the run keeps). The
// events name the channels; the webhooks service delivers them to the named endpoints beside the
// subscribers, and the relay e-mails the addresses through the mail queue (edge/webhooks/notify.ts).
import type { AlertNotifications } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { event, type NewEvent } from '../../common/events/outbox.ts';
import { invalid } from '../../common/rpc/validate.ts';
import type { RunNotify } from '../handlers/runs.ts';
import { isEmail } from '../handlers/users.ts';
import { ENDPOINT_ID } from '../webhooks/endpoints.ts';
import { alertEventData } from './events.ts';
import type { AlertEventRecord, AlertRuleRecord, AlertsContext, NotificationsRecord } from './records.ts';

const MAX_CHANNELS = 10;
const FIELD = 'rule.notifications';

/** The channels, checked: addresses, and endpoints of the organization (INVALID_ARGUMENT at the item). */
export async function requireNotifications(
  ctx: AlertsContext,
  organizationId: string,
  n: AlertNotifications | undefined,
): Promise<NotificationsRecord> {
  const emails = [...new Set((n?.emails ?? []).map((e) => e.trim()))];
  const endpointIds = [...new Set(n?.webhookEndpointIds ?? [])];
  if (emails.length > MAX_CHANNELS) invalid(`${FIELD}.emails`, `must have at most ${MAX_CHANNELS} items`);
  if (endpointIds.length > MAX_CHANNELS) invalid(`${FIELD}.webhook_endpoint_ids`, `must have at most ${MAX_CHANNELS} items`);
  emails.forEach((e, i) => {
    if (!isEmail(e)) invalid(`${FIELD}.emails.${i}`, 'must be an e-mail address');
  });
  const found = await ctx.endpoints.getMany(endpointIds.filter((id) => ENDPOINT_ID.test(id)));
  endpointIds.forEach((id, i) => {
    if (!found.some((e) => e._id === id && e.organizationId === organizationId)) {
      invalid(`${FIELD}.webhook_endpoint_ids.${i}`, 'is not a webhook endpoint of the organization');
    }
  });
  return { emails, endpointIds };
}

/** What a run of the rule keeps, to announce its end to the channels as they were when it was queued. */
export function runNotify(rule: AlertRuleRecord, alert: AlertEventRecord): RunNotify {
  const n = rule.notifications ?? { emails: [], endpointIds: [] };
  return { ruleId: rule._id, ruleName: rule.name, alertEventId: alert._id, emails: n.emails, endpointIds: n.endpointIds };
}

export interface Opened {
  threadId: string;
  threadTitle: string;
  runId: string;
  playbookId: string;
  playbookVersion: number;
  note: string;
}

/** The rule opened an investigation: to its channels, and to the organization's alert.* subscribers. */
export function investigationOpened(rule: AlertRuleRecord, alert: AlertEventRecord, opened: Opened): NewEvent {
  const announced = event('alert.investigation_opened', alert.organizationId, {
    rule_id: rule._id,
    rule_name: rule.name,
    thread_id: opened.threadId,
    thread_title: opened.threadTitle,
    run_id: opened.runId === '' ? null : opened.runId,
    playbook_id: opened.playbookId === '' ? null : opened.playbookId,
    playbook_version: opened.playbookVersion === 0 ? null : opened.playbookVersion,
    note: opened.note,
    alert: alertEventData(alert),
  });
  const n = rule.notifications;
  return n && n.emails.length + n.endpointIds.length > 0 ? { ...announced, notify: n } : announced;
}
