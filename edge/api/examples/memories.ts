// Examples of the bodies of memories, their versions, feedback, contradictions and open
// questions, by the title of their schema (index.ts merges every area's).
import { AT, LATER, USER } from './common.ts';

// The memory graph's examples tell one story: a memory on Checkout's dependencies asserts two
// relationships (Checkout depends on the Payments API, which stores its data in the Ledger), and
// disagrees with a runbook.
export const MEMORY_TITLE = 'Checkout dependencies';
const MEMORY_CONTENT = 'Checkout calls the Payments API synchronously for every order; the Payments API stores its records in the Ledger.';
const memory = {
  namespace: 'knowledge',
  key: 'services/checkout',
  title: MEMORY_TITLE,
  content: MEMORY_CONTENT,
  tags: ['architecture'],
  entities: ['Checkout', 'Payments API', 'Ledger'],
  version: 2,
  created_at: AT,
  updated_at: LATER,
  written_by: { client_id: 'mindgate-api', user_id: USER, client_name: 'Mindgate API' },
  feedback: { worked: 3, failed: 0 },
  supersedes: null,
  superseded_by: null,
};
const memoryFields = {
  title: MEMORY_TITLE,
  content: MEMORY_CONTENT,
  tags: ['architecture'],
  entities: ['Checkout', 'Payments API', 'Ledger'],
  relationships: [
    { subject: 'Checkout', predicate: 'depends_on', object: 'Payments API' },
    { subject: 'Payments API', predicate: 'stores_data_in', object: 'Ledger' },
  ],
};
const CONTRADICTION_ID = 'ctr_sx4kzrjk2i3ro5nsmlf3';
const RESOLUTION = 'Checkout calls the Payments API synchronously; the runbook was written before the queue was removed.';

export const MEMORY_EXAMPLES: Record<string, unknown> = {
  Memory: memory,
  MemoryWrite: { memory, outcome: 'updated', contradictions: [CONTRADICTION_ID] },
  MemorySearch: { results: [{ memory, score: 0.83, warning: null }], searched_memories: 1240 },
  MemoryFeedbackResult: { updated: [{ namespace: 'knowledge', key: 'services/checkout', worked: 4, failed: 0 }], missing: [] },
  Contradiction: {
    id: CONTRADICTION_ID,
    kind: 'contradiction',
    status: 'resolved',
    text: 'One memory says Checkout calls the Payments API synchronously; the other that Checkout queues payments while the Payments API is down.',
    memories: ['knowledge/services/checkout', 'knowledge/runbooks/payments-outage'],
    entities: [],
    resolution: RESOLUTION,
    created_at: LATER,
    resolved_at: LATER,
  },
  OpenQuestion: {
    id: 'q_o5xajvd4xvyu2omel2ez',
    kind: 'question',
    status: 'open',
    text: 'Which team owns the Ledger?',
    memories: ['knowledge/services/checkout'],
    entities: ['Ledger'],
    resolution: '',
    created_at: LATER,
    resolved_at: null,
  },
  MemoryVersion: {
    version: 1,
    state: 'replaced',
    memory: { ...memory, version: 1 },
    ended_at: LATER,
    ended_by: { client_id: 'mindgate-api', user_id: USER, client_name: 'Mindgate API' },
  },
  FlagContradiction: {
    memories: [
      { namespace: 'knowledge', key: 'services/checkout' },
      { namespace: 'knowledge', key: 'runbooks/payments-outage' },
    ],
    reason: 'One says Checkout calls the Payments API synchronously; the other that it queues payments.',
  },
  AskQuestion: {
    question: 'Which team owns the Ledger?',
    memories: [{ namespace: 'knowledge', key: 'services/checkout' }],
    entities: ['Ledger'],
  },
  CreateMemory: { namespace: 'knowledge', key: 'services/checkout', ...memoryFields },
  UpdateMemory: { ...memoryFields, expected_version: 1 },
  MemoryFeedback: {
    outcome: 'worked',
    memories: [{ namespace: 'knowledge', key: 'services/checkout' }],
    note: 'Traced a failed order with it.',
  },
  ResolveItem: { status: 'resolved', resolution: RESOLUTION },
};
