// Playbooks: versioned procedures an agent follows. A playbook record says where its versions
// stand (the latest, the published one); each version is a document of its own, stored once under
// `<playbook id>/<version>` with insert-if-absent and never changed, so a run bound to a version
// always reads what it was started with. Every change of the playbook record is a compare-and-set
// on its version field, so two updates racing get distinct version numbers or one is refused.
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreatePlaybookResponseSchema,
  GetPlaybookResponseSchema,
  GetPlaybookVersionResponseSchema,
  ImportPlaybookResponseSchema,
  ListPlaybooksResponseSchema,
  ListPlaybookVersionsResponseSchema,
  PlaybookSchema,
  PlaybookVersionSchema,
  PublishPlaybookResponseSchema,
  UpdatePlaybookResponseSchema,
  ValidatePlaybookResponseSchema,
  type CreatePlaybookRequest,
  type GetPlaybookRequest,
  type GetPlaybookVersionRequest,
  type ImportPlaybookRequest,
  type ListPlaybooksRequest,
  type ListPlaybookVersionsRequest,
  type PublishPlaybookRequest,
  type UpdatePlaybookRequest,
  type ValidatePlaybookRequest,
} from '../../../gen/mindgate/agents/v1/playbooks_pb.js';
import { validatePlaybook, type PlaybookDocument } from '../../common/playbooks/validate.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { UniqueViolationError } from '../../common/storage/records/errors.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { newId } from './organizations.ts';

const PLAYBOOK_ID = /^pbk_[A-Za-z0-9]{1,60}$/;

export interface PlaybookRecord extends RecordDoc {
  organizationId: string;
  name: string;
  /** The name folded to lower case: unique in the organization. */
  nameKey: string;
  description: string;
  latestVersion: number;
  publishedVersion: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  publishedAt?: number;
  version: number;
}

export interface PlaybookVersionRecord extends RecordDoc {
  playbookId: string;
  organizationId: string;
  version: number;
  document: JsonObject;
  hasSteps: boolean;
  createdBy: string;
  createdAt: number;
}

export interface PlaybooksContext {
  playbooks: RecordCollection<PlaybookRecord>;
  versions: RecordCollection<PlaybookVersionRecord>;
  now: () => number;
}

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));

export const toPlaybook = (r: PlaybookRecord) =>
  create(PlaybookSchema, {
    playbookId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    description: r.description,
    latestVersion: r.latestVersion,
    publishedVersion: r.publishedVersion,
    etag: String(r.version),
    createdBy: r.createdBy,
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
    publishTime: ms(r.publishedAt),
  });

export const toVersion = (r: PlaybookVersionRecord) =>
  create(PlaybookVersionSchema, {
    playbookId: r.playbookId,
    version: r.version,
    document: r.document,
    hasSteps: r.hasSteps,
    createdBy: r.createdBy,
    createTime: timestampFromMs(r.createdAt),
  });

const versionId = (playbookId: string, version: number) => `${playbookId}/${String(version).padStart(6, '0')}`;

/** The document, when it is valid; INVALID_ARGUMENT naming the first problem's place otherwise. */
function validDocument(document: JsonObject | undefined): PlaybookDocument {
  if (!document) invalid('document', 'is required');
  const problems = validatePlaybook(document);
  if (problems.length > 0) {
    const [first] = problems;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : '';
    invalid(`document${first.path}`, `${first.message}${more}`);
  }
  return document as unknown as PlaybookDocument;
}

/** The playbook, when it is one of the organization's; NOT_FOUND otherwise (another tenant's too). */
export async function ownedPlaybook(ctx: PlaybooksContext, organizationId: string, playbookId: string): Promise<PlaybookRecord> {
  if (!PLAYBOOK_ID.test(playbookId)) invalid('playbook_id', 'is not a playbook id');
  const playbook = await ctx.playbooks.get(playbookId);
  if (!playbook || playbook.organizationId !== organizationId) {
    throw new ConnectError(`playbook "${playbookId}" does not exist`, Code.NotFound);
  }
  return playbook;
}

/** A version of the playbook (0: the published one); NOT_FOUND when there is none. */
export async function versionOf(ctx: PlaybooksContext, playbook: PlaybookRecord, version: number): Promise<PlaybookVersionRecord> {
  const wanted = version === 0 ? playbook.publishedVersion : version;
  const found = wanted === 0 ? undefined : await ctx.versions.get(versionId(playbook._id, wanted));
  if (!found) {
    throw new ConnectError(version === 0 ? 'the playbook has no published version' : `version ${version} does not exist`, Code.NotFound);
  }
  return found;
}

async function storeVersion(ctx: PlaybooksContext, playbook: PlaybookRecord, document: PlaybookDocument, createdBy: string) {
  const version: PlaybookVersionRecord = {
    _id: versionId(playbook._id, playbook.latestVersion),
    playbookId: playbook._id,
    organizationId: playbook.organizationId,
    version: playbook.latestVersion,
    document: document as unknown as JsonObject,
    hasSteps: (document.steps ?? []).length > 0,
    createdBy,
    createdAt: ctx.now(),
  };
  // Insert-if-absent: a version number is used once, even by two updates racing.
  if (!(await ctx.versions.put(version, { expect: null }))) {
    throw failure('the playbook changed meanwhile: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return version;
}

async function newPlaybook(ctx: PlaybooksContext, organizationId: string, document: PlaybookDocument, createdBy: string, publish: boolean) {
  const now = ctx.now();
  const playbook: PlaybookRecord = {
    _id: newId('pbk'),
    organizationId,
    name: document.name.trim(),
    nameKey: document.name.trim().toLowerCase(),
    description: document.description ?? '',
    latestVersion: 1,
    publishedVersion: publish ? 1 : 0,
    createdBy,
    createdAt: now,
    updatedAt: now,
    publishedAt: publish ? now : undefined,
    version: 1,
  };
  const version = await storeVersion(ctx, playbook, document, createdBy);
  try {
    await ctx.playbooks.put(playbook, { expect: null });
  } catch (err) {
    await ctx.versions.delete(version._id);
    if (err instanceof UniqueViolationError) throw new ConnectError(`a playbook named "${playbook.name}" exists`, Code.AlreadyExists);
    throw err;
  }
  return { playbook, version };
}

/** The playbook's next version, stored, then counted on the playbook with a compare-and-set. */
async function addVersion(ctx: PlaybooksContext, current: PlaybookRecord, document: PlaybookDocument, createdBy: string, publish: boolean) {
  const now = ctx.now();
  const next: PlaybookRecord = {
    ...current,
    name: document.name.trim(),
    nameKey: document.name.trim().toLowerCase(),
    description: document.description ?? '',
    latestVersion: current.latestVersion + 1,
    publishedVersion: publish ? current.latestVersion + 1 : current.publishedVersion,
    publishedAt: publish ? now : current.publishedAt,
    updatedAt: now,
    version: current.version + 1,
  };
  const version = await storeVersion(ctx, next, document, createdBy);
  let stored = false;
  try {
    stored = await ctx.playbooks.put(next, { expect: { version: current.version } });
  } catch (err) {
    await ctx.versions.delete(version._id);
    if (err instanceof UniqueViolationError) throw new ConnectError(`a playbook named "${next.name}" exists`, Code.AlreadyExists);
    throw err;
  }
  if (!stored) {
    await ctx.versions.delete(version._id);
    throw failure('the playbook changed meanwhile: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return { playbook: next, version };
}

function checkEtag(playbook: PlaybookRecord, etag: string): void {
  if (etag !== '' && etag !== String(playbook.version)) {
    throw failure('the playbook changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
}

export async function createPlaybook(ctx: PlaybooksContext, req: CreatePlaybookRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const document = validDocument(req.document);
  const createdBy = requireText('created_by', req.createdBy, 200);
  const { playbook, version } = await newPlaybook(ctx, organizationId, document, createdBy, req.publish);
  return create(CreatePlaybookResponseSchema, { playbook: toPlaybook(playbook), version: toVersion(version) });
}

export async function getPlaybook(ctx: PlaybooksContext, req: GetPlaybookRequest) {
  const playbook = await ownedPlaybook(ctx, requireOrganization(req.organizationId), req.playbookId);
  const latest = await versionOf(ctx, playbook, playbook.latestVersion);
  return create(GetPlaybookResponseSchema, { playbook: toPlaybook(playbook), latest: toVersion(latest) });
}

export async function listPlaybooks(ctx: PlaybooksContext, req: ListPlaybooksRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.playbooks, { organizationId }, req, {
    field: 'createdAt',
    direction: 'desc',
    scope: `playbooks:${organizationId}`,
  });
  return create(ListPlaybooksResponseSchema, { playbooks: page.items.map(toPlaybook), nextPageToken: page.nextPageToken });
}

export async function updatePlaybook(ctx: PlaybooksContext, req: UpdatePlaybookRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const document = validDocument(req.document);
  const createdBy = requireText('created_by', req.createdBy, 200);
  const current = await ownedPlaybook(ctx, organizationId, req.playbookId);
  checkEtag(current, req.etag);
  const { playbook, version } = await addVersion(ctx, current, document, createdBy, req.publish);
  return create(UpdatePlaybookResponseSchema, { playbook: toPlaybook(playbook), version: toVersion(version) });
}

export async function publishPlaybook(ctx: PlaybooksContext, req: PublishPlaybookRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedPlaybook(ctx, organizationId, req.playbookId);
  checkEtag(current, req.etag);
  if (req.version < 1 || req.version > current.latestVersion) invalid('version', `must be from 1 to ${current.latestVersion}`);
  const now = ctx.now();
  const next: PlaybookRecord = {
    ...current,
    publishedVersion: req.version,
    publishedAt: now,
    updatedAt: now,
    version: current.version + 1,
  };
  if (!(await ctx.playbooks.put(next, { expect: { version: current.version } }))) {
    throw failure('the playbook changed meanwhile: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return create(PublishPlaybookResponseSchema, { playbook: toPlaybook(next) });
}

export async function getPlaybookVersion(ctx: PlaybooksContext, req: GetPlaybookVersionRequest) {
  const playbook = await ownedPlaybook(ctx, requireOrganization(req.organizationId), req.playbookId);
  return create(GetPlaybookVersionResponseSchema, { version: toVersion(await versionOf(ctx, playbook, req.version)) });
}

export async function listPlaybookVersions(ctx: PlaybooksContext, req: ListPlaybookVersionsRequest) {
  const playbook = await ownedPlaybook(ctx, requireOrganization(req.organizationId), req.playbookId);
  const page = await findPage(ctx.versions, { playbookId: playbook._id }, req, {
    field: 'version',
    direction: 'desc',
    scope: `playbook-versions:${playbook._id}`,
  });
  return create(ListPlaybookVersionsResponseSchema, { versions: page.items.map(toVersion), nextPageToken: page.nextPageToken });
}

export function validatePlaybookDocument(req: ValidatePlaybookRequest) {
  requireOrganization(req.organizationId);
  if (!req.document) invalid('document', 'is required');
  return create(ValidatePlaybookResponseSchema, { problems: validatePlaybook(req.document) });
}

export async function importPlaybook(ctx: PlaybooksContext, req: ImportPlaybookRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const document = validDocument(req.document);
  const createdBy = requireText('created_by', req.createdBy, 200);
  const [existing] = await ctx.playbooks.find({ organizationId, nameKey: document.name.trim().toLowerCase() }, { limit: 1 });
  const stored = existing
    ? await addVersion(ctx, existing, document, createdBy, req.publish)
    : await newPlaybook(ctx, organizationId, document, createdBy, req.publish);
  return create(ImportPlaybookResponseSchema, {
    playbook: toPlaybook(stored.playbook),
    version: toVersion(stored.version),
    created: !existing,
  });
}
