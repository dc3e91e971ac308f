// The REST API's alert sources: admins add them (the secret shown once, with the URL to give the
// monitoring system), rotate their secret and delete them; everyone reads them. Each a call to
// the agents service's AlertsService.
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import {
  AlertSourceSchema,
  AlertSourceWithSecretSchema,
  CreateAlertSourceSchema,
  FORMATS,
  sourceJson,
  sourceParams,
} from './alert-json.ts';
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

const tags = ['Alerts'];
const noStore = { 'cache-control': 'no-store' };
const notFound = { '404': 'NotFound' } as const;

function createSourceRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/alert-sources',
      operationId: 'createAlertSource',
      summary: 'Add an alert source',
      description:
        'An inbound endpoint for a monitoring system: `receive_url` takes its payloads (`alertmanager`: the Prometheus Alertmanager webhook; `generic`: one JSON alert), authenticated by `secret` (returned once). At most 50 per organization.',
      tags,
      params: orgParams,
      responses: { '201': json(AlertSourceWithSecretSchema, 'The source, with its secret.'), ...errors },
      handler: async (c) => {
        const body = await readJson(c, CreateAlertSourceSchema, limit);
        const res = await ctx.clients.alerts.createAlertSource({
          organizationId: c.input.params.organization_id,
          name: body.name,
          format: FORMATS[body.format],
          createdBy: callerOf(c).subject,
        });
        sendJson(c.res, 201, { source: sourceJson(res.source!, ctx.config.publicUrls.api), secret: res.secret }, noStore);
      },
    }),
    body: CreateAlertSourceSchema,
    creates: true,
  };
}

function listSourcesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-sources',
    operationId: 'listAlertSources',
    summary: 'List alert sources',
    description: "The organization's alert sources, oldest first (never their secrets).",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('sources', AlertSourceSchema, 'AlertSourceList'), 'One page of sources.'), ...errors },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.alerts.listAlertSources({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      const api = ctx.config.publicUrls.api;
      sendPage(
        c,
        'sources',
        res.sources.map((s) => sourceJson(s, api)),
        res.nextPageToken,
      );
    },
  });
}

function getSourceRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/alert-sources/:source_id',
    operationId: 'getAlertSource',
    summary: 'Get an alert source',
    tags,
    params: sourceParams,
    responses: { '200': json(AlertSourceSchema, 'The source.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, source_id: sourceId } = c.input.params;
      const { source } = await notFoundAs404(() => ctx.clients.alerts.getAlertSource({ organizationId, sourceId }));
      sendJson(c.res, 200, sourceJson(source!, ctx.config.publicUrls.api));
    },
  });
}

function deleteSourceRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/alert-sources/:source_id',
    operationId: 'deleteAlertSource',
    summary: 'Delete an alert source',
    description: 'Its URL refuses payloads from then on (401); its alert events stay.',
    tags,
    params: sourceParams,
    responses: { '204': { description: 'Deleted.' }, ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, source_id: sourceId } = c.input.params;
      await notFoundAs404(() => ctx.clients.alerts.deleteAlertSource({ organizationId, sourceId }));
      c.res.writeHead(204).end();
    },
  });
}

function rotateSecretRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/alert-sources/:source_id/rotate-secret',
    operationId: 'rotateAlertSourceSecret',
    summary: "Replace an alert source's secret",
    description: 'The new secret (returned once) takes over at once; the previous one is refused from then on.',
    tags,
    params: sourceParams,
    responses: { '200': json(AlertSourceWithSecretSchema, 'The source, with its new secret.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, source_id: sourceId } = c.input.params;
      const res = await notFoundAs404(() => ctx.clients.alerts.rotateAlertSourceSecret({ organizationId, sourceId }));
      sendJson(c.res, 200, { source: sourceJson(res.source!, ctx.config.publicUrls.api), secret: res.secret }, noStore);
    },
  });
}

export function alertSourceRoutes(deps: RouteDeps): RestRoute[] {
  return [createSourceRoute(deps), listSourcesRoute(deps), getSourceRoute(deps), deleteSourceRoute(deps), rotateSecretRoute(deps)];
}
