// What the REST API's memory operations share (memories.ts, memory-versions.ts, memory-items.ts):
// the namespace and key parameters, a memory as JSON, and the writer the Brain records for a call.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { Namespace, type Memory } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { callerOf } from './access.ts';
import { iso, OrganizationId } from './rest-route.ts';

export const NamespaceName = z
  .enum(['knowledge', 'episodes'])
  .meta({ description: 'knowledge: reusable learnings; episodes: what happened.' });
export const Key = z
  .string()
  .regex(/^[A-Za-z0-9._:/-]{1,200}$/, { error: 'must be a memory key (1-200 of A-Z a-z 0-9 . _ : / -)' })
  .meta({ example: 'services/checkout' });
export const MemoryRefBody = z.object({ namespace: NamespaceName, key: Key }).strict();
export const memoryParams = z.object({ organization_id: OrganizationId, namespace: NamespaceName, key: Key });
export const nsEnum = (n: 'knowledge' | 'episodes') => (n === 'knowledge' ? Namespace.KNOWLEDGE : Namespace.EPISODES);
export const nsName = (n: Namespace) => (n === Namespace.EPISODES ? 'episodes' : 'knowledge');

export const MemorySchema = z
  .object({
    namespace: z.string(),
    key: z.string(),
    title: z.string(),
    content: z.string(),
    tags: z.array(z.string()),
    entities: z.array(z.string()),
    version: z.int(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
    written_by: z.object({ client_id: z.string(), user_id: z.string(), client_name: z.string() }),
    feedback: z.object({ worked: z.int(), failed: z.int() }),
    supersedes: z.string().nullable(),
    superseded_by: z.string().nullable(),
  })
  .meta({ title: 'Memory' });

export const ref = (r: { namespace: Namespace; key: string } | undefined) => (r ? `${nsName(r.namespace)}/${r.key}` : null);

export const writerJson = (s: Memory['source']) => ({
  client_id: s?.clientId ?? '',
  user_id: s?.userId ?? '',
  client_name: s?.clientName ?? '',
});

export const memoryJson = (m: Memory) => ({
  namespace: nsName(m.namespace),
  key: m.key,
  title: m.title,
  content: m.content,
  tags: m.tags,
  entities: m.entities,
  version: Number(m.version),
  created_at: iso(m.createTime as Timestamp | undefined),
  updated_at: iso(m.updateTime as Timestamp | undefined),
  written_by: writerJson(m.source),
  feedback: { worked: m.stats?.worked ?? 0, failed: m.stats?.failed ?? 0 },
  supersedes: ref(m.supersedes),
  superseded_by: ref(m.supersededBy),
});

/** The writer the Brain records for a REST call: the API, and the user or the key behind it. */
export function sourceOf(c: AnyApiRouteContext) {
  const caller = callerOf(c);
  return caller.kind === 'user'
    ? { clientId: 'mindgate-api', userId: caller.subject, clientName: 'Mindgate API' }
    : { clientId: `${caller.kind}:${caller.subject}`, userId: '', clientName: 'Mindgate API' };
}
