// The entity-graph tools: explain_entity, entity_path, affected_entities. Each calls the
// entity-graph service with the organization of the verified token and renders the answer as a
// few lines a model reads easily, every relationship followed by the memories that assert it in
// the form fetch_memories takes (namespace/key).
import type { Client } from '@connectrpc/connect';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  Direction,
  type Entity,
  type EntityGraphService,
  type PathStep,
  type Relationship,
} from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { result, run } from './brain-tool-json.ts';
import { AFFECTED_ENTITIES_TOOL, ENTITY_PATH_TOOL, EXPLAIN_ENTITY_TOOL } from './graph-tool-definitions.ts';

type GraphClient = Client<typeof EntityGraphService>;

const entityJson = (e: Entity | undefined) => ({
  id: e?.id ?? '',
  name: e?.name ?? '',
  kind: e?.kind ?? '',
  aliases: e?.aliases ?? [],
  description: e?.description ?? '',
});

const citationsJson = (r: Relationship) =>
  r.citations.map((c) => ({ namespace: c.namespace, key: c.key, version: Number(c.version), title: c.title }));

const relationshipJson = (r: Relationship) => ({
  subject: r.subjectName,
  subject_id: r.subjectId,
  predicate: r.predicate,
  object: r.objectName,
  object_id: r.objectId,
  cited_by: citationsJson(r),
  citation_count: r.citationCount,
});

function entityLine(e: Entity | undefined): string {
  if (!e) return '(unknown entity)';
  const kind = e.kind ? `${e.kind}, ` : '';
  const aliases = e.aliases.length ? `; also ${e.aliases.join(', ')}` : '';
  return `${e.name} (${kind}id ${e.id}${aliases})`;
}

/** "- A depends_on B [knowledge/x "Title" v2; …]" */
function relationshipLine(r: Relationship): string {
  const cited = r.citations.slice(0, 3).map((c) => `${c.namespace}/${c.key}${c.title ? ` "${c.title}"` : ''} v${c.version}`);
  const more = r.citationCount > cited.length ? ` and ${r.citationCount - cited.length} more` : '';
  return `${r.subjectName} ${r.predicate} ${r.objectName} [${cited.join('; ')}${more}]`;
}

function stepLine(s: PathStep): string {
  return `${relationshipLine(s.relationship!)}${s.reversed ? ' (walked backwards)' : ''}`;
}

const FETCH_HINT = 'Read a cited memory with fetch_memories (namespace and key as in the brackets).';

async function explainEntity(
  graph: GraphClient,
  organizationId: string,
  args: { entity: string; limit?: number },
): Promise<CallToolResult> {
  const res = await graph.getEntity({ organizationId, name: args.entity, neighbourLimit: args.limit ?? 20 });
  const e = res.entity;
  const lines = [entityLine(e)];
  if (e?.description) lines.push(e.description);
  lines.push(`Relates to (${res.outgoing.length} of ${res.outgoingTotal}):`, ...res.outgoing.map((r) => `- ${relationshipLine(r)}`));
  lines.push(`Related from (${res.incoming.length} of ${res.incomingTotal}):`, ...res.incoming.map((r) => `- ${relationshipLine(r)}`));
  if (res.outgoingTotal + res.incomingTotal > 0) lines.push(FETCH_HINT);
  return result(lines.join('\n'), {
    entity: entityJson(e),
    outgoing: res.outgoing.map(relationshipJson),
    incoming: res.incoming.map(relationshipJson),
    outgoing_total: res.outgoingTotal,
    incoming_total: res.incomingTotal,
  });
}

interface PathArgs {
  from: string;
  to: string;
  max_depth?: number;
  max_paths?: number;
  predicates?: string[];
}

async function entityPath(graph: GraphClient, organizationId: string, args: PathArgs): Promise<CallToolResult> {
  const res = await graph.findPaths({
    organizationId,
    from: args.from,
    to: args.to,
    maxDepth: args.max_depth ?? 4,
    maxPaths: args.max_paths ?? 3,
    predicates: args.predicates ?? [],
  });
  const head = `${entityLine(res.from)} → ${entityLine(res.to)}`;
  const lines =
    res.paths.length === 0
      ? [head, `Not connected within ${args.max_depth ?? 4} steps${res.truncated ? ' (the search hit its limit)' : ''}.`]
      : [
          head,
          ...res.paths.flatMap((p, i) => [`Path ${i + 1} (${p.steps.length} steps):`, ...p.steps.map((s) => `  - ${stepLine(s)}`)]),
          FETCH_HINT,
        ];
  return result(lines.join('\n'), {
    from: entityJson(res.from),
    to: entityJson(res.to),
    paths: res.paths.map((p) => ({
      entity_ids: p.entityIds,
      steps: p.steps.map((s) => ({ ...relationshipJson(s.relationship!), reversed: s.reversed })),
    })),
    truncated: res.truncated,
  });
}

interface AffectedArgs {
  entity: string;
  direction?: 'impact' | 'dependencies';
  max_depth?: number;
  limit?: number;
  predicates?: string[];
}

async function affectedEntities(graph: GraphClient, organizationId: string, args: AffectedArgs): Promise<CallToolResult> {
  const dependencies = args.direction === 'dependencies';
  const res = await graph.getAffectedEntities({
    organizationId,
    entity: args.entity,
    direction: dependencies ? Direction.DEPENDENCIES : Direction.IMPACT,
    maxDepth: args.max_depth ?? 5,
    limit: args.limit ?? 50,
    predicates: args.predicates ?? [],
  });
  const head = dependencies ? `What ${entityLine(res.root)} relies on:` : `Affected if ${entityLine(res.root)} fails or changes:`;
  const lines = [head];
  if (res.affected.length === 0) lines.push(`Nothing, over ${res.predicates.join(', ')}.`);
  for (const a of res.affected) {
    lines.push(`${a.depth}. ${entityLine(a.entity)} via:`, ...a.path.map((s) => `   - ${stepLine(s)}`));
  }
  if (res.truncated) lines.push('(More are affected: raise limit or narrow predicates.)');
  if (res.affected.length > 0) lines.push(FETCH_HINT);
  return result(lines.join('\n'), {
    root: entityJson(res.root),
    affected: res.affected.map((a) => ({
      entity: entityJson(a.entity),
      depth: a.depth,
      path: a.path.map((s) => ({ ...relationshipJson(s.relationship!), reversed: s.reversed })),
    })),
    truncated: res.truncated,
  });
}

export function registerGraphTools(server: McpServer, graph: GraphClient, organizationId: string): void {
  server.registerTool('explain_entity', EXPLAIN_ENTITY_TOOL, (args) => run(() => explainEntity(graph, organizationId, args)));
  server.registerTool('entity_path', ENTITY_PATH_TOOL, (args) => run(() => entityPath(graph, organizationId, args)));
  server.registerTool('affected_entities', AFFECTED_ENTITIES_TOOL, (args) => run(() => affectedEntities(graph, organizationId, args)));
}
