// The version of the gateway's registry, and the snapshot every edge replica polls. Each change to
// a server or a gateway key is written first and counted second (one atomic increment of a single
// document), so a replica that reads version N and then the records sees at least every change up
// to N; one that reads the records in the middle of a change sees it at its next poll, when the
// version has moved.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  GatewayKeyDigestSchema,
  GetGatewayRegistryResponseSchema,
  type GetGatewayRegistryRequest,
} from '../../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import type { GatewayKeyRecord } from './gateway-keys.ts';
import { toMcpServer, type McpServerRecord } from './mcp-servers.ts';

export interface RegistryVersionRecord extends RecordDoc {
  value: number;
}

export interface GatewayRegistryContext {
  state: RecordCollection<RegistryVersionRecord>;
  servers: RecordCollection<McpServerRecord>;
  keys: RecordCollection<GatewayKeyRecord>;
  now: () => number;
}

const VERSION_ID = 'version';

/** Counts one change of the registry; call after the change is written. */
export async function bumpRegistryVersion(state: RecordCollection<RegistryVersionRecord>): Promise<void> {
  await state.increment(VERSION_ID, 'value', 1, {});
}

async function currentVersion(state: RecordCollection<RegistryVersionRecord>): Promise<number> {
  return (await state.get(VERSION_ID))?.value ?? 0;
}

export async function getGatewayRegistry(ctx: GatewayRegistryContext, req: GetGatewayRegistryRequest) {
  // The version first: records read after it are at least as new.
  const version = await currentVersion(ctx.state);
  if (BigInt(version) === req.knownVersion && version !== 0) {
    return create(GetGatewayRegistryResponseSchema, { version: BigInt(version), changed: false });
  }
  const [servers, keys] = await Promise.all([ctx.servers.find({}, { sort: { field: 'createdAt', direction: 'asc' } }), ctx.keys.find({})]);
  const now = ctx.now();
  return create(GetGatewayRegistryResponseSchema, {
    version: BigInt(version),
    changed: true,
    servers: servers.map(toMcpServer),
    keys: keys.map((k) => {
      const overlapping = k.previousHash !== undefined && (k.previousExpiresAt ?? 0) > now;
      return create(GatewayKeyDigestSchema, {
        keyId: k._id,
        secretSha256: k.hash,
        previousSecretSha256: overlapping ? k.previousHash : '',
        previousExpireTime: overlapping ? timestampFromMs(k.previousExpiresAt!) : undefined,
      });
    }),
  });
}
