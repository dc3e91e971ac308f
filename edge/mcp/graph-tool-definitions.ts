// What the entity-graph tools declare (listed only to organizations whose plan includes the
// entity graph; brain-server.ts). Handlers are in graph-tools.ts.
import { z } from 'zod';

const items = z.array(z.unknown());
const predicates = z.array(z.string()).optional().describe('only these relationship predicates, e.g. depends_on, calls, runs_on');

export const EXPLAIN_ENTITY_TOOL = {
  title: 'Explain an entity',
  description:
    'What a service, team, person or other entity is and how it relates to others, each relationship with the memories that say so ' +
    '(namespace/key for fetch_memories). Names, aliases and near spellings work.',
  inputSchema: z.object({
    entity: z.string().describe('name, alias or id'),
    limit: z.number().int().min(1).max(50).optional().describe('relationships per direction, default 20'),
  }),
  outputSchema: z.object({
    entity: z.record(z.string(), z.unknown()),
    outgoing: items,
    incoming: items,
    outgoing_total: z.number(),
    incoming_total: z.number(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const ENTITY_PATH_TOOL = {
  title: 'How two entities are connected',
  description: 'The shortest chains of relationships between two entities (either direction), each step citing its memories.',
  inputSchema: z.object({
    from: z.string(),
    to: z.string(),
    max_depth: z.number().int().min(1).max(6).optional().describe('steps at most, default 4'),
    max_paths: z.number().int().min(1).max(5).optional().describe('default 3'),
    predicates,
  }),
  outputSchema: z.object({
    from: z.record(z.string(), z.unknown()),
    to: z.record(z.string(), z.unknown()),
    paths: items,
    truncated: z.boolean(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const AFFECTED_ENTITIES_TOOL = {
  title: 'What breaks if an entity fails',
  description:
    'Entities affected when this one fails or changes (direction "impact": what depends on it, and wholes it is part of), ' +
    'or what it relies on ("dependencies"), nearest first, each with the chain of cited relationships that makes it so.',
  inputSchema: z.object({
    entity: z.string(),
    direction: z.enum(['impact', 'dependencies']).optional().describe('default impact'),
    max_depth: z.number().int().min(1).max(10).optional().describe('default 5'),
    limit: z.number().int().min(1).max(200).optional().describe('default 50'),
    predicates,
  }),
  outputSchema: z.object({ root: z.record(z.string(), z.unknown()), affected: items, truncated: z.boolean() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const GRAPH_TOOL_NAMES = ['explain_entity', 'entity_path', 'affected_entities'] as const;
