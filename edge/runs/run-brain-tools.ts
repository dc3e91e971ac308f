// The Brain's tools of an LLM run, for the run's organization only: brain_recall (RecallContext,
// the memories bearing on a task) and brain_remember (a memory put under a key, as
// manage_memories does for an agent on the Brain's MCP server: the same key written again updates
// it, the same content finds it unchanged, a near-duplicate of another memory is not written). A
// run following a playbook reads and writes only the playbook's namespaces. The model's mistakes
// (bad arguments) are answered with an error it reads; the Brain refusing a value fails the call
// the same way; a Brain that does not answer ends the attempt.
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import { Namespace, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { brainWrite, type NamespaceName } from './brain-steps.ts';
import type { ToolDefinition } from './chat-completions.ts';
import type { ToolCallOutcome } from './gateway-tools.ts';

export const RECALL_TOOL = 'brain_recall';
export const REMEMBER_TOOL = 'brain_remember';
export const ALL_NAMESPACES: NamespaceName[] = ['episodes', 'knowledge'];
const NAMESPACE_ENUM = { episodes: Namespace.EPISODES, knowledge: Namespace.KNOWLEDGE } as const;
const namespaceName = (ns: Namespace): NamespaceName => (ns === Namespace.KNOWLEDGE ? 'knowledge' : 'episodes');
const KEY = /^[A-Za-z0-9._:/-]{1,200}$/;

export function brainToolDefinitions(namespaces: NamespaceName[]): ToolDefinition[] {
  if (namespaces.length === 0) return [];
  return [
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
    {
      type: 'function',
      function: {
        name: REMEMBER_TOOL,
        description:
          "Record what you learned in the organization's Brain, for the next investigation: knowledge for reusable " +
          'learnings (how a system behaves, a fix that works), episodes for what happened here. Writing a key again updates it.',
        parameters: {
          type: 'object',
          properties: {
            namespace: { type: 'string', enum: namespaces },
            key: { type: 'string', pattern: KEY.source, description: 'A stable path-like key, e.g. incidents/checkout-latency-deploy-42.' },
            title: { type: 'string', maxLength: 200 },
            content: { type: 'string', description: 'The memory itself, self-contained.' },
            tags: { type: 'array', items: { type: 'string' }, maxItems: 20 },
          },
          required: ['namespace', 'key', 'content'],
          additionalProperties: false,
        },
      },
    },
  ];
}

const failed = (error: string): ToolCallOutcome => ({ ok: false, error, result: { error } });

export async function recall(
  brain: Client<typeof BrainService>,
  organizationId: string,
  namespaces: NamespaceName[],
  args: JsonObject,
): Promise<ToolCallOutcome> {
  const task = typeof args.task === 'string' ? args.task.trim() : '';
  const limit = args.limit === undefined ? 0 : Number(args.limit);
  if (task === '' || task.length > 4_000) return failed('give "task", 1-4000 characters');
  if (!Number.isInteger(limit) || limit < 0 || limit > 50) return failed('"limit" must be an integer from 1 to 50');
  // Both namespaces is the Brain's default; a playbook's one namespace is asked for by name.
  const only = namespaces.length === ALL_NAMESPACES.length ? [] : namespaces.map((n) => NAMESPACE_ENUM[n]);
  const res = await brain.recallContext({ organizationId, task, limit, namespaces: only });
  return {
    ok: true,
    error: '',
    result: {
      context: res.context,
      memories: res.memories.map((m) => ({ namespace: namespaceName(m.memory!.namespace), key: m.memory!.key, title: m.memory!.title })),
    },
  };
}

export async function remember(
  brain: Client<typeof BrainService>,
  organizationId: string,
  namespaces: NamespaceName[],
  args: JsonObject,
  source: { clientId: string; clientName: string },
): Promise<ToolCallOutcome> {
  const { namespace, key, title, content, tags } = args;
  if (typeof namespace !== 'string' || !namespaces.includes(namespace as NamespaceName))
    return failed(`"namespace" must be one of: ${namespaces.join(', ')}`);
  if (typeof key !== 'string' || !KEY.test(key)) return failed('"key" must be 1-200 characters of [A-Za-z0-9._:/-]');
  if (typeof content !== 'string' || content.trim() === '') return failed('give "content": the memory itself');
  if (title !== undefined && (typeof title !== 'string' || title.length > 200)) return failed('"title" must be at most 200 characters');
  if (tags !== undefined && (!Array.isArray(tags) || tags.length > 20 || tags.some((t) => typeof t !== 'string')))
    return failed('"tags" must be at most 20 strings');
  const outcome = await brainWrite(
    brain,
    organizationId,
    { namespace: namespace as NamespaceName, key, title: title as string | undefined, content, tags: tags as string[] | undefined },
    source,
  );
  // A near-duplicate is not written: the model reads why, and may update the other memory instead.
  if (outcome.ok && outcome.result.outcome === 'duplicate')
    return { ok: false, result: outcome.result, error: 'not written: a similar memory exists; recall it and update that key instead' };
  return outcome;
}
