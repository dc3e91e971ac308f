// Affected entities: a breadth-first walk from one entity along the way failure travels over
// dependency predicates (vocabulary.ts DEPENDENCY_FLOW), nearest first, each with the path from
// the root that makes it affected. IMPACT answers "what breaks if X fails"; DEPENDENCIES "what
// does X rely on" (the same edges walked the other way).
import type { GraphIndex, Step } from '../graph-index.ts';

export interface ImpactQuery {
  direction: 'impact' | 'dependencies';
  /** Predicate index → how failure travels along it. */
  flows: Map<number, 'against' | 'along'>;
  maxDepth: number;
  limit: number;
  maxVisited: number;
}

export interface Reached {
  node: number;
  depth: number;
  path: Step[];
}

export interface ImpactResult {
  reached: Reached[];
  truncated: boolean;
}

export function affected(graph: GraphIndex, root: number, query: ImpactQuery): ImpactResult {
  const parent = new Map<number, Step>();
  const depthOf = new Map<number, number>([[root, 0]]);
  const order: number[] = [];
  let frontier = [root];
  let next: number[] = [];
  let depth = 1;
  let visited = 0;
  let truncated = false;
  // IMPACT follows "against" edges from object to subject and "along" edges from subject to
  // object; DEPENDENCIES the reverse of both. By predicate index: whether an edge into the node
  // being expanded is followed back to its subject, and an edge out of it on to its object.
  const againstBackwards = query.direction === 'impact';
  const followIn: boolean[] = [];
  const followOut: boolean[] = [];
  for (const [p, flow] of query.flows) {
    followIn[p] = (flow === 'against') === againstBackwards;
    followOut[p] = (flow === 'along') === againstBackwards;
  }
  /** Reaches `neighbour` over `edge`; true once one more than asked is reached (the answer is cut). */
  const visit = (edge: number, neighbour: number, reversed: boolean): boolean => {
    if (depthOf.has(neighbour)) return false;
    depthOf.set(neighbour, depth);
    parent.set(neighbour, { edge, reversed });
    order.push(neighbour);
    next.push(neighbour);
    // One more than asked tells a complete answer from a cut one; past it nothing more is kept,
    // so a hub with thousands of dependents is not expanded further than that.
    return order.length > query.limit;
  };
  outer: for (; depth <= query.maxDepth && frontier.length > 0; depth++) {
    next = [];
    for (const node of frontier) {
      if (++visited > query.maxVisited) {
        truncated = true;
        break outer;
      }
      for (const edge of graph.inEdges(node)) {
        if (followIn[graph.predicateOfEdge(edge)] && visit(edge, graph.subjectOf(edge), true)) {
          truncated = true;
          break outer;
        }
      }
      for (const edge of graph.outEdges(node)) {
        if (followOut[graph.predicateOfEdge(edge)] && visit(edge, graph.objectOf(edge), false)) {
          truncated = true;
          break outer;
        }
      }
    }
    frontier = next;
  }
  // Nearest first; within a depth by id, so that the same graph always answers the same way.
  const kept = order
    .slice(0, query.limit)
    .sort((a, b) => depthOf.get(a)! - depthOf.get(b)! || (graph.nodeId(a) < graph.nodeId(b) ? -1 : 1));
  const reached = kept.map((node) => ({ node, depth: depthOf.get(node)!, path: pathTo(graph, parent, root, node) }));
  return { reached, truncated };
}

function pathTo(graph: GraphIndex, parent: Map<number, Step>, root: number, node: number): Step[] {
  const steps: Step[] = [];
  let at = node;
  while (at !== root) {
    const step = parent.get(at)!;
    steps.push(step);
    at = step.reversed ? graph.objectOf(step.edge) : graph.subjectOf(step.edge);
  }
  return steps.reverse();
}
