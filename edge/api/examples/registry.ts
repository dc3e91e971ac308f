// Examples of the bodies of the MCP-server, integration and gateway-key operations, by the title
// of their schema (index.ts merges them into the document's; the schema fuzzer sends the
// request examples, so each must be accepted as it is).
import { AT, LATER, ORG, USER } from './common.ts';

const server = {
  id: 'mcs_Q7dK2pLx9Vr4Tn8M',
  organization_id: ORG,
  shared: false,
  name: 'crm',
  description: 'The CRM team’s MCP server.',
  url: 'https://crm-mcp.example.com/',
  mcp_path: 'mcp',
  gateway_url: 'https://gateway.example.com/crm/mcp',
  scopes: ['openid', 'crm.read'],
  authorization_server: null,
  oauth: {
    issuer: 'https://sso.example.com',
    authorization_endpoint: null,
    token_endpoint: null,
    client_id: 'mindgate-crm',
    client_secret_set: true,
    client_secret_set_at: AT,
    token_endpoint_auth_method: 'client_secret_basic',
    scopes: ['openid', 'crm.read'],
    resource: null,
    audience: null,
    extra_authorize_params: {},
  },
  tool_policy: { allow: [], deny: ['delete_*'] },
  enabled: true,
  integration: null,
  created_by: USER,
  created_at: AT,
  updated_at: LATER,
};

const gatewayKey = {
  id: 'gkR4m8Tq2Wz6Yp1Ls3',
  name: 'Ops automation',
  prefix: 'mgk_gkR4m8Tq2W',
  created_by: USER,
  created_at: AT,
  rotated_at: null,
  previous_secret_expires_at: null,
};

export const REGISTRY_EXAMPLES: Record<string, unknown> = {
  McpServer: server,
  CreateMcpServer: {
    name: 'crm',
    url: 'https://crm-mcp.example.com/',
    description: 'The CRM team’s MCP server.',
    oauth: {
      issuer: 'https://sso.example.com',
      client_id: 'mindgate-crm',
      client_secret: 'upstream-client-secret',
      scopes: ['openid', 'crm.read'],
    },
    tool_policy: { deny: ['delete_*'] },
  },
  UpdateMcpServer: { enabled: false, tool_policy: { deny: ['delete_*', 'export_all'] } },
  TestMcpServer: {},
  ConnectionTest: {
    ok: true,
    stage: null,
    status: null,
    error: null,
    server_info: { name: 'crm-mcp', version: '2.4.0' },
    protocol_version: '2025-06-18',
    tools: [{ name: 'find_account', description: 'Find an account by name or domain.' }],
    latency_ms: { initialize: 41.7, tools_list: 12.3 },
    gateway_url: 'https://gateway.example.com/crm/mcp',
  },
  Integration: {
    name: 'plain',
    title: 'MCP server without OAuth',
    description: 'A self-hosted MCP server that does not use OAuth.',
    documentation_url: 'https://modelcontextprotocol.io/specification/2025-06-18/basic/transports',
    server: { name: 'tools', mcp_path: 'mcp' },
    authorization: 'none',
    scopes: [],
    inputs: [{ name: 'url', title: 'Server URL', description: "The server's base URL; its MCP endpoint is `<url>/mcp`.", required: true }],
  },
  InstallIntegration: { name: 'tools', inputs: { url: 'https://tools-mcp.example.com/' }, tool_policy: { deny: ['admin_*'] } },
  GatewayKey: gatewayKey,
  GatewayKeyWithSecret: { gateway_key: gatewayKey, secret: 'mgk_gkR4m8Tq2Wz6Yp1Ls3_3bJ9kQ2xV7mN4pR8tW1yZ5cF6hL0dS2gA9eU3iO7' },
  CreateGatewayKey: { name: 'Ops automation' },
  RotateGatewayKey: { overlap_seconds: 3600 },
};
