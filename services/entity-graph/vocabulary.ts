// The predicates and kinds the graph speaks, and which predicates carry failure. Ops teams name
// the same few relations over and over; a small shared vocabulary keeps "depends on", "relies on"
// and "needs" from becoming three unrelated edges, while free-form predicates stay possible.
import { EntityKind } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';

/** The documented vocabulary (docs/graph.md). Anything else matching PREDICATE is free-form. */
export const VOCABULARY = [
  'depends_on',
  'calls',
  'runs_on',
  'owned_by',
  'member_of',
  'part_of',
  'deployed_to',
  'stores_data_in',
  'alerts_to',
  'replaced_by',
] as const;

export const PREDICATE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * How failure travels along a dependency predicate. "against": when the object fails, the
 * subject is affected (A depends_on B: B down, A down). "along": when the subject fails, the
 * object is affected (A part_of B: a part down, the whole degraded).
 */
export const DEPENDENCY_FLOW: Readonly<Record<string, 'against' | 'along'>> = {
  depends_on: 'against',
  calls: 'against',
  runs_on: 'against',
  deployed_to: 'against',
  stores_data_in: 'against',
  part_of: 'along',
};

export const DEPENDENCY_PREDICATES = Object.keys(DEPENDENCY_FLOW);

/** Flow of a predicate a caller names for an impact walk: free-form ones read like depends_on. */
export function flowOf(predicate: string): 'against' | 'along' {
  return DEPENDENCY_FLOW[predicate] ?? 'against';
}

/** "Depends on", "depends-on", "DEPENDS_ON" → depends_on; undefined when nothing usable is left. */
export function normalizePredicate(raw: string): string | undefined {
  const p = raw
    .normalize('NFKC')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
    .replace(/[^a-z0-9_]/g, '')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  return PREDICATE.test(p) ? p : undefined;
}

const KIND_NAMES: Record<number, string> = {
  [EntityKind.PERSON]: 'person',
  [EntityKind.TEAM]: 'team',
  [EntityKind.SERVICE]: 'service',
  [EntityKind.COMPONENT]: 'component',
  [EntityKind.ORGANIZATION]: 'organization',
  [EntityKind.DOCUMENT]: 'document',
  [EntityKind.OTHER]: 'other',
};

export type KindName = 'person' | 'team' | 'service' | 'component' | 'organization' | 'document' | 'other' | '';

export const KIND_LIST = Object.values(KIND_NAMES) as Exclude<KindName, ''>[];

export function kindName(kind: EntityKind): KindName {
  return (KIND_NAMES[kind] ?? '') as KindName;
}

// "system" is the spec's word for a service.
const KIND_OF = new Map<string, EntityKind>([
  ...Object.entries(KIND_NAMES).map(([kind, name]) => [name, Number(kind) as EntityKind] as const),
  ['system', EntityKind.SERVICE],
]);

export function kindEnum(name: string): EntityKind {
  return KIND_OF.get(name.trim().toLowerCase()) ?? EntityKind.UNSPECIFIED;
}
