// API keys of the Agents API. A key is `mg_<key id>_<secret>`; only the SHA-256 of the whole key
// is stored (keys carry 256 bits of entropy, so a slow hash adds nothing), and it is compared in
// constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  ApiKeySchema,
  CreateApiKeyResponseSchema,
  ListApiKeysResponseSchema,
  RevokeApiKeyResponseSchema,
  RotateApiKeyResponseSchema,
  VerifyApiKeyResponseSchema,
  type CreateApiKeyRequest,
  type ListApiKeysRequest,
  type RevokeApiKeyRequest,
  type RotateApiKeyRequest,
  type VerifyApiKeyRequest,
} from '../../../gen/mindgate/agents/v1/api_keys_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../common/api-key-scopes.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { TeamRecord } from './teams.ts';

export interface ApiKeyRecord extends RecordDoc {
  organizationId: string;
  name: string;
  prefix: string;
  hash: string;
  createdBy: string;
  createdAt: number;
  rotatedAt?: number;
  lastUsedAt?: number;
  /** Absent on keys from before scopes existed: ["read"]. */
  scopes?: ApiKeyScope[];
  teamId?: string;
}

export interface ApiKeysContext {
  apiKeys: RecordCollection<ApiKeyRecord>;
  /** To check that a key's team belongs to its organization. */
  teams: RecordCollection<TeamRecord>;
  now: () => number;
}

const KEY = /^mg_(k[A-Za-z0-9]{16})_([A-Za-z0-9_-]{43})$/;
const KEY_ID = /^k[A-Za-z0-9]{16}$/;
const MAX_KEYS_PER_ORGANIZATION = 200;
/** last_used_time is written at most this often per key, to keep verification read-mostly. */
const LAST_USED_RESOLUTION_MS = 60_000;

function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(keyId: string): string {
  return `mg_${keyId}_${randomBytes(32).toString('base64url')}`;
}

function newKeyId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(16);
  return `k${[...bytes].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

function toApiKey(r: ApiKeyRecord) {
  return create(ApiKeySchema, {
    keyId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    prefix: r.prefix,
    createdBy: r.createdBy,
    createTime: timestampFromMs(r.createdAt),
    rotateTime: r.rotatedAt === undefined ? undefined : timestampFromMs(r.rotatedAt),
    lastUsedTime: r.lastUsedAt === undefined ? undefined : timestampFromMs(r.lastUsedAt),
    scopes: r.scopes ?? ['read'],
    teamId: r.teamId ?? '',
  });
}

function requireKeyId(value: string): string {
  if (!KEY_ID.test(value)) invalid('key_id', 'is not a key id');
  return value;
}

async function ownedKey(ctx: ApiKeysContext, organizationId: string, keyId: string): Promise<ApiKeyRecord> {
  const record = await ctx.apiKeys.get(keyId);
  // Another organization's key is reported exactly like a missing one.
  if (!record || record.organizationId !== organizationId) {
    throw new ConnectError(`API key "${keyId}" does not exist`, Code.NotFound);
  }
  return record;
}

function requireScopes(values: string[]): ApiKeyScope[] {
  if (values.length === 0) return ['read'];
  const scopes = [...new Set(values)];
  for (const [i, scope] of scopes.entries()) {
    if (!API_KEY_SCOPES.includes(scope as ApiKeyScope)) invalid(`scopes[${i}]`, 'must be read, memories, write or admin');
  }
  return scopes as ApiKeyScope[];
}

async function requireTeam(ctx: ApiKeysContext, organizationId: string, teamId: string): Promise<string | undefined> {
  if (teamId === '') return undefined;
  const team = /^team_[A-Za-z0-9]{1,60}$/.test(teamId) ? await ctx.teams.get(teamId) : undefined;
  if (!team || team.organizationId !== organizationId) throw new ConnectError(`team "${teamId}" does not exist`, Code.NotFound);
  return teamId;
}

export async function createApiKey(ctx: ApiKeysContext, req: CreateApiKeyRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const name = requireText('name', req.name.trim(), 200, { required: true });
  const createdBy = requireText('created_by', req.createdBy, 200);
  if ((await ctx.apiKeys.count({ organizationId })) >= MAX_KEYS_PER_ORGANIZATION) {
    throw new ConnectError(`an organization may hold at most ${MAX_KEYS_PER_ORGANIZATION} API keys`, Code.ResourceExhausted);
  }
  const scopes = requireScopes(req.scopes);
  const teamId = await requireTeam(ctx, organizationId, req.teamId);
  const keyId = newKeyId();
  const secret = newSecret(keyId);
  const record: ApiKeyRecord = {
    _id: keyId,
    organizationId,
    name,
    prefix: secret.slice(0, 12),
    hash: hashOf(secret),
    createdBy,
    createdAt: ctx.now(),
    scopes,
    teamId,
  };
  await ctx.apiKeys.put(record, { expect: null });
  return create(CreateApiKeyResponseSchema, { apiKey: toApiKey(record), secret });
}

export async function listApiKeys(ctx: ApiKeysContext, req: ListApiKeysRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(
    ctx.apiKeys,
    { organizationId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', scope: `api-keys:${organizationId}` },
  );
  return create(ListApiKeysResponseSchema, { apiKeys: page.items.map(toApiKey), nextPageToken: page.nextPageToken });
}

export async function rotateApiKey(ctx: ApiKeysContext, req: RotateApiKeyRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const keyId = requireKeyId(req.keyId);
  const record = await ownedKey(ctx, organizationId, keyId);
  const secret = newSecret(keyId);
  const rotated: ApiKeyRecord = { ...record, prefix: secret.slice(0, 12), hash: hashOf(secret), rotatedAt: ctx.now() };
  if (!(await ctx.apiKeys.put(rotated, { expect: { hash: record.hash } }))) {
    throw new ConnectError('the key was rotated or revoked concurrently; retry', Code.Aborted);
  }
  return create(RotateApiKeyResponseSchema, { apiKey: toApiKey(rotated), secret });
}

export async function revokeApiKey(ctx: ApiKeysContext, req: RevokeApiKeyRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const keyId = requireKeyId(req.keyId);
  await ownedKey(ctx, organizationId, keyId);
  await ctx.apiKeys.delete(keyId);
  return create(RevokeApiKeyResponseSchema, {});
}

export async function verifyApiKey(ctx: ApiKeysContext, req: VerifyApiKeyRequest) {
  const match = KEY.exec(req.secret);
  const refused = () => new ConnectError('the API key is not valid', Code.Unauthenticated);
  if (!match) throw refused();
  const record = await ctx.apiKeys.get(match[1]);
  if (!record) throw refused();
  const expected = Buffer.from(record.hash, 'hex');
  const actual = Buffer.from(hashOf(req.secret), 'hex');
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw refused();
  const now = ctx.now();
  if (record.lastUsedAt === undefined || now - record.lastUsedAt > LAST_USED_RESOLUTION_MS) {
    // Best effort: a concurrent rotation wins (the CAS on hash fails and nothing is written).
    await ctx.apiKeys.put({ ...record, lastUsedAt: now }, { expect: { hash: record.hash } });
  }
  return create(VerifyApiKeyResponseSchema, { apiKey: toApiKey({ ...record, lastUsedAt: now }) });
}
