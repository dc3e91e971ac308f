// An alert's investigation. Alerts of one group (Alertmanager's groupKey within a source, else
// the rule that matched) share one open thread: the group's thread id is derived from the group
// key and a generation (records.ts), so the first alert of a group whose rule matches inserts the
// thread if absent, and only the replica whose insert wins queues the run (through the runs'
// own code, under the plan's runs_per_month), following the rule's playbook when it names one
// (with the alert's fields as inputs, alert-playbooks.ts) and announced to the rule's channels. Later alerts of the group, and alerts of the group
// no rule matches, join the open thread with a message. Once the thread is resolved or archived,
// the group's next alert opens the next generation's thread.
import { Code, ConnectError } from '@connectrpc/connect';
import { MessageRole, ThreadStatus } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { putWithEvents, type NewEvent } from '../../common/events/outbox.ts';
import { threadEvent, threadSubject } from '../events.ts';
import { planPlaybookRun, queuePlaybookRun } from '../handlers/playbook-runs.ts';
import { queue, type RunRecord } from '../handlers/runs.ts';
import { appendMessage, type ThreadRecord } from '../handlers/threads.ts';
import { alertInputs, choiceOf } from './alert-playbooks.ts';
import { alertSubject } from './events.ts';
import { latestGeneration, noteGeneration } from './generations.ts';
import { investigationOpened, runNotify } from './notifications.ts';
import type { IncomingAlert } from './payloads.ts';
import { alertRunId, generationKey, groupThreadId, type AlertEventRecord, type AlertRuleRecord, type AlertsContext } from './records.ts';
import { ruleMatches } from './rules.ts';

const ATTEMPTS = 50;

function describe(e: AlertEventRecord): string {
  const lines = [`**Alert firing**: ${e.title}`, '', `- severity: ${e.severity || '(none)'}`, `- source: ${e.sourceId}`];
  lines.push(`- fingerprint: ${e.fingerprint}`, `- started: ${new Date(e.startsAt).toISOString()}`);
  const labels = Object.entries(e.labels).map(([k, v]) => `\`${k}=${v}\``);
  if (labels.length > 0) lines.push(`- labels: ${labels.join(', ')}`);
  for (const [k, v] of Object.entries(e.annotations)) lines.push(`- ${k}: ${v}`);
  if (e.generatorUrl !== '') lines.push(`- generator: ${e.generatorUrl}`);
  lines.push(`- alert event: ${e._id}`);
  return lines.join('\n').slice(0, 100_000);
}

/** The group's open thread, or the id its next thread takes. */
async function groupSlot(ctx: AlertsContext, organizationId: string, groupKey: string): Promise<{ open?: ThreadRecord; freeId?: string }> {
  const key = generationKey('group', organizationId, groupKey);
  for (let g = await latestGeneration(ctx, key); ; g++) {
    const id = groupThreadId(organizationId, groupKey, g);
    const thread = await ctx.runs.threads.threads.get(id);
    if (!thread) {
      await noteGeneration(ctx, key, organizationId, g);
      return { freeId: id };
    }
    if (thread.status === ThreadStatus.OPEN) return { open: thread };
  }
}

/** Sets the event's links (thread, run, rule, note), whatever else changed meanwhile; `events` go with the write. */
async function link(
  ctx: AlertsContext,
  event: AlertEventRecord,
  fields: Partial<AlertEventRecord>,
  events: NewEvent[] = [],
): Promise<AlertEventRecord> {
  for (let current: AlertEventRecord | undefined = event; current; current = await ctx.events.get(event._id)) {
    const next = { ...current, ...fields, version: current.version + 1 };
    if (await putWithEvents(ctx.outbox, alertSubject(ctx.events), next, current, events, { expect: { version: current.version } }))
      return next;
  }
  return event;
}

const RULE_PREFIX = 'alert_rule:';

/** Queues the rule's run on the thread: with the rule's instructions, or following its playbook with the alert's inputs. */
async function queueRuleRun(ctx: AlertsContext, rule: AlertRuleRecord, thread: ThreadRecord, alert: AlertEventRecord, id: string) {
  const { instructions, executor, timeoutSeconds, playbook } = rule.action;
  const linked = { ...alert, threadId: thread._id, ruleId: rule._id };
  const spec = {
    id,
    organizationId: thread.organizationId,
    threadId: thread._id,
    timeoutSeconds,
    createdBy: `${RULE_PREFIX}${rule._id}`,
    notify: runNotify(rule, linked),
  };
  const opened = (playbookId: string, playbookVersion: number) => [
    investigationOpened(rule, linked, {
      threadId: thread._id,
      threadTitle: thread.title,
      runId: id,
      playbookId,
      playbookVersion,
      note: '',
    }),
  ];
  if (!playbook) return queue(ctx.runs, { ...spec, executor, instructions, events: opened('', 0) });
  const plan = await planPlaybookRun(ctx.playbooks, choiceOf(thread.organizationId, playbook, executor, alertInputs(linked)));
  return queuePlaybookRun(ctx.runs, plan, {
    ...spec,
    brainFeedback: playbook.brainFeedback,
    events: opened(plan.playbook._id, plan.version.version),
  });
}

/** Refusals that leave the thread without a run: the plan's limit, a playbook changed since the rule was stored. */
const REFUSED = new Set([Code.ResourceExhausted, Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition]);

/**
 * The run of a thread a rule opened, queued if it is not there yet: the opener queues it, and an
 * alert joining the thread queues it when the opener died before it did (its id is fixed).
 */
async function ensureRun(
  ctx: AlertsContext,
  thread: ThreadRecord,
  alert: AlertEventRecord,
  known?: AlertRuleRecord,
): Promise<{ run?: RunRecord; note: string }> {
  if (!thread.createdBy.startsWith(RULE_PREFIX)) return { note: '' };
  const id = alertRunId(thread._id);
  const existing = await ctx.runs.runs.get(id);
  if (existing) return { run: existing, note: '' };
  const rule = known ?? (await ctx.rules.get(thread.createdBy.slice(RULE_PREFIX.length)));
  if (!rule) return { note: '' };
  try {
    return { run: await queueRuleRun(ctx, rule, thread, alert, id), note: '' };
  } catch (err) {
    // The thread stays open for people; the event says why no run was queued.
    if (err instanceof ConnectError && REFUSED.has(err.code)) return { note: `no run queued: ${err.rawMessage}` };
    throw err;
  }
}

async function openThread(
  ctx: AlertsContext,
  event: AlertEventRecord,
  id: string,
  rule: AlertRuleRecord,
): Promise<ThreadRecord | undefined> {
  const now = ctx.now();
  const title = `${event.severity ? `[${event.severity}] ` : ''}${event.title}`.slice(0, 200);
  const thread: ThreadRecord = {
    _id: id,
    organizationId: event.organizationId,
    title,
    status: ThreadStatus.OPEN,
    createdBy: `${RULE_PREFIX}${rule._id}`,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const t = ctx.runs.threads;
  const created = await putWithEvents(t.events, threadSubject(t.threads), thread, undefined, [threadEvent('thread.created', thread)], {
    expect: null,
  });
  return created ? thread : undefined;
}

/** Joins the alert's group thread, or opens it (with a run) when a rule matches; the event as linked. */
export async function attachInvestigation(
  ctx: AlertsContext,
  event: AlertEventRecord,
  alert: IncomingAlert,
  rules: AlertRuleRecord[],
): Promise<{ event: AlertEventRecord; opened: boolean }> {
  const rule = rules.find((r) => ruleMatches(r, event.sourceId, alert));
  const groupKey = event.groupKey !== '' ? `source:${event.sourceId}:${event.groupKey}` : rule ? `rule:${rule._id}` : '';
  if (groupKey === '') return { event: await link(ctx, event, { attached: true }), opened: false };
  const message = { role: MessageRole.USER, content: describe(event), author: event.sourceId, id: `msg_${event._id.slice(5)}f` };
  for (let i = 0; i < ATTEMPTS; i++) {
    const slot = await groupSlot(ctx, event.organizationId, groupKey);
    if (slot.open) {
      await appendMessage(ctx.runs.threads, slot.open, message);
      const { run } = await ensureRun(ctx, slot.open, event);
      // The alert the run was queued for (its opener, taken up again after a replica died) links it.
      const runId = run?.notify?.alertEventId === event._id ? { runId: run._id } : {};
      const fields = { threadId: slot.open._id, ruleId: rule?._id ?? '', attached: true, ...runId };
      return { event: await link(ctx, event, fields), opened: false };
    }
    if (!rule) return { event: await link(ctx, event, { attached: true }), opened: false };
    const thread = await openThread(ctx, event, slot.freeId!, rule);
    if (!thread) continue; // Another replica opened it: join it.
    await appendMessage(ctx.runs.threads, thread, message);
    const { run, note } = await ensureRun(ctx, thread, event, rule);
    const fields = { threadId: thread._id, runId: run?._id ?? '', ruleId: rule._id, note, attached: true };
    // Without a run, the announcement goes with the link (with a run, it went with the run).
    const opened = { threadId: thread._id, threadTitle: thread.title, runId: '', playbookId: '', playbookVersion: 0, note };
    const events = run ? [] : [investigationOpened(rule, { ...event, ...fields }, opened)];
    return { event: await link(ctx, event, fields, events), opened: true };
  }
  throw new Error(`alert event ${event._id}: the group's thread kept changing`);
}

/** Tells the event's thread, once, that the alert closed. */
export async function closeInThread(ctx: AlertsContext, event: AlertEventRecord, how: string): Promise<void> {
  if (event.threadId === '') return;
  const thread = await ctx.runs.threads.threads.get(event.threadId);
  if (!thread) return;
  const content = `**Alert resolved** (${how}): ${event.title}\n\n- alert event: ${event._id}\n- notifications: ${event.count}`;
  await appendMessage(ctx.runs.threads, thread, {
    role: MessageRole.USER,
    content,
    author: event.sourceId,
    id: `msg_${event._id.slice(5)}r`,
  });
}
