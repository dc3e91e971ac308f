// Examples of the bodies of the memory graph (entities, relationships, paths and impact), by the
// title of their schema (index.ts merges every area's). They go on with the memories' story
// (memories.ts): the memory on Checkout's dependencies cites the relationships.
import { AT, LATER } from './common.ts';
import { MEMORY_TITLE } from './memories.ts';

const checkout = {
  id: 'checkout',
  name: 'Checkout',
  kind: 'service',
  aliases: [],
  description: "The web shop's order checkout.",
  version: 1,
  relationship_count: 1,
  created_at: AT,
  updated_at: AT,
};
const paymentsApi = {
  id: 'payments-api',
  name: 'Payments API',
  kind: 'service',
  aliases: ['PGW', 'Payments'],
  description: 'Takes the card payment of every order.',
  version: 3,
  relationship_count: 2,
  created_at: AT,
  updated_at: LATER,
};
const ledger = {
  id: 'ledger',
  name: 'Ledger',
  kind: 'component',
  aliases: [],
  description: '',
  version: 1,
  relationship_count: 1,
  created_at: AT,
  updated_at: AT,
};
const citation = {
  namespace: 'knowledge',
  key: 'services/checkout',
  version: 2,
  origin: 'explicit',
  title: MEMORY_TITLE,
  asserted_at: LATER,
};
const dependsOn = {
  id: 'rel_ani4pjqnttcz7stzzl64bcit6l',
  subject_id: 'checkout',
  subject_name: 'Checkout',
  predicate: 'depends_on',
  object_id: 'payments-api',
  object_name: 'Payments API',
  citations: [citation],
  citation_count: 1,
  created_at: AT,
};
const storesDataIn = {
  ...dependsOn,
  id: 'rel_6drrgsbkey3gcydk7yjycq7e2r',
  subject_id: 'payments-api',
  subject_name: 'Payments API',
  predicate: 'stores_data_in',
  object_id: 'ledger',
  object_name: 'Ledger',
};

export const GRAPH_EXAMPLES: Record<string, unknown> = {
  Entity: paymentsApi,
  EntityDetail: { ...paymentsApi, outgoing: [storesDataIn], incoming: [dependsOn], outgoing_total: 1, incoming_total: 1 },
  EntityMatches: { matches: [{ entity: paymentsApi, matched: 'Payments API', score: 0.8 }] },
  MergedEntity: { entity: paymentsApi, moved_relationships: 1 },
  Relationship: dependsOn,
  EntityPaths: {
    from: checkout,
    to: ledger,
    paths: [
      {
        entity_ids: ['checkout', 'payments-api', 'ledger'],
        steps: [
          { relationship: dependsOn, reversed: false },
          { relationship: storesDataIn, reversed: false },
        ],
      },
    ],
    truncated: false,
  },
  AffectedEntities: {
    root: paymentsApi,
    direction: 'impact',
    predicates: ['depends_on', 'calls', 'runs_on', 'deployed_to', 'stores_data_in', 'part_of'],
    affected: [{ entity: checkout, depth: 1, path: [{ relationship: dependsOn, reversed: true }] }],
    truncated: false,
  },
  UpdateEntity: { aliases: ['PGW', 'Payments'], description: 'Takes the card payment of every order.' },
  MergeEntities: { source_entity_id: 'payments' },
  AssertRelationship: {
    subject: 'Checkout',
    predicate: 'depends_on',
    object: 'Payments API',
    memory: { namespace: 'knowledge', key: 'services/checkout' },
  },
};
