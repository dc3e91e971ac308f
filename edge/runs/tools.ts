// The tools of an LLM run's model: the Brain's (brain_recall, brain_remember) and the MCP tools of
// the servers the organization may use, called through the gateway (mcp-tools.ts), all narrowed
// to a playbook's declared tools and namespaces when the run follows one. The toolbox is put
// together when a runner claims the run, and each call the model asks for becomes one step: what
// was called with which arguments, and what came back. A tool never throws for the model's
// mistakes (bad arguments, an unknown tool): it answers an error the model reads, so the run can
// go on; only a failure of the platform itself ends the call with an exception.
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { McpServersService } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../../services/common/log.ts';
import type { ConnectionTickets } from '../gateway/connection-test.ts';
import type { NamespaceName } from './brain-steps.ts';
import type { ToolCall, ToolDefinition } from './chat-completions.ts';
import { createGatewayTools, type GatewayTools } from './gateway-tools.ts';
import { discoverMcpTools, MAX_TOOLS, usableServers, type McpTool } from './mcp-tools.ts';
import { ALL_NAMESPACES, brainToolDefinitions, recall, RECALL_TOOL, remember, REMEMBER_TOOL } from './run-brain-tools.ts';

/** One tool call as the run records it (a step). */
export interface ToolStep {
  kind: StepKind;
  /** brain_recall, brain_remember, or server/tool. */
  name: string;
  ok: boolean;
  arguments: JsonObject;
  result: JsonObject;
  error: string;
}

export interface Toolbox {
  readonly definitions: ToolDefinition[];
  call(call: ToolCall, signal: AbortSignal): Promise<ToolStep>;
  close(): Promise<void>;
}

export interface ToolboxOptions {
  organizationId: string;
  runId: string;
  brain: Client<typeof BrainService>;
  mcpServers: Client<typeof McpServersService>;
  gatewayUrl: string;
  tickets: ConnectionTickets;
  toolTimeoutMs: number;
  /** What the run's playbook declares, when it follows one; undefined: every tool and namespace. */
  playbook?: { tools?: string[]; namespaces?: NamespaceName[] };
  logger: Logger;
  signal: AbortSignal;
}

function parseArguments(text: string): JsonObject | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

export async function createToolbox(o: ToolboxOptions): Promise<Toolbox> {
  const namespaces = o.playbook ? (o.playbook.namespaces ?? []) : ALL_NAMESPACES;
  const brainTools = brainToolDefinitions(namespaces);
  const servers = await usableServers(o.mcpServers, o.organizationId);
  const gateway: GatewayTools = createGatewayTools({
    organizationId: o.organizationId,
    gatewayUrl: o.gatewayUrl,
    tickets: o.tickets,
    mcpServers: o.mcpServers,
    timeoutMs: o.toolTimeoutMs,
    mcpPaths: servers,
    clientName: 'mindgate-llm-runner',
  });
  let mcpTools: McpTool[];
  try {
    mcpTools = await discoverMcpTools(
      {
        ...o,
        gateway,
        declared: o.playbook ? (o.playbook.tools ?? []) : undefined,
        reserved: [RECALL_TOOL, REMEMBER_TOOL],
        room: MAX_TOOLS - brainTools.length,
      },
      servers,
    );
  } catch (err) {
    await gateway.close();
    throw err;
  }
  const byName = new Map(mcpTools.map((t) => [t.name, t]));
  const definitions = [...brainTools, ...mcpTools.map((t) => t.definition)];
  const source = { clientId: 'llm-runner', clientName: `LLM run ${o.runId}` };

  async function call(c: ToolCall, signal: AbortSignal): Promise<ToolStep> {
    const args = parseArguments(c.function.arguments);
    const recorded: JsonObject = args
      ? { tool_call_id: c.id, arguments: args }
      : { tool_call_id: c.id, arguments_text: c.function.arguments };
    const step = (kind: StepKind, name: string, outcome: { ok: boolean; result: JsonObject; error: string }): ToolStep => ({
      kind,
      name,
      arguments: recorded,
      ...outcome,
    });
    const refuse = (kind: StepKind, name: string, error: string) => step(kind, name, { ok: false, result: { error }, error });
    const mcp = byName.get(c.function.name);
    const known = brainTools.some((d) => d.function.name === c.function.name) || mcp !== undefined;
    if (!known) {
      const names = definitions.map((d) => d.function.name);
      const list = names.length > 20 ? `${names.slice(0, 20).join(', ')}…` : names.join(', ') || 'none';
      return refuse(StepKind.TOOL_CALL, c.function.name.slice(0, 200), `there is no tool "${c.function.name}"; the tools are: ${list}`);
    }
    if (mcp) {
      const name = `${mcp.server}/${mcp.tool}`.slice(0, 200);
      if (!args) return refuse(StepKind.TOOL_CALL, name, 'the arguments are not a JSON object');
      recorded.server = mcp.server;
      recorded.tool = mcp.tool;
      return step(StepKind.TOOL_CALL, name, await gateway.call(mcp.server, mcp.tool, args, signal));
    }
    if (c.function.name === RECALL_TOOL) {
      if (!args) return refuse(StepKind.BRAIN_READ, RECALL_TOOL, 'the arguments are not a JSON object');
      return step(StepKind.BRAIN_READ, RECALL_TOOL, await recall(o.brain, o.organizationId, namespaces, args));
    }
    if (!args) return refuse(StepKind.BRAIN_WRITE, REMEMBER_TOOL, 'the arguments are not a JSON object');
    return step(StepKind.BRAIN_WRITE, REMEMBER_TOOL, await remember(o.brain, o.organizationId, namespaces, args, source));
  }

  return { definitions, call, close: () => gateway.close() };
}

/** The text the model reads back for a tool call: the recalled context, the tool's text, or the error. */
export function toolText(outcome: { ok: boolean; result?: JsonObject; error: string }): string {
  if (!outcome.ok) return `Error: ${outcome.error}`;
  const result = outcome.result ?? {};
  if (typeof result.context === 'string') return result.context || 'The Brain holds nothing on this.';
  if (Array.isArray(result.content)) {
    const parts = (result.content as Array<{ type?: unknown; text?: unknown } | null>).map((c) =>
      c?.type === 'text' && typeof c.text === 'string' ? c.text : `[${String(c?.type ?? 'content')}]`,
    );
    if (parts.length > 0) return parts.join('\n');
  }
  return JSON.stringify(result);
}
