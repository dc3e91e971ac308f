// The versions of a memory (version-record.ts says how they are saved): listed newest first, the
// current one leading the first page, and read one at a time.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  GetMemoryVersionResponseSchema,
  ListMemoryVersionsResponseSchema,
  type GetMemoryVersionRequest,
  type ListMemoryVersionsRequest,
  type MemoryVersion,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { isLive, memoryId, type MemoryRecord, type NamespaceName } from '../memory-record.ts';
import {
  currentVersion,
  deletionId,
  historicVersion,
  isCurrent,
  versionId,
  type DeletionRecord,
  type Successor,
  type VersionRecord,
} from '../version-record.ts';
import { requireKey, requireNamespace } from './validate.ts';

interface Address {
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  id: string;
}

function addressOf(req: { organizationId: string; namespace: number; key: string }, access: MemoryAccess): Address {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const key = requireKey('key', req.key);
  // Not reachable reads as not there, so that a narrowed caller learns nothing of the key.
  if (!access.allows(namespace, key)) notFoundMemory(namespace, key);
  return { organizationId, namespace, key, id: memoryId(organizationId, namespace, key) };
}

function notFoundMemory(namespace: string, key: string): never {
  throw new ConnectError(`memory ${namespace}/${key} has no versions: it never existed`, Code.NotFound);
}

/** The successors of saved versions: the next version (saved or live) and deletion markers. */
async function successorsOf(ctx: BrainContext, a: Address, saved: VersionRecord[], live: MemoryRecord | undefined) {
  const nextIds = saved.map((v) => versionId(a.id, v.createdAt, v.version + 1));
  const markerIds = saved.map((v) => deletionId(a.id, v.createdAt, v.version));
  const found = await ctx.versions.getMany([...nextIds, ...markerIds]);
  const byId = new Map(found.map((r) => [r._id, r]));
  return saved.map((v, i): Successor => {
    const nextSaved = byId.get(nextIds[i]) as VersionRecord | undefined;
    const liveNext = isLive(live) && live.createdAt === v.createdAt && live.version === v.version + 1 ? live : undefined;
    const next = liveNext ?? (nextSaved ? { updatedAt: nextSaved.updatedAt, source: nextSaved.memory.source } : undefined);
    return { next, deletion: byId.get(markerIds[i]) as DeletionRecord | undefined };
  });
}

async function historic(ctx: BrainContext, a: Address, saved: VersionRecord[], live: MemoryRecord | undefined) {
  const kept = saved.filter((v) => !isCurrent(live, v));
  const successors = await successorsOf(ctx, a, kept, live);
  return kept.map((v, i) => historicVersion(v, successors[i])).filter((v): v is MemoryVersion => v !== undefined);
}

export async function listMemoryVersions(ctx: BrainContext, req: ListMemoryVersionsRequest, access = MemoryAccess.everything) {
  const a = addressOf(req, access);
  const live = await ctx.memories.get(a.id);
  const page = await findPage(
    ctx.versions,
    { organizationId: a.organizationId, namespace: a.namespace, key: a.key, kind: 'version' },
    req,
    { field: 'updatedAt', direction: 'desc', scope: `versions:${a.id}` },
  );
  const versions = await historic(ctx, a, page.items as VersionRecord[], live);
  if (!req.pageToken && isLive(live)) versions.unshift(currentVersion(live));
  if (!req.pageToken && versions.length === 0) notFoundMemory(a.namespace, a.key);
  return create(ListMemoryVersionsResponseSchema, { versions, nextPageToken: page.nextPageToken });
}

export async function getMemoryVersion(ctx: BrainContext, req: GetMemoryVersionRequest, access = MemoryAccess.everything) {
  const a = addressOf(req, access);
  if (req.version < 1n) invalid('version', 'must be 1 or more');
  const version = Number(req.version);
  const live = await ctx.memories.get(a.id);
  if (isLive(live) && live.version === version) {
    return create(GetMemoryVersionResponseSchema, { version: currentVersion(live) });
  }
  // The newest memory of the key with that version number first (a key deleted and written again
  // starts again at 1).
  const saved = (await ctx.versions.find(
    { organizationId: a.organizationId, namespace: a.namespace, key: a.key, kind: 'version', version },
    { sort: { field: 'createdAt', direction: 'desc' } },
  )) as VersionRecord[];
  const [found] = await historic(ctx, a, saved, live);
  if (!found) throw new ConnectError(`memory ${a.namespace}/${a.key} has no version ${version}`, Code.NotFound);
  return create(GetMemoryVersionResponseSchema, { version: found });
}
