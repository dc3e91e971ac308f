// StartSeeding: validates the request, stores the source in the records store (so whichever
// replica takes the run can read it) and queues the run. With a request id the run's id is derived
// from it, so a caller repeating the request (a scheduled job's firing taken over after its
// replica died) gets the run the first call started, never a second one. Nothing is parsed here: a replica's
// worker extracts the items under the run's lease.
import { Code, ConnectError } from '@connectrpc/connect';
import { Namespace } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { StartSeedingResponseSchema, type StartSeedingRequest } from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import { create } from '@bufbuild/protobuf';
import { invalid, requireList, requireOrganization } from '../../common/rpc/validate.ts';
import { SEEDING_MEDIA_TYPES } from './extract/index.ts';
import type { SeedingContext } from './context.ts';
import { urlRefusal } from './fetch-source.ts';
import { newRunId, PART_BYTES, partId, requestRunId, runKey, runProto, type SeedingRunDoc } from './records.ts';
import { emptyCounts, runWithProgress } from './read.ts';

/** The largest upload the service keeps (the edge's SEEDING_MAX_UPLOAD_BYTES may be lower). */
export const MAX_UPLOAD_BYTES = 6 * 1024 * 1024;
export const KEY_PREFIX = /^[A-Za-z0-9._:/-]{0,100}$/;
const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

function sourceOf(req: StartSeedingRequest) {
  if (req.source.case === 'upload') {
    const upload = req.source.value;
    const mediaType = upload.mediaType.split(';')[0].trim().toLowerCase();
    if (!(SEEDING_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
      invalid('upload.media_type', `must be one of ${SEEDING_MEDIA_TYPES.join(', ')}`);
    }
    if (upload.content.length === 0) invalid('upload.content', 'must not be empty');
    if (upload.content.length > MAX_UPLOAD_BYTES) invalid('upload.content', `must be at most ${MAX_UPLOAD_BYTES} bytes`);
    const filename = upload.filename.trim().replace(/\\/g, '/').split('/').pop() || 'upload';
    if (filename.length > 200) invalid('upload.filename', 'must be at most 200 characters');
    return { kind: 'upload' as const, name: filename, mediaType, content: upload.content };
  }
  if (req.source.case === 'url') {
    let url: URL;
    try {
      url = new URL(req.source.value);
    } catch {
      invalid('url', 'must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('url', 'must be an absolute http or https URL');
    if (req.source.value.length > 2_000) invalid('url', 'must be at most 2000 characters');
    return { kind: 'url' as const, name: url.href, mediaType: '', content: new Uint8Array() };
  }
  return invalid('source', 'is required: an upload or a url');
}

export async function startSeeding(ctx: SeedingContext, req: StartSeedingRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const source = sourceOf(req);
  if (source.kind === 'url') {
    const refused = await urlRefusal(ctx.config, source.name);
    if (refused) invalid('url', refused);
  }
  if (!KEY_PREFIX.test(req.keyPrefix)) invalid('key_prefix', 'must be at most 100 characters of [A-Za-z0-9._:/-]');
  if (req.namespace !== Namespace.UNSPECIFIED && req.namespace !== Namespace.KNOWLEDGE && req.namespace !== Namespace.EPISODES) {
    invalid('namespace', 'must be KNOWLEDGE or EPISODES');
  }
  const tags = requireList('tags', req.tags, 8, 64);
  if (req.requestId !== '' && !REQUEST_ID.test(req.requestId)) invalid('request_id', 'must be 1-200 characters of [A-Za-z0-9_.:-]');
  const runId = req.requestId === '' ? newRunId() : requestRunId(organizationId, req.requestId);
  const key = runKey(organizationId, runId);
  const parts = Math.ceil(source.content.length / PART_BYTES);
  // The parts first: a run is only ever queued with its whole source stored.
  for (let n = 0; n < parts; n++) {
    const data = Buffer.from(source.content.subarray(n * PART_BYTES, (n + 1) * PART_BYTES)).toString('base64');
    await ctx.store.uploads.put({ _id: partId(key, n), data });
  }
  const now = ctx.now();
  const w = req.writer;
  const doc: SeedingRunDoc = {
    _id: key,
    organizationId,
    runId,
    status: 'queued',
    sourceKind: source.kind,
    sourceName: source.name,
    mediaType: source.mediaType,
    sourceBytes: source.content.length,
    parts,
    namespace: req.namespace === Namespace.EPISODES ? 'episodes' : 'knowledge',
    keyPrefix: req.keyPrefix,
    tags,
    review: req.review,
    total: 0,
    error: '',
    stopReason: '',
    createdBy: w?.userId || w?.clientId || '',
    writer: { clientId: w?.clientId ?? '', userId: w?.userId ?? '', clientName: w?.clientName ?? '', userName: w?.userName ?? '' },
    attempt: 0,
    leaseId: '',
    holder: '',
    dueAt: now,
    rev: 1,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await ctx.store.runs.put(doc, { expect: null }))) {
    // A repeat of a request that started its run already: that run, once.
    const started = req.requestId === '' ? undefined : await ctx.store.runs.get(key);
    if (!started) throw new ConnectError('run id collision; retry', Code.Aborted);
    return create(StartSeedingResponseSchema, { run: await runWithProgress(ctx, started) });
  }
  ctx.wake();
  return create(StartSeedingResponseSchema, { run: runProto(doc, emptyCounts(), 0) });
}
