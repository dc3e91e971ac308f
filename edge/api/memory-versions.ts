// A memory's versions over the REST API: the current one and every one a write replaced or a
// deletion removed, newest first, in cursor pages, and one version by number. The Brain keeps them
// (services/brain/version-record.ts); a narrowed caller finds only the memories it may reach.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { VersionState, type MemoryVersion } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { brainOf } from './memory-access.ts';
import { MemorySchema, memoryJson, memoryParams, nsEnum, writerJson } from './memory-json.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  pageArgs,
  pageQuery,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const tags = ['Memories'];
const STATE: Record<VersionState, string> = {
  [VersionState.UNSPECIFIED]: 'unspecified',
  [VersionState.CURRENT]: 'current',
  [VersionState.REPLACED]: 'replaced',
  [VersionState.DELETED]: 'deleted',
};

const VersionSchema = z
  .object({
    version: z.int(),
    state: z.enum(['current', 'replaced', 'deleted', 'unspecified']),
    memory: MemorySchema,
    ended_at: z.string().nullable().meta({ description: 'When a write replaced it or a deletion removed it.' }),
    ended_by: z
      .object({ client_id: z.string(), user_id: z.string(), client_name: z.string() })
      .nullable()
      .meta({ description: 'Who replaced or deleted it.' }),
  })
  .meta({
    title: 'MemoryVersion',
    description:
      'A memory as one write left it. state: current (the memory now), replaced (a later write changed it) or deleted (the memory was deleted at this version). Feedback is not kept per version.',
  });

const versionJson = (v: MemoryVersion) => ({
  version: Number(v.memory?.version ?? 0),
  state: STATE[v.state] as 'current' | 'replaced' | 'deleted' | 'unspecified',
  memory: memoryJson(v.memory!),
  ended_at: iso(v.endTime as Timestamp | undefined),
  ended_by: v.state === VersionState.CURRENT ? null : writerJson(v.endedBy),
});

function listVersionsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/memories/:namespace/:key/versions',
    operationId: 'listMemoryVersions',
    summary: "List a memory's versions",
    description:
      "Newest first: the current version (when the memory exists), then each one a write replaced or a deletion removed (page_size of them a page; the first page holds the current version besides). A key deleted and written again starts again at version 1; the earlier memory's versions follow. 404 when the key never held a memory.",
    tags,
    params: memoryParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('versions', VersionSchema, 'MemoryVersionList'), 'One page of versions.'),
      ...errors,
      '404': 'NotFound',
    },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const { organization_id: organizationId, namespace, key } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => brain.listMemoryVersions({ organizationId, namespace: nsEnum(namespace), key, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'versions', res.versions.map(versionJson), res.nextPageToken);
    },
  });
}

function getVersionRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/memories/:namespace/:key/versions/:version',
    operationId: 'getMemoryVersion',
    summary: 'Get one version of a memory',
    description: 'By its number (the newest memory of the key with that number, when the key was deleted and written again).',
    tags,
    params: memoryParams.extend({
      version: z
        .string()
        .regex(/^[1-9][0-9]{0,8}$/, { error: 'must be a version number (1 or more)' })
        .meta({ description: 'The version number.', example: '2' }),
    }),
    responses: { '200': json(VersionSchema, 'The version.'), ...errors, '404': 'NotFound' },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const { organization_id: organizationId, namespace, key, version } = c.input.params;
      const res = await notFoundAs404(() =>
        brain.getMemoryVersion({ organizationId, namespace: nsEnum(namespace), key, version: BigInt(version) }),
      );
      sendJson(c.res, 200, versionJson(res.version!));
    },
  });
}

export function memoryVersionRoutes(deps: RouteDeps): RestRoute[] {
  return [listVersionsRoute(deps), getVersionRoute(deps)];
}
