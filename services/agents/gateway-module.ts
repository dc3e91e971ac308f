// The part of the agents service that keeps the gateway's registry: MCP servers and gateway keys
// managed through the Agents API, and the versioned snapshot every edge replica polls.
import type { ConnectRouter } from '@connectrpc/connect';
import { GatewayKeysService } from '../../gen/mindgate/agents/v1/gateway_keys_pb.js';
import { GatewayRegistryService } from '../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import { McpServersService } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import type { KeyEncryption } from '../common/key-encryption.ts';
import type { RecordStore } from '../common/storage/records/interface.ts';
import {
  createGatewayKey,
  listGatewayKeys,
  revokeGatewayKey,
  rotateGatewayKey,
  type GatewayKeyRecord,
  type GatewayKeysContext,
} from './handlers/gateway-keys.ts';
import {
  bumpRegistryVersion,
  getGatewayRegistry,
  type GatewayRegistryContext,
  type RegistryVersionRecord,
} from './handlers/gateway-registry.ts';
import {
  createMcpServer,
  deleteMcpServer,
  findMcpServer,
  getMcpServer,
  listMcpServers,
  updateMcpServer,
  type McpServerRecord,
  type McpServersContext,
} from './handlers/mcp-servers.ts';
import { sealedUpstreamSecrets } from './sealed-records.ts';

export function gatewayModule(records: RecordStore, now: () => number) {
  const state = records.collection<RegistryVersionRecord>('gateway_registry_state');
  const servers: McpServersContext = {
    servers: records.collection<McpServerRecord>('mcp_servers', {
      indexes: [{ fields: ['name'], unique: true }, { fields: ['organizationId'] }, { fields: ['visibleTo', 'createdAt'] }],
    }),
    state,
    now,
  };
  const keys: GatewayKeysContext = {
    keys: records.collection<GatewayKeyRecord>('gateway_keys', { indexes: [{ fields: ['createdAt'] }] }),
    state,
    now,
  };
  const registry: GatewayRegistryContext = { state, servers: servers.servers, keys: keys.keys, now };
  return {
    services: [McpServersService, GatewayKeysService, GatewayRegistryService],
    /** The servers' upstream client secrets, as the start seals them again. */
    sealedRecords: (kek: KeyEncryption) => sealedUpstreamSecrets(servers.servers, state, kek),
    /** A deleted organization's servers go at once: the replicas stop serving them, their names are free. */
    async closeOrganization(organizationId: string): Promise<void> {
      if ((await servers.servers.deleteMany({ organizationId })) > 0) await bumpRegistryVersion(state);
    },
    routes(router: ConnectRouter) {
      router.service(McpServersService, {
        createMcpServer: (req) => createMcpServer(servers, req),
        getMcpServer: (req) => getMcpServer(servers, req),
        listMcpServers: (req) => listMcpServers(servers, req),
        updateMcpServer: (req) => updateMcpServer(servers, req),
        deleteMcpServer: (req) => deleteMcpServer(servers, req),
        findMcpServer: (req) => findMcpServer(servers, req),
      });
      router.service(GatewayKeysService, {
        createGatewayKey: (req) => createGatewayKey(keys, req),
        listGatewayKeys: (req) => listGatewayKeys(keys, req),
        rotateGatewayKey: (req) => rotateGatewayKey(keys, req),
        revokeGatewayKey: (req) => revokeGatewayKey(keys, req),
      });
      router.service(GatewayRegistryService, { getGatewayRegistry: (req) => getGatewayRegistry(registry, req) });
    },
  };
}
