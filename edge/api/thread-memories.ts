// The REST API's record of the memories a thread produced: each Brain write its runs reported
// (namespace, key, version), kept by the agents service (ThreadsService.ListThreadMemories).
// Viewers and up read it; the memories themselves are the Brain's (`getMemory`).
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { ThreadMemory } from '../../gen/mindgate/agents/v1/threads_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
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
import { threadParams } from './threads.ts';

export const ThreadMemorySchema = z
  .object({
    thread_id: z.string().meta({ example: 'thr_Qm8x2LkP0aZr7Tn4Vw1s' }),
    namespace: z.enum(['episodes', 'knowledge']),
    key: z.string().meta({ example: 'incidents/checkout-latency-2026-11-25' }),
    version: z.int().meta({ description: 'The version the run wrote.', example: 1 }),
    run_id: z.string().meta({ description: 'The run that reported the write.', example: 'run_Zt3pK9qW1xLm7Ns0Ve2a' }),
    step_index: z.int().meta({ description: "The index of the run's brain_write step.", example: 3 }),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'ThreadMemory' });

const threadMemoryJson = (m: ThreadMemory) => ({
  thread_id: m.threadId,
  namespace: m.namespace === 'knowledge' ? ('knowledge' as const) : ('episodes' as const),
  key: m.key,
  version: Number(m.version),
  run_id: m.runId,
  step_index: m.stepIndex,
  created_at: iso(m.createTime as Timestamp | undefined),
});

export function threadMemoryRoutes({ ctx }: RouteDeps): RestRoute[] {
  return [
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id/threads/:thread_id/memories',
      operationId: 'listThreadMemories',
      summary: 'List the memories a thread produced',
      description:
        "The Brain writes of the thread's runs, oldest first: each namespace, key and version once (a write repeated by a retry or a takeover is listed under the first run that reported it). A run's `brain_write` step is counted when its result names the memory (`namespace`, `key`, `version`), as the platform's runners' steps do.",
      tags: ['Investigations'],
      params: threadParams,
      query: pageQuery,
      responses: {
        '200': json(listEnvelope('memories', ThreadMemorySchema, 'ThreadMemoryList'), 'One page of memories.'),
        ...errors,
        '404': 'NotFound',
      },
      handler: async (c) => {
        const { organization_id: organizationId, thread_id: threadId } = c.input.params;
        const res = await listing(() =>
          notFoundAs404(() => ctx.clients.threads.listThreadMemories({ organizationId, threadId, ...pageArgs(c.input.query) })),
        );
        sendPage(c, 'memories', res.memories.map(threadMemoryJson), res.nextPageToken);
      },
    }),
  ];
}
