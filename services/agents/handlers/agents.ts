import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AgentSchema,
  ListAgentsResponseSchema,
  RecordActivityResponseSchema,
  RegisterAgentResponseSchema,
  type ListAgentsRequest,
  type RecordActivityRequest,
  type RegisterAgentRequest,
} from '../../../gen/mindgate/agents/v1/agents_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';

export interface AgentRecord extends RecordDoc {
  organizationId: string;
  agentId: string;
  name: string;
  description: string;
  createdAt: number;
  lastSeenAt?: number;
}

export interface AgentsContext {
  agents: RecordCollection<AgentRecord>;
  now: () => number;
}

const AGENT_ID = /^[A-Za-z0-9._:@-]{1,200}$/;

function requireAgentId(value: string): string {
  if (!AGENT_ID.test(value)) invalid('agent_id', 'must be 1-200 characters of [A-Za-z0-9._:@-]');
  return value;
}

function toAgent(r: AgentRecord) {
  return create(AgentSchema, {
    organizationId: r.organizationId,
    agentId: r.agentId,
    name: r.name,
    description: r.description,
    createTime: timestampFromMs(r.createdAt),
    lastSeenTime: r.lastSeenAt === undefined ? undefined : timestampFromMs(r.lastSeenAt),
  });
}

export async function registerAgent(ctx: AgentsContext, req: RegisterAgentRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const agentId = requireAgentId(req.agentId);
  const name = requireText('name', req.name.trim(), 200, { required: true });
  const description = requireText('description', req.description, 2_000);
  const id = `${organizationId}/${agentId}`;
  const existing = await ctx.agents.get(id);
  const record: AgentRecord = {
    ...(existing ?? { _id: id, organizationId, agentId, createdAt: ctx.now() }),
    name,
    description,
  };
  await ctx.agents.put(record);
  return create(RegisterAgentResponseSchema, { agent: toAgent(record) });
}

export async function listAgents(ctx: AgentsContext, req: ListAgentsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (req.pageSize > 500) invalid('page_size', `must be at most 500, got ${req.pageSize}`);
  const records = await ctx.agents.find({ organizationId }, { sort: { field: 'createdAt', direction: 'asc' }, limit: req.pageSize || 100 });
  return create(ListAgentsResponseSchema, { agents: records.map(toAgent) });
}

export async function recordActivity(ctx: AgentsContext, req: RecordActivityRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const agentId = requireAgentId(req.agentId);
  const existing = await ctx.agents.get(`${organizationId}/${agentId}`);
  if (!existing) throw new ConnectError(`agent "${agentId}" is not registered`, Code.NotFound);
  const record = { ...existing, lastSeenAt: ctx.now() };
  await ctx.agents.put(record);
  return create(RecordActivityResponseSchema, { agent: toAgent(record) });
}
