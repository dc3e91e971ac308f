// The REST API's playbooks: versioned procedures agents follow. Members write and publish them,
// viewers read them; every change of the document is a new version, and publishing an older one
// rolls back. Each a call to the agents service's PlaybooksService.
import * as z from 'zod';
import { defineApiRoute, optionalIntegerParam } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { bodyFields } from './service-fields.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  PlaybookDetailSchema,
  PlaybookDocumentSchema,
  playbookDetailJson,
  playbookJson,
  playbookParams,
  PlaybookSchema,
  PlaybookVersionSchema,
  versionJson,
  withDocumentProblems,
} from './playbook-json.ts';
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

const tags = ['Playbooks'];
const notFound = { '404': 'NotFound' } as const;
const detail = (description: string) => ({ ...json(PlaybookDetailSchema, description), headers: ETAG_HEADER });

const WritePlaybookSchema = z
  .object({
    document: PlaybookDocumentSchema,
    publish: z.boolean({ error: 'must be a boolean' }).optional().meta({ description: 'Publish this version at once.' }),
  })
  .strict()
  .meta({ title: 'WritePlaybook' });
const PublishPlaybookSchema = z
  .object({ version: z.int({ error: 'must be an integer' }).min(1, { error: 'must be at least 1' }).max(1_000_000) })
  .strict()
  .meta({ title: 'PublishPlaybook', example: { version: 2 } });
const versionParams = playbookParams.extend({
  version: optionalIntegerParam({ min: 1, max: 1_000_000, description: 'The version number.' }).unwrap(),
});

function createPlaybookRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/playbooks',
      operationId: 'createPlaybook',
      summary: 'Create a playbook',
      description:
        'Stores the document as version 1 (`publish: true` publishes it at once). A document the JSON Schema (`getPlaybookSchema`) or the tools, namespaces and paths it names refuse is a 422 listing every problem under `body.document`. 409 when a playbook of that name exists.',
      tags,
      params: orgParams,
      responses: { '201': detail('The playbook and its document.'), ...errors, '409': 'Conflict' },
      handler: async (c) => {
        const body = await readJson(c, WritePlaybookSchema, limit);
        const organizationId = c.input.params.organization_id;
        const document = body.document as never;
        const { playbook, version } = await withDocumentProblems(ctx.clients.playbooks, organizationId, document, ['document'], () =>
          ctx.clients.playbooks.createPlaybook({
            organizationId,
            document,
            publish: body.publish ?? false,
            createdBy: callerOf(c).subject,
          }),
        );
        sendJson(c.res, 201, playbookDetailJson(playbook!, version!), { etag: quoteEtag(playbook!.etag) });
      },
    }),
    body: WritePlaybookSchema,
    creates: true,
  };
}

function listPlaybooksRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/playbooks',
    operationId: 'listPlaybooks',
    summary: 'List playbooks',
    description: "The organization's playbooks, newest first.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('playbooks', PlaybookSchema, 'PlaybookList'), 'One page of playbooks.'), ...errors },
    handler: async (c) => {
      const organizationId = c.input.params.organization_id;
      const res = await listing(() => ctx.clients.playbooks.listPlaybooks({ organizationId, ...pageArgs(c.input.query) }));
      sendPage(c, 'playbooks', res.playbooks.map(playbookJson), res.nextPageToken);
    },
  });
}

function getPlaybookRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/playbooks/:playbook_id',
    operationId: 'getPlaybook',
    summary: 'Get a playbook',
    description: 'The playbook and its latest version’s document.',
    tags,
    params: playbookParams,
    responses: { '200': detail('The playbook.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
      const { playbook, latest } = await notFoundAs404(() => ctx.clients.playbooks.getPlaybook({ organizationId, playbookId }));
      sendJson(c.res, 200, playbookDetailJson(playbook!, latest!), { etag: quoteEtag(playbook!.etag) });
    },
  });
}

function updatePlaybookRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PUT',
      path: '/organizations/:organization_id/playbooks/:playbook_id',
      operationId: 'updatePlaybook',
      summary: 'Change a playbook',
      description:
        'Stores the document as the next version; the published version stays published unless `publish` is true. With If-Match, only if the playbook is still at that ETag (412 otherwise).',
      tags,
      params: playbookParams,
      responses: {
        '200': detail('The playbook and its new document.'),
        ...errors,
        ...notFound,
        '409': 'Conflict',
        '412': 'PreconditionFailed',
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, WritePlaybookSchema, limit);
        const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
        const document = body.document as never;
        const { playbook, version } = await withDocumentProblems(ctx.clients.playbooks, organizationId, document, ['document'], () =>
          notFoundAs404(() =>
            ctx.clients.playbooks.updatePlaybook({
              organizationId,
              playbookId,
              document,
              etag,
              publish: body.publish ?? false,
              createdBy: callerOf(c).subject,
            }),
          ),
        );
        sendJson(c.res, 200, playbookDetailJson(playbook!, version!), { etag: quoteEtag(playbook!.etag) });
      },
    }),
    body: WritePlaybookSchema,
  };
}

function publishPlaybookRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/playbooks/:playbook_id/publish',
      operationId: 'publishPlaybook',
      summary: 'Publish a version (or roll back)',
      description:
        'Makes `version` the one new runs use. Publishing an older version rolls the playbook back; runs already queued keep the version they were started with. With If-Match, only if the playbook is still at that ETag.',
      tags,
      params: playbookParams,
      responses: {
        '200': { ...json(PlaybookSchema, 'The playbook.'), headers: ETAG_HEADER },
        ...errors,
        ...notFound,
        '412': 'PreconditionFailed',
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, PublishPlaybookSchema, limit);
        const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
        const { playbook } = await bodyFields({ version: ['version'] }, () =>
          notFoundAs404(() => ctx.clients.playbooks.publishPlaybook({ organizationId, playbookId, version: body.version, etag })),
        );
        sendJson(c.res, 200, playbookJson(playbook!), { etag: quoteEtag(playbook!.etag) });
      },
    }),
    body: PublishPlaybookSchema,
  };
}

function listVersionsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/playbooks/:playbook_id/versions',
    operationId: 'listPlaybookVersions',
    summary: "List a playbook's versions",
    description: 'Newest first, each with its document.',
    tags,
    params: playbookParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('versions', PlaybookVersionSchema, 'PlaybookVersionList'), 'One page of versions.'),
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.playbooks.listPlaybookVersions({ organizationId, playbookId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'versions', res.versions.map(versionJson), res.nextPageToken);
    },
  });
}

function getVersionRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/playbooks/:playbook_id/versions/:version',
    operationId: 'getPlaybookVersion',
    summary: 'Get a version of a playbook',
    tags,
    params: versionParams,
    responses: { '200': json(PlaybookVersionSchema, 'The version.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, playbook_id: playbookId, version } = c.input.params;
      const res = await notFoundAs404(() => ctx.clients.playbooks.getPlaybookVersion({ organizationId, playbookId, version }));
      sendJson(c.res, 200, versionJson(res.version!));
    },
  });
}

export function playbookRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createPlaybookRoute(deps),
    listPlaybooksRoute(deps),
    getPlaybookRoute(deps),
    updatePlaybookRoute(deps),
    publishPlaybookRoute(deps),
    listVersionsRoute(deps),
    getVersionRoute(deps),
  ];
}
