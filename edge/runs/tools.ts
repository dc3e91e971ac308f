// The tools a run's model may call: today the organization's Brain (recall). A tool never throws
// for the model's mistakes (bad arguments, an unknown tool): it answers an error the model reads,
// so the run can go on; only a failure of the platform itself ends the call with an exception.
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import { Namespace, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { ToolDefinition } from './chat-completions.ts';

export const RECALL_TOOL = 'brain_recall';

export const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: RECALL_TOOL,
      description:
        "Recall what the organization's Brain knows that bears on a task: past incidents, runbooks, decisions. " +
        'Call it before concluding, with the task in your own words.',
      parameters: {
        type: 'object',
        properties: {
          task: { type: 'string', description: 'What you are about to do or find out.' },
          limit: { type: 'integer', minimum: 1, maximum: 50, description: 'Memories at most (default 12).' },
        },
        required: ['task'],
        additionalProperties: false,
      },
    },
  },
];

export interface ToolOutcome {
  kind: StepKind;
  ok: boolean;
  result: JsonObject;
  error: string;
}

const namespaceName = (ns: Namespace) => (ns === Namespace.KNOWLEDGE ? 'knowledge' : 'episodes');

function parseArguments(text: string): JsonObject | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

async function recall(brain: Client<typeof BrainService>, organizationId: string, args: JsonObject): Promise<ToolOutcome> {
  const task = typeof args.task === 'string' ? args.task.trim() : '';
  const limit = args.limit === undefined ? 0 : Number(args.limit);
  if (task === '' || task.length > 4_000) return failed(StepKind.BRAIN_READ, 'give "task", 1-4000 characters');
  if (!Number.isInteger(limit) || limit < 0 || limit > 50) return failed(StepKind.BRAIN_READ, '"limit" must be an integer from 1 to 50');
  const res = await brain.recallContext({ organizationId, task, limit });
  return {
    kind: StepKind.BRAIN_READ,
    ok: true,
    error: '',
    result: {
      context: res.context,
      memories: res.memories.map((m) => ({ namespace: namespaceName(m.memory!.namespace), key: m.memory!.key, title: m.memory!.title })),
    },
  };
}

const failed = (kind: StepKind, error: string): ToolOutcome => ({ kind, ok: false, error, result: { error } });

/** Runs one tool call of the model for the run's organization. */
export async function callTool(
  brain: Client<typeof BrainService>,
  organizationId: string,
  name: string,
  argumentText: string,
): Promise<ToolOutcome> {
  const args = parseArguments(argumentText);
  if (name !== RECALL_TOOL) return failed(StepKind.TOOL_CALL, `there is no tool "${name}"; the tools are: ${RECALL_TOOL}`);
  if (!args) return failed(StepKind.BRAIN_READ, 'the arguments are not a JSON object');
  return recall(brain, organizationId, args);
}

/** The text the model reads back for a tool call. */
export function toolText(outcome: { ok: boolean; result?: JsonObject; error: string }): string {
  if (!outcome.ok) return `Error: ${outcome.error}`;
  const context = outcome.result?.context;
  return typeof context === 'string' ? context || 'The Brain holds nothing on this.' : JSON.stringify(outcome.result ?? {});
}
