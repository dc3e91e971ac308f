// The REST API's alert events: everyone lists and reads them; members (and write keys)
// acknowledge, resolve and snooze them, with If-Match when they want the change to apply only to
// the version they saw. Each a call to the agents service's AlertsService.
import * as z from 'zod';
import type { AlertEvent } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { AlertStatus } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import {
  AlertEventSchema,
  alertEventJson,
  alertEventParams,
  fieldErrors,
  SnoozeAlertEventSchema,
  SourceId,
  STATUSES,
  StatusName,
  timestampOf,
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
import { ThreadId } from './threads.ts';

const tags = ['Alerts'];
const notFound = { '404': 'NotFound' } as const;
const withEtag = (description: string) => ({ ...json(AlertEventSchema, description), headers: ETAG_HEADER });
const changed = { ...errors, ...notFound, '409': 'Conflict', '412': 'PreconditionFailed' } as const;
const sendEvent = (c: Parameters<RestRoute['handler']>[0], e: AlertEvent) =>
  sendJson(c.res, 200, alertEventJson(e), { etag: quoteEtag(e.etag) });

const listQuery = pageQuery.extend({
  status: StatusName.optional().meta({ description: 'Only alert events in this status.' }),
  severity: z.string().min(1).max(50).optional().meta({ description: 'Only alert events of this severity.' }),
  source_id: SourceId.optional().meta({ description: 'Only alert events of this source.' }),
  thread_id: ThreadId.optional().meta({ description: 'Only the alert events linked to this thread (its investigation).' }),
});

function listRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-events',
    operationId: 'listAlertEvents',
    summary: 'List alert events',
    description:
      "Newest first; each occurrence of an alert (one fingerprint from firing to resolved) is one event. `thread_id` lists an investigation's linked alerts.",
    tags,
    params: orgParams,
    query: listQuery,
    responses: { '200': json(listEnvelope('alert_events', AlertEventSchema, 'AlertEventList'), 'One page of alert events.'), ...errors },
    handler: async (c) => {
      const { status, severity, source_id, thread_id, ...page } = c.input.query;
      const res = await listing(() =>
        ctx.clients.alerts.listAlertEvents({
          organizationId: c.input.params.organization_id,
          status: status ? STATUSES[status] : AlertStatus.UNSPECIFIED,
          severity: severity ?? '',
          sourceId: source_id ?? '',
          threadId: thread_id ?? '',
          ...pageArgs(page),
        }),
      );
      sendPage(c, 'alert_events', res.alertEvents.map(alertEventJson), res.nextPageToken);
    },
  });
}

function getRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-events/:alert_event_id',
    operationId: 'getAlertEvent',
    summary: 'Get an alert event',
    tags,
    params: alertEventParams,
    responses: { '200': withEtag('The alert event.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, alert_event_id: alertEventId } = c.input.params;
      const { alertEvent } = await notFoundAs404(() => ctx.clients.alerts.getAlertEvent({ organizationId, alertEventId }));
      sendEvent(c, alertEvent!);
    },
  });
}

function actionRoute(
  { ctx }: RouteDeps,
  spec: { verb: 'acknowledge' | 'resolve'; operationId: string; summary: string; description: string },
): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: `/organizations/:organization_id/alert-events/:alert_event_id/${spec.verb}`,
    operationId: spec.operationId,
    summary: spec.summary,
    description: `${spec.description} 409 once the alert event is resolved; with If-Match, 412 unless it is still at that ETag.`,
    tags,
    params: alertEventParams,
    responses: { '200': withEtag('The alert event, as stored.'), ...changed },
    handler: async (c) => {
      const etag = ifMatch(c.req.headers['if-match']);
      const { organization_id: organizationId, alert_event_id: alertEventId } = c.input.params;
      const req = { organizationId, alertEventId, actor: callerOf(c).subject, etag };
      const alerts = ctx.clients.alerts;
      const call = async (): Promise<{ alertEvent?: AlertEvent }> =>
        spec.verb === 'acknowledge' ? alerts.acknowledgeAlertEvent(req) : alerts.resolveAlertEvent(req);
      const { alertEvent } = await notFoundAs404(call);
      sendEvent(c, alertEvent!);
    },
  });
}

function snoozeRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/alert-events/:alert_event_id/snooze',
      operationId: 'snoozeAlertEvent',
      summary: 'Snooze an alert event',
      description:
        'Keeps the alert quiet until `until` (at most 30 days ahead): its repeats, and a new firing of the same fingerprint meanwhile, open nothing and publish nothing. 409 once resolved; with If-Match, 412 unless still at that ETag.',
      tags,
      params: alertEventParams,
      responses: { '200': withEtag('The alert event, as stored.'), ...changed },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, SnoozeAlertEventSchema, limit);
        const { organization_id: organizationId, alert_event_id: alertEventId } = c.input.params;
        const req = { organizationId, alertEventId, actor: callerOf(c).subject, until: timestampOf(body.until), etag };
        const { alertEvent } = await fieldErrors(() => notFoundAs404(() => ctx.clients.alerts.snoozeAlertEvent(req)));
        sendEvent(c, alertEvent!);
      },
    }),
    body: SnoozeAlertEventSchema,
  };
}

export function alertEventRoutes(deps: RouteDeps): RestRoute[] {
  return [
    listRoute(deps),
    getRoute(deps),
    actionRoute(deps, {
      verb: 'acknowledge',
      operationId: 'acknowledgeAlertEvent',
      summary: 'Acknowledge an alert event',
      description: 'Says someone is looking at it.',
    }),
    actionRoute(deps, {
      verb: 'resolve',
      operationId: 'resolveAlertEvent',
      summary: 'Resolve an alert event',
      description:
        'Closes it by hand: its thread gets a message and `alert.resolved` is published. A later firing opens a new alert event.',
    }),
    snoozeRoute(deps),
  ];
}
