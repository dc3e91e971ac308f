// The REST API's alerts: sources, rules and alert events of an organization (behind the
// authorization matrix like every organization route), and the one public operation,
// POST {api_url}/alert-sources/{source_id}/alerts, where monitoring systems send their alerts.
// That one is authenticated by the source's secret, not by a user's token or an API key: it is
// outside the matrix (as the payment provider's webhook is), and the OpenAPI document gives it its
// own security scheme, AlertSourceSecret. The raw body goes to the agents service, which checks
// the secret (Bearer, or the generic format's HMAC signature) and the payload.
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { AppContext } from '../context.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { readBody, sendJson } from '../http/respond.ts';
import { alertEventRoutes } from './alert-events.ts';
import { AlertPayloadSchema, fieldErrors, ReceiptSchema, SourceId } from './alert-json.ts';
import { alertRuleRoutes } from './alert-rules.ts';
import { alertSourceRoutes } from './alert-sources.ts';
import { UnauthenticatedError } from './auth.ts';
import { json, MediaTypeError, type RestRoute, type RouteDeps } from './rest-route.ts';

/** The organization's alert operations, guarded by the matrix with the other organization routes. */
export function alertRoutes(deps: RouteDeps): RestRoute[] {
  return [...alertSourceRoutes(deps), ...alertRuleRoutes(deps), ...alertEventRoutes(deps)];
}

/** The security scheme of the receive operation, for the OpenAPI document. */
export const ALERT_SOURCE_SECURITY_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  description:
    'The alert source\'s secret (`alsec_…`, returned when the source was created), as Alertmanager\'s `http_config.authorization` sends it. A generic source may instead sign: `Mindgate-Timestamp` (Unix seconds, within 5 minutes) and `Mindgate-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" under the secret>`.',
};

const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : '');

/** The receive operation: public, authenticated by the source's secret. */
export function receiveAlertsRoute(ctx: AppContext): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/alert-sources/:source_id/alerts',
      operationId: 'receiveAlerts',
      summary: 'Send alerts to an alert source',
      description:
        "Where a monitoring system sends alerts: the source's `receive_url`. An `alertmanager` source takes the Prometheus Alertmanager webhook (version 4); a `generic` one a JSON alert (`title`, `status`, `severity`, `labels`, `annotations`, `fingerprint` or `dedup_key`, `group_key`, `url`, `starts_at`). A repeat of an open alert is counted, not opened again. 401 when the source does not exist or the credentials are not its secret; 422 names the first field the payload gets wrong; 413 past MAX_BODY_BYTES.",
      tags: ['Alerts'],
      params: z.object({ source_id: SourceId }),
      responses: {
        '200': json(ReceiptSchema, 'What the payload did.'),
        '401': 'Unauthorized',
        '413': 'ContentTooLarge',
        '415': 'UnsupportedMediaType',
        '422': 'ValidationFailed',
        '503': 'Unavailable',
        '504': 'GatewayTimeout',
      },
      handler: async (c) => {
        const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'application/json') throw new MediaTypeError('send the alerts as application/json');
        const payload = await readBody(c.req, ctx.config.maxBodyBytes);
        const res = await fieldErrors(async () => {
          try {
            return await ctx.clients.alerts.receiveAlerts({
              sourceId: c.input.params.source_id,
              payload,
              authorization: header(c.req.headers.authorization),
              signature: header(c.req.headers['mindgate-signature']),
              timestamp: header(c.req.headers['mindgate-timestamp']),
            });
          } catch (err) {
            if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
              throw new UnauthenticatedError(err.rawMessage, 'Bearer realm="alert-source", error="invalid_token"');
            }
            throw err;
          }
        });
        sendJson(c.res, 200, {
          received: res.received,
          opened: res.opened,
          deduplicated: res.deduplicated,
          resolved: res.resolved,
          investigations_opened: res.investigationsOpened,
          alert_event_ids: res.alertEventIds,
        });
      },
    }),
    body: AlertPayloadSchema,
    security: [{ AlertSourceSecret: [] }],
  };
}
