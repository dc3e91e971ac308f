// Examples of the playbook operations' bodies, by schema title (index.ts merges them).
import { AT, LATER, ORG, USER } from './common.ts';
const PLAYBOOK = 'pbk_Rq4nT8vXz2Lk9Mw3Pa7s';

const document = {
  name: 'Checkout latency',
  description: 'What to look at when checkout p99 rises.',
  instructions: 'Find recent deploys of the service and what the Brain knows about them; record what you found.',
  inputs: [{ name: 'service', type: 'string', required: true }],
  tools: ['deploys/list_deploys'],
  namespaces: ['knowledge', 'episodes'],
  steps: [
    { id: 'deploys', kind: 'tool_call', server: 'deploys', tool: 'list_deploys', arguments: { service: '{{ inputs.service }}' } },
    { id: 'known', kind: 'brain_read', namespace: 'knowledge', query: '{{ inputs.service }} latency after deploy', limit: 5 },
    {
      id: 'record',
      kind: 'brain_write',
      when: { path: 'steps.deploys.result.isError', not_equals: true },
      namespace: 'episodes',
      key: 'checkout-latency/{{ inputs.service }}',
      content: 'Deploys seen: {{ steps.deploys.result.content[0].text }}',
    },
  ],
  output: 'Deploys of {{ inputs.service }}: {{ steps.deploys.result.content[0].text }}',
};

const playbook = {
  id: PLAYBOOK,
  organization_id: ORG,
  name: 'Checkout latency',
  description: 'What to look at when checkout p99 rises.',
  latest_version: 2,
  published_version: 2,
  created_by: USER,
  created_at: AT,
  updated_at: LATER,
  published_at: LATER,
};

export const PLAYBOOK_EXAMPLES: Record<string, unknown> = {
  PlaybookDocument: document,
  PlaybookDraft: document,
  Playbook: playbook,
  PlaybookDetail: { ...playbook, document, has_steps: true },
  PlaybookVersion: { playbook_id: PLAYBOOK, version: 2, document, has_steps: true, created_by: USER, created_at: LATER },
  WritePlaybook: { document, publish: true },
  PublishPlaybook: { version: 1 },
  PlaybookValidation: {
    valid: false,
    problems: [{ path: '/steps/0/tool', message: 'deploys/list_deploys is not among the playbook’s tools' }],
  },
  RunPlaybook: { inputs: { service: 'checkout' }, title: 'Checkout p99 alert' },
  JsonSchema: { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'https://mindgate.dev/schemas/playbook.json', properties: {} },
};
