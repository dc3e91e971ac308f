// The audit log over REST: every change made through the Agents API (every POST, PUT, PATCH and
// DELETE that reached an organization, whatever its outcome, refused attempts included) is
// recorded by the route guard (access.ts) through the agents service's AuditService; owners and
// admins list the events with filters, or export them as JSON Lines.
import type { IncomingMessage } from 'node:http';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { AuditEvent } from '../../gen/mindgate/agents/v1/audit_pb.js';
import type { AppContext } from '../context.ts';
import { integerParam, type AnyApiRouteContext } from '../http/api-route.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { createClientIpResolver } from '../http/client-ip.ts';
import type { Caller } from './auth.ts';
import { errors, iso, json, listEnvelope, listing, sendPage, orgParams, type RestRoute, type RouteDeps } from './rest-route.ts';

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const overrides = new WeakMap<AnyApiRouteContext, { organizationIds: string[]; target: string }>();

/** For a change outside the path's organization (a new organization): where to record it. */
export function setAuditOrganization(c: AnyApiRouteContext, organizationId: string, target: string): void {
  overrides.set(c, { organizationIds: [organizationId], target });
}

/**
 * For a change to a user's own account: recorded in every organization the user belongs to, so
 * each one's owners and admins see it.
 */
export function setAuditOrganizations(c: AnyApiRouteContext, organizationIds: string[], target: string): void {
  overrides.set(c, { organizationIds, target });
}

export type AuditRecorder = (c: AnyApiRouteContext, route: RestRoute, caller: Caller, status: number) => Promise<void>;

function outcomeOf(status: number): 'success' | 'denied' | 'failed' {
  if (status < 300) return 'success';
  return status === 401 || status === 403 ? 'denied' : 'failed';
}

/**
 * Where a change is recorded: where the route said (setAuditOrganization[s]), else the path's
 * organization; a change to one's own account that did not say (a refused or failed attempt) is
 * recorded in the organization the credentials act for.
 */
function auditOrganizations(c: AnyApiRouteContext, route: RestRoute, caller: Caller): string[] {
  const override = overrides.get(c);
  if (override) return override.organizationIds;
  const path = (c.input?.params as { organization_id?: string } | undefined)?.organization_id;
  if (path) return [path];
  return route.access?.user ? [caller.organizationId] : [];
}

/** Records an event, or logs it in full at error level when the agents service cannot take it. */
async function record(ctx: AppContext, event: RecordedEvent): Promise<void> {
  try {
    await ctx.clients.audit.recordEvent({ event });
  } catch (err) {
    if (event.action === 'deleteOrganization' && event.status < 300) {
      // The organization's audit log goes with it: its last event is kept in the process log.
      ctx.logger.info({ event }, 'organization deleted (its audit log is deleted with it)');
      return;
    }
    ctx.logger.error({ err, event }, 'audit event not recorded');
  }
}

type RecordedEvent = {
  organizationId: string;
  actorKind: string;
  actorId: string;
  action: string;
  target: string;
  status: number;
  outcome: string;
  ip: string;
  userAgent: string;
  requestId: string;
  details?: Record<string, string>;
};

/**
 * Records a change, or an attempt at one (see auditOrganizations). A failure to record is logged
 * with the whole event (so it is not lost) and does not fail the request, whose change has
 * already happened.
 */
export function createAuditRecorder(ctx: AppContext): AuditRecorder {
  const clientIp = createClientIpResolver(ctx.config.web.trustedProxies);
  return async (c, route, caller, status) => {
    if (!CHANGES.has(route.method)) return;
    for (const organizationId of auditOrganizations(c, route, caller)) {
      await record(ctx, {
        organizationId,
        actorKind: caller.kind,
        actorId: caller.kind === 'client' ? (caller.clientId ?? caller.subject) : caller.subject,
        action: route.operationId,
        target: overrides.get(c)?.target ?? c.path,
        status,
        outcome: outcomeOf(status),
        ip: clientIp(c.req),
        userAgent: String(c.req.headers['user-agent'] ?? '').slice(0, 512),
        requestId: c.requestId.slice(0, 128),
      });
    }
  };
}

/** A step of a person at the authorization server (sign-up, joining), outside the REST API. */
export interface PeopleStep {
  organizationId: string;
  userId: string;
  /** "signUp", "acceptInvitation", "createOrganization". */
  action: string;
  target: string;
  details: Record<string, string>;
}

export type PeopleAudit = (req: IncomingMessage, requestId: string, step: PeopleStep) => Promise<void>;

/** Records the people steps taken on the authorization server's pages, as successful changes by the user. */
export function createPeopleAudit(ctx: AppContext): PeopleAudit {
  const clientIp = createClientIpResolver(ctx.config.web.trustedProxies);
  return (req, requestId, step) =>
    record(ctx, {
      organizationId: step.organizationId,
      actorKind: 'user',
      actorId: step.userId,
      action: step.action,
      target: step.target,
      status: 200,
      outcome: 'success',
      ip: clientIp(req),
      userAgent: String(req.headers['user-agent'] ?? '').slice(0, 512),
      requestId: requestId.slice(0, 128),
      details: step.details,
    });
}

export const AuditEventSchema = z
  .object({
    id: z.string(),
    actor: z.object({ kind: z.enum(['user', 'api_key', 'client']), id: z.string() }),
    action: z.string().meta({ description: 'The operation (operationId), such as `createApiKey`.' }),
    target: z.string().meta({ description: 'The path of the resource.' }),
    status: z.int(),
    outcome: z.enum(['success', 'denied', 'failed']),
    ip: z.string(),
    user_agent: z.string(),
    request_id: z.string(),
    created_at: z.string().nullable(),
    details: z.record(z.string(), z.string()).meta({
      description:
        'What action and target do not say, for steps at the authorization server: `role`, `team_ids`, `invitation_id`, `source` (`sign-up`, `consent`), `account` (`created`, `existing`). Empty for REST changes.',
    }),
  })
  .meta({ title: 'AuditEvent' });

const AuditEventListSchema = listEnvelope('events', AuditEventSchema, 'AuditEventList');

const timeParam = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 time, such as 2026-11-24T10:00:00Z' })
  .optional()
  .meta({ description: 'RFC 3339 time.' });

const filterQuery = z.object({
  actor_id: z.string().max(256).optional().meta({ description: 'Only this user, API key or client.' }),
  action: z
    .string()
    .regex(/^[A-Za-z]{1,100}$/, { error: 'must be an operationId' })
    .optional()
    .meta({ description: 'Only this operation.' }),
  outcome: z.enum(['success', 'denied', 'failed']).optional(),
  since: timeParam,
  until: timeParam,
});

const listQuery = filterQuery.extend({
  page_size: integerParam({ min: 1, max: 1_000, default: 50, description: 'How many events to return, 1-1000.' }),
  page_token: z
    .string()
    .max(2_048)
    .regex(/^[A-Za-z0-9_-]*$/, { error: 'must be a next_page_token from a previous page' })
    .default(''),
});

type Filters = z.output<typeof filterQuery>;

const eventJson = (e: AuditEvent) => ({
  id: e.eventId,
  actor: { kind: e.actorKind as 'user' | 'api_key' | 'client', id: e.actorId },
  action: e.action,
  target: e.target,
  status: e.status,
  outcome: e.outcome as 'success' | 'denied' | 'failed',
  ip: e.ip,
  user_agent: e.userAgent,
  request_id: e.requestId,
  created_at: iso(e.createTime),
  details: { ...e.details },
});

function listRequest(organizationId: string, q: Filters, pageSize: number, pageToken: string) {
  const time = (value: string | undefined) => (value ? timestampFromMs(Date.parse(value)) : undefined);
  return {
    organizationId,
    actorId: q.actor_id ?? '',
    action: q.action ?? '',
    outcome: q.outcome ?? '',
    since: time(q.since),
    until: time(q.until),
    pageSize,
    pageToken,
  };
}

function listAuditEventsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/audit-events',
    operationId: 'listAuditEvents',
    summary: 'List audit events',
    description:
      'Changes made to the organization through this API, and refused attempts, newest first: who (user, API key or client), what (`action`, the operation), to what (`target`), when, from where (`ip`, `user_agent`) and how it ended; also the people steps taken at the authorization server (`signUp`, `acceptInvitation`, `createOrganization` at consent, with `details`) and changes members make to their own accounts (`updateCurrentUser`, `deleteCurrentUser`). Kept for the organization’s retention (365 days by default).',
    tags: ['Audit log'],
    params: orgParams,
    query: listQuery,
    responses: {
      '200': json(AuditEventListSchema, 'One page of events.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const q = c.input.query;
      const res = await listing(() =>
        ctx.clients.audit.listEvents(listRequest(c.input.params.organization_id, q, q.page_size, q.page_token)),
      );
      sendPage(c, 'events', res.events.map(eventJson), res.nextPageToken);
    },
  });
}

function exportAuditEventsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/audit-events/export',
    operationId: 'exportAuditEvents',
    summary: 'Export audit events as JSON Lines',
    description: 'Every event matching the filters, newest first, one JSON object (as in listAuditEvents) per line, streamed.',
    tags: ['Audit log'],
    params: orgParams,
    query: filterQuery,
    responses: {
      '200': { description: 'The events, one per line.', content: { 'application/jsonl': { type: 'string' } } },
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const request = (token: string) => listRequest(c.input.params.organization_id, c.input.query, 1_000, token);
      // The first page is read before the head is sent, so a refusal is still a problem document.
      let res = await ctx.clients.audit.listEvents(request(''));
      c.res.writeHead(200, {
        'content-type': 'application/jsonl; charset=utf-8',
        'content-disposition': `attachment; filename="audit-${c.input.params.organization_id}.jsonl"`,
        'cache-control': 'no-store',
      });
      try {
        for (;;) {
          const lines = res.events.map((e) => `${JSON.stringify(eventJson(e))}\n`).join('');
          if (lines && !c.res.write(lines)) await new Promise((resolve) => c.res.once('drain', resolve));
          if (res.nextPageToken === '' || c.res.destroyed) break;
          res = await ctx.clients.audit.listEvents(request(res.nextPageToken));
        }
        c.res.end();
      } catch (err) {
        // Too late for a status: cut the response so the client sees an incomplete export.
        ctx.logger.warn({ err, requestId: c.requestId }, 'audit export cut short');
        c.res.destroy();
      }
    },
  });
}

export function auditRoutes(deps: RouteDeps): RestRoute[] {
  return [listAuditEventsRoute(deps), exportAuditEventsRoute(deps)];
}
