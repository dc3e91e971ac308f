// The Brain search subject: a case's input (with its alert) searched in the organization's Brain
// through the Brain service, as the organization, exactly as its agents search it: SearchMemories
// in the case's namespace, or RecallContext over both namespaces for a case without one.
import type { Client } from '@connectrpc/connect';
import type { Case } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { Namespace, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Outcome } from './evaluators.ts';

/** The Brain's limits on a search query and on a recall task. */
const MAX_QUERY = 2_000;
const MAX_TASK = 4_000;

const namespaceName = (ns: Namespace) => (ns === Namespace.KNOWLEDGE ? 'knowledge' : 'episodes');
const queryOf = (c: Case, max: number) => (c.alert === '' ? c.input : `${c.input}\n\n${c.alert}`).slice(0, max);

export async function searchBrain(brain: Client<typeof BrainService>, organizationId: string, c: Case, limit: number): Promise<Outcome> {
  if (c.namespace === '') {
    const res = await brain.recallContext({ organizationId, task: queryOf(c, MAX_TASK), limit });
    return {
      found: res.memories.map((m) => ({ namespace: namespaceName(m.memory!.namespace), key: m.memory!.key })),
      answer: res.context,
    };
  }
  const namespace = c.namespace === 'knowledge' ? Namespace.KNOWLEDGE : Namespace.EPISODES;
  const res = await brain.searchMemories({ organizationId, namespace, query: queryOf(c, MAX_QUERY), limit });
  return {
    found: res.results.map((r) => ({ namespace: c.namespace, key: r.memory!.key })),
    answer: res.results.map((r) => r.memory!.content).join('\n\n'),
  };
}
