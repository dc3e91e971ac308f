// The operator's gateway keys (X-Gateway-Key). A key is `mgk_<key id>_<secret>`; only the SHA-256
// of the whole key is stored (256 random bits: a slow hash adds nothing). A rotation keeps the
// replaced secret's hash for an overlap, so that clients can move over without an outage. The
// gateway replicas check keys against the hashes they poll (gateway-registry.ts).
import { createHash, randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateGatewayKeyResponseSchema,
  GatewayKeySchema,
  ListGatewayKeysResponseSchema,
  RevokeGatewayKeyResponseSchema,
  RotateGatewayKeyResponseSchema,
  type CreateGatewayKeyRequest,
  type ListGatewayKeysRequest,
  type RevokeGatewayKeyRequest,
  type RotateGatewayKeyRequest,
} from '../../../gen/mindgate/agents/v1/gateway_keys_pb.js';
import { invalid, requireText } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { bumpRegistryVersion, type RegistryVersionRecord } from './gateway-registry.ts';

export interface GatewayKeyRecord extends RecordDoc {
  name: string;
  prefix: string;
  hash: string;
  /** The secret the last rotation replaced, while it still works. */
  previousHash?: string;
  previousExpiresAt?: number;
  createdBy: string;
  createdAt: number;
  rotatedAt?: number;
}

export interface GatewayKeysContext {
  keys: RecordCollection<GatewayKeyRecord>;
  state: RecordCollection<RegistryVersionRecord>;
  now: () => number;
}

const KEY_ID = /^gk[A-Za-z0-9]{16}$/;
const MAX_KEYS = 100;
const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function gatewayKeyHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newKeyId(): string {
  return `gk${[...randomBytes(16)].map((b) => ALPHABET[b % ALPHABET.length]).join('')}`;
}

function newSecret(keyId: string): string {
  return `mgk_${keyId}_${randomBytes(32).toString('base64url')}`;
}

function toGatewayKey(r: GatewayKeyRecord, now: number) {
  const overlapping = r.previousExpiresAt !== undefined && r.previousExpiresAt > now;
  return create(GatewayKeySchema, {
    keyId: r._id,
    name: r.name,
    prefix: r.prefix,
    createdBy: r.createdBy,
    createTime: timestampFromMs(r.createdAt),
    rotateTime: r.rotatedAt === undefined ? undefined : timestampFromMs(r.rotatedAt),
    previousExpireTime: overlapping ? timestampFromMs(r.previousExpiresAt!) : undefined,
  });
}

async function existingKey(ctx: GatewayKeysContext, keyId: string): Promise<GatewayKeyRecord> {
  if (!KEY_ID.test(keyId)) invalid('key_id', 'is not a gateway key id');
  const record = await ctx.keys.get(keyId);
  if (!record) throw new ConnectError(`gateway key "${keyId}" does not exist`, Code.NotFound);
  return record;
}

export async function createGatewayKey(ctx: GatewayKeysContext, req: CreateGatewayKeyRequest) {
  const name = requireText('name', req.name.trim(), 200, { required: true }).trim();
  const createdBy = requireText('created_by', req.createdBy, 200);
  if ((await ctx.keys.count({})) >= MAX_KEYS) throw new ConnectError(`at most ${MAX_KEYS} gateway keys`, Code.ResourceExhausted);
  const keyId = newKeyId();
  const secret = newSecret(keyId);
  const record: GatewayKeyRecord = {
    _id: keyId,
    name,
    prefix: secret.slice(0, 14),
    hash: gatewayKeyHash(secret),
    createdBy,
    createdAt: ctx.now(),
  };
  await ctx.keys.put(record, { expect: null });
  await bumpRegistryVersion(ctx.state);
  return create(CreateGatewayKeyResponseSchema, { key: toGatewayKey(record, ctx.now()), secret });
}

export async function listGatewayKeys(ctx: GatewayKeysContext, req: ListGatewayKeysRequest) {
  const page = await findPage(ctx.keys, {}, req, { field: 'createdAt', scope: 'gateway-keys' });
  const now = ctx.now();
  return create(ListGatewayKeysResponseSchema, { keys: page.items.map((k) => toGatewayKey(k, now)), nextPageToken: page.nextPageToken });
}

export async function rotateGatewayKey(ctx: GatewayKeysContext, req: RotateGatewayKeyRequest) {
  const record = await existingKey(ctx, req.keyId);
  if (!Number.isInteger(req.overlapSeconds) || req.overlapSeconds < 0 || req.overlapSeconds > MAX_OVERLAP_SECONDS) {
    invalid('overlap_seconds', `must be from 0 to ${MAX_OVERLAP_SECONDS}`);
  }
  const now = ctx.now();
  const secret = newSecret(record._id);
  const overlap = req.overlapSeconds > 0;
  const rotated: GatewayKeyRecord = {
    ...record,
    prefix: secret.slice(0, 14),
    hash: gatewayKeyHash(secret),
    previousHash: overlap ? record.hash : undefined,
    previousExpiresAt: overlap ? now + req.overlapSeconds * 1000 : undefined,
    rotatedAt: now,
  };
  if (!(await ctx.keys.put(rotated, { expect: { hash: record.hash } }))) {
    throw new ConnectError('the key was rotated or revoked concurrently; retry', Code.Aborted);
  }
  await bumpRegistryVersion(ctx.state);
  return create(RotateGatewayKeyResponseSchema, { key: toGatewayKey(rotated, now), secret });
}

export async function revokeGatewayKey(ctx: GatewayKeysContext, req: RevokeGatewayKeyRequest) {
  const record = await existingKey(ctx, req.keyId);
  await ctx.keys.delete(record._id);
  await bumpRegistryVersion(ctx.state);
  return create(RevokeGatewayKeyResponseSchema, {});
}
