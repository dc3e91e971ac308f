// The REST API's alert rules: which alerts open an investigation, and what it starts. Admins
// (and admin keys) manage them; everyone reads them. A change is a PATCH laid over the stored
// rule under its ETag (the one in If-Match, else the one just read, so a concurrent change is
// never overwritten unseen). Each a call to the agents service's AlertsService.
import { Code, ConnectError } from '@connectrpc/connect';
import type { AlertRule } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import {
  AlertRuleSchema,
  CreateAlertRuleSchema,
  fieldErrors,
  ruleBody,
  ruleFieldPath,
  ruleJson,
  ruleMessage,
  ruleParams,
  UpdateAlertRuleSchema,
} from './alert-json.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { reasonOf, REASONS } from '../../services/common/rpc/reasons.ts';

const tags = ['Alerts'];
const notFound = { '404': 'NotFound' } as const;
const withEtag = (description: string) => ({ ...json(AlertRuleSchema, description), headers: ETAG_HEADER });
const sendRule = (c: Parameters<RestRoute['handler']>[0], status: number, rule: AlertRule) =>
  sendJson(c.res, status, ruleJson(rule), { etag: quoteEtag(rule.etag) });

function createRuleRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/alert-rules',
      operationId: 'createAlertRule',
      summary: 'Add an alert rule',
      description:
        "Alerts of the given sources (any when empty), severities (any when empty) and labels (every matcher: `=`, `!=`, `=~`, `!~`, regular expressions anchored) open an investigation: a thread with the alert and a queued run with `action.instructions`, or following `action.playbook` (the alert's fields fill its inputs of the same names). `notifications` are told when the rule opens an investigation and when its run ends (`alert.investigation_opened`, `alert.investigation_finished`). A playbook that is not the organization's, has no published version (without a pinned one) or whose inputs do not fit, and an endpoint that is not the organization's, are 422 naming the field. Rules are tried oldest first; the first that matches acts. At most 100 per organization.",
      tags,
      params: orgParams,
      responses: { '201': withEtag('The rule.'), ...errors },
      handler: async (c) => {
        const body = await readJson(c, CreateAlertRuleSchema, limit);
        const { rule } = await fieldErrors(
          () =>
            ctx.clients.alerts.createAlertRule({
              organizationId: c.input.params.organization_id,
              rule: ruleMessage(body),
              createdBy: callerOf(c).subject,
            }),
          ruleFieldPath,
        );
        sendRule(c, 201, rule!);
      },
    }),
    body: CreateAlertRuleSchema,
    creates: true,
  };
}

function listRulesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-rules',
    operationId: 'listAlertRules',
    summary: 'List alert rules',
    description: 'Oldest first: the order they are tried in.',
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('rules', AlertRuleSchema, 'AlertRuleList'), 'One page of rules.'), ...errors },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.alerts.listAlertRules({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'rules', res.rules.map(ruleJson), res.nextPageToken);
    },
  });
}

function getRuleRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-rules/:rule_id',
    operationId: 'getAlertRule',
    summary: 'Get an alert rule',
    tags,
    params: ruleParams,
    responses: { '200': withEtag('The rule.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, rule_id: ruleId } = c.input.params;
      const { rule } = await notFoundAs404(() => ctx.clients.alerts.getAlertRule({ organizationId, ruleId }));
      sendRule(c, 200, rule!);
    },
  });
}

function updateRuleRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/alert-rules/:rule_id',
      operationId: 'updateAlertRule',
      summary: 'Change an alert rule',
      description: 'Changes the fields given. With If-Match, only if the rule is still at that ETag (412 otherwise).',
      tags,
      params: ruleParams,
      responses: { '200': withEtag('The rule, as stored.'), ...errors, ...notFound, '412': 'PreconditionFailed' },
      handler: async (c) => {
        const expected = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateAlertRuleSchema, limit);
        const { organization_id: organizationId, rule_id: ruleId } = c.input.params;
        for (;;) {
          const { rule: current } = await notFoundAs404(() => ctx.clients.alerts.getAlertRule({ organizationId, ruleId }));
          const merged = { ...ruleBody(ruleJson(current!)), ...body };
          const etag = expected || current!.etag;
          try {
            const { rule } = await fieldErrors(
              () => notFoundAs404(() => ctx.clients.alerts.updateAlertRule({ organizationId, ruleId, rule: ruleMessage(merged), etag })),
              ruleFieldPath,
            );
            return sendRule(c, 200, rule!);
          } catch (err) {
            // Changed between our read and our write: read again, unless the caller named a version.
            const stale = err instanceof ConnectError && err.code === Code.FailedPrecondition && reasonOf(err) === REASONS.etagMismatch;
            if (!stale || expected !== '') throw err;
          }
        }
      },
    }),
    body: UpdateAlertRuleSchema,
  };
}

function deleteRuleRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/alert-rules/:rule_id',
    operationId: 'deleteAlertRule',
    summary: 'Delete an alert rule',
    description: 'Investigations it opened stay.',
    tags,
    params: ruleParams,
    responses: { '204': { description: 'Deleted.' }, ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, rule_id: ruleId } = c.input.params;
      await notFoundAs404(() => ctx.clients.alerts.deleteAlertRule({ organizationId, ruleId }));
      c.res.writeHead(204).end();
    },
  });
}

export function alertRuleRoutes(deps: RouteDeps): RestRoute[] {
  return [createRuleRoute(deps), listRulesRoute(deps), getRuleRoute(deps), updateRuleRoute(deps), deleteRuleRoute(deps)];
}
