// Alert rules: which alerts open an investigation, and what it starts. A rule matches an alert
// when it is enabled, the alert's source is among its sources (any when none), its severity among
// its severities (any when none), and every label matcher holds (Alertmanager's semantics: =, !=,
// =~ and !~ with the regular expression anchored at both ends, a missing label being ""). Rules
// are tried oldest first; the first that matches acts. The action is a oneof in the contract, so
// other kinds can be added beside `investigate` without breaking the wire. An investigation may
// follow a playbook (alert-playbooks.ts) and be announced to the rule's channels (notifications.ts),
// both checked against the organization's playbooks and webhook endpoints when the rule is stored.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AlertRuleSchema,
  CreateAlertRuleResponseSchema,
  DeleteAlertRuleResponseSchema,
  GetAlertRuleResponseSchema,
  LabelMatcher_MatchOp as MatchOp,
  ListAlertRulesResponseSchema,
  UpdateAlertRuleResponseSchema,
  type AlertRule,
  type CreateAlertRuleRequest,
  type DeleteAlertRuleRequest,
  type GetAlertRuleRequest,
  type ListAlertRulesRequest,
  type UpdateAlertRuleRequest,
} from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { newId } from '../handlers/organizations.ts';
import { requireAlertPlaybook } from './alert-playbooks.ts';
import { requireNotifications } from './notifications.ts';
import type { IncomingAlert } from './payloads.ts';
import type { ActionRecord, AlertRuleRecord, AlertsContext, MatcherRecord } from './records.ts';

const RULE_ID = /^alr_[A-Za-z0-9]{1,60}$/;
/** An organization's rules at most: every alert is tried against each. */
export const MAX_RULES = 100;
const MAX_MATCHERS = 20;

export const toRule = (r: AlertRuleRecord): AlertRule =>
  create(AlertRuleSchema, {
    ruleId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    enabled: r.enabled,
    severities: r.severities,
    matchers: r.matchers,
    sourceIds: r.sourceIds,
    action: {
      case: 'investigate',
      value: {
        instructions: r.action.instructions,
        executor: r.action.executor,
        timeoutSeconds: r.action.timeoutSeconds,
        playbook: r.action.playbook && {
          playbookId: r.action.playbook.playbookId,
          version: r.action.playbook.version,
          inputs: r.action.playbook.inputs,
          brainFeedback: r.action.playbook.brainFeedback,
        },
      },
    },
    notifications: { emails: r.notifications?.emails ?? [], webhookEndpointIds: r.notifications?.endpointIds ?? [] },
    createdBy: r.createdBy,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
  });

function compile(m: MatcherRecord): RegExp {
  return new RegExp(`^(?:${m.value})$`, 'u');
}

function requireMatchers(rule: AlertRule): MatcherRecord[] {
  if (rule.matchers.length > MAX_MATCHERS) invalid('rule.matchers', `must have at most ${MAX_MATCHERS} items`);
  return rule.matchers.map((m, i) => {
    const field = `rule.matchers.${i}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,199}$/.test(m.label)) invalid(`${field}.label`, 'must be a label name ([A-Za-z_][A-Za-z0-9_]*)');
    if (!(m.op in MatchOp) || m.op === MatchOp.UNSPECIFIED) invalid(`${field}.op`, 'must be =, !=, =~ or !~');
    const matcher = { label: m.label, op: m.op, value: requireText(`${field}.value`, m.value, 1_000) };
    if (m.op === MatchOp.REGEX || m.op === MatchOp.NOT_REGEX) {
      try {
        compile(matcher);
      } catch {
        invalid(`${field}.value`, 'is not a regular expression');
      }
    }
    return matcher;
  });
}

async function requireAction(ctx: AlertsContext, organizationId: string, rule: AlertRule): Promise<ActionRecord> {
  if (rule.action.case !== 'investigate') invalid('rule.action', 'is required (investigate)');
  const a = rule.action.value;
  const executor = a.executor === Executor.UNSPECIFIED ? Executor.LLM : a.executor;
  if (!(executor in Executor)) invalid('rule.action.investigate.executor', 'is not an executor');
  const timeoutSeconds = a.timeoutSeconds === 0 ? 3_600 : a.timeoutSeconds;
  if (timeoutSeconds > 86_400) invalid('rule.action.investigate.timeout_seconds', 'must be from 1 to 86400 (0 for 3600)');
  const action: ActionRecord = {
    kind: 'investigate',
    instructions: requireText('rule.action.investigate.instructions', a.instructions, 20_000),
    executor,
    timeoutSeconds,
  };
  if (!a.playbook) return action;
  if (action.instructions !== '')
    invalid('rule.action.investigate.instructions', "must be empty with a playbook: the playbook's instructions apply");
  return { ...action, playbook: await requireAlertPlaybook(ctx, organizationId, a.playbook, executor) };
}

/** The rule's definition, checked (the fields a create or an update sets). */
async function definition(ctx: AlertsContext, organizationId: string, rule: AlertRule | undefined) {
  if (!rule) invalid('rule', 'is required');
  return {
    name: requireText('rule.name', rule.name.trim(), 200, { required: true }),
    enabled: rule.enabled,
    severities: requireList('rule.severities', rule.severities, 20, 50),
    matchers: requireMatchers(rule),
    sourceIds: requireList('rule.source_ids', rule.sourceIds, 50, 100),
    action: await requireAction(ctx, organizationId, rule),
    notifications: await requireNotifications(ctx, organizationId, rule.notifications),
  };
}

export async function ownedRule(ctx: AlertsContext, organizationId: string, ruleId: string): Promise<AlertRuleRecord> {
  if (!RULE_ID.test(ruleId)) invalid('rule_id', 'is not an alert rule id');
  const rule = await ctx.rules.get(ruleId);
  if (!rule || rule.organizationId !== organizationId) throw new ConnectError(`alert rule "${ruleId}" does not exist`, Code.NotFound);
  return rule;
}

export async function createAlertRule(ctx: AlertsContext, req: CreateAlertRuleRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const fields = await definition(ctx, organizationId, req.rule);
  if ((await ctx.rules.count({ organizationId })) >= MAX_RULES) {
    throw new ConnectError(`an organization has at most ${MAX_RULES} alert rules`, Code.ResourceExhausted);
  }
  const now = ctx.now();
  const record: AlertRuleRecord = {
    _id: newId('alr'),
    organizationId,
    ...fields,
    createdBy: requireText('created_by', req.createdBy, 200),
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await ctx.rules.put(record, { expect: null });
  return create(CreateAlertRuleResponseSchema, { rule: toRule(record) });
}

export async function getAlertRule(ctx: AlertsContext, req: GetAlertRuleRequest) {
  return create(GetAlertRuleResponseSchema, { rule: toRule(await ownedRule(ctx, requireOrganization(req.organizationId), req.ruleId)) });
}

export async function listAlertRules(ctx: AlertsContext, req: ListAlertRulesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.rules, { organizationId }, req, { field: 'createdAt', scope: `alert-rules:${organizationId}` });
  return create(ListAlertRulesResponseSchema, { rules: page.items.map(toRule), nextPageToken: page.nextPageToken });
}

export async function updateAlertRule(ctx: AlertsContext, req: UpdateAlertRuleRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedRule(ctx, organizationId, req.ruleId);
  const stale = () =>
    failure('the rule changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  if (req.etag !== '' && req.etag !== String(current.version)) throw stale();
  const fields = await definition(ctx, organizationId, req.rule);
  const next: AlertRuleRecord = { ...current, ...fields, updatedAt: ctx.now(), version: current.version + 1 };
  if (!(await ctx.rules.put(next, { expect: { version: current.version } }))) throw stale();
  return create(UpdateAlertRuleResponseSchema, { rule: toRule(next) });
}

export async function deleteAlertRule(ctx: AlertsContext, req: DeleteAlertRuleRequest) {
  const rule = await ownedRule(ctx, requireOrganization(req.organizationId), req.ruleId);
  await ctx.rules.delete(rule._id);
  return create(DeleteAlertRuleResponseSchema, {});
}

function holds(m: MatcherRecord, labels: Record<string, string>): boolean {
  const value = labels[m.label] ?? '';
  switch (m.op) {
    case MatchOp.EQUAL:
      return value === m.value;
    case MatchOp.NOT_EQUAL:
      return value !== m.value;
    case MatchOp.REGEX:
      return compile(m).test(value);
    case MatchOp.NOT_REGEX:
      return !compile(m).test(value);
    default:
      return false;
  }
}

export function ruleMatches(rule: AlertRuleRecord, sourceId: string, alert: IncomingAlert): boolean {
  if (!rule.enabled) return false;
  if (rule.sourceIds.length > 0 && !rule.sourceIds.includes(sourceId)) return false;
  if (rule.severities.length > 0 && !rule.severities.includes(alert.severity)) return false;
  return rule.matchers.every((m) => holds(m, alert.labels));
}

/** The organization's rules, in the order they are tried. */
export function rulesOf(ctx: AlertsContext, organizationId: string): Promise<AlertRuleRecord[]> {
  return ctx.rules.find({ organizationId }, { sort: { field: 'createdAt', direction: 'asc' }, limit: MAX_RULES });
}
