// Up to k shortest paths between two entities: breadth-first search bounded by depth and by a
// cap on visited entities, and Yen's algorithm for the second and later paths (each a detour from
// an earlier one, so the answer shows different routes, not one route k times).
import type { GraphIndex, Step } from '../graph-index.ts';

export interface PathQuery {
  maxDepth: number;
  maxPaths: number;
  /** Predicate indexes allowed (undefined: all). */
  predicates?: Set<number>;
  /** Subject to object only. */
  forward: boolean;
  /** Entities all searches of this query may visit together. */
  maxVisited: number;
}

export interface FoundPath {
  steps: Step[];
  nodes: number[];
}

export interface PathResult {
  paths: FoundPath[];
  visited: number;
  truncated: boolean;
}

interface Budget {
  visited: number;
  max: number;
  exhausted: boolean;
}

interface Search {
  graph: GraphIndex;
  query: PathQuery;
  budget: Budget;
  bannedEdges: Set<number>;
  bannedNodes: Set<number>;
}

/**
 * One shortest path from `from` to `to` of at most `depth` steps, or undefined: a breadth-first
 * search from both ends, one level at a time on the smaller side, which visits about twice the
 * square root of what a one-sided search would on a graph that fans out.
 */
function shortest(s: Search, from: number, to: number, depth: number): FoundPath | undefined {
  if (from === to) return { steps: [], nodes: [from] };
  const forwardParent = new Map<number, Step>([[from, { edge: -1, reversed: false }]]);
  const backwardNext = new Map<number, Step>([[to, { edge: -1, reversed: false }]]);
  let fromSide = [from];
  let toSide = [to];
  for (let walked = 0; walked < depth && fromSide.length > 0 && toSide.length > 0; walked++) {
    const expandFrom = fromSide.length <= toSide.length;
    const next: number[] = [];
    for (const node of expandFrom ? fromSide : toSide) {
      if (++s.budget.visited > s.budget.max) {
        s.budget.exhausted = true;
        return undefined;
      }
      const meet = expandFrom ? stepOut(s, node, forwardParent, backwardNext, next) : stepIn(s, node, backwardNext, forwardParent, next);
      if (meet !== undefined) return join(s.graph, forwardParent, backwardNext, from, to, meet);
    }
    if (expandFrom) fromSide = next;
    else toSide = next;
  }
  return undefined;
}

function allowed(s: Search, edge: number, neighbour: number, seen: Map<number, Step>): boolean {
  if (seen.has(neighbour) || s.bannedNodes.has(neighbour) || s.bannedEdges.has(edge)) return false;
  return !s.query.predicates || s.query.predicates.has(s.graph.predicateOfEdge(edge));
}

/** Expands `node` on the `from` side; the node where both sides meet, if any. */
function stepOut(s: Search, node: number, parent: Map<number, Step>, other: Map<number, Step>, next: number[]): number | undefined {
  const visit = (edge: number, neighbour: number, reversed: boolean) => {
    if (!allowed(s, edge, neighbour, parent)) return false;
    parent.set(neighbour, { edge, reversed });
    next.push(neighbour);
    return other.has(neighbour);
  };
  for (const edge of s.graph.outEdges(node)) if (visit(edge, s.graph.objectOf(edge), false)) return s.graph.objectOf(edge);
  if (s.query.forward) return undefined;
  for (const edge of s.graph.inEdges(node)) if (visit(edge, s.graph.subjectOf(edge), true)) return s.graph.subjectOf(edge);
  return undefined;
}

/** Expands `node` on the `to` side: the entities one step before it. */
function stepIn(s: Search, node: number, toward: Map<number, Step>, other: Map<number, Step>, next: number[]): number | undefined {
  const visit = (edge: number, neighbour: number, reversed: boolean) => {
    if (!allowed(s, edge, neighbour, toward)) return false;
    toward.set(neighbour, { edge, reversed });
    next.push(neighbour);
    return other.has(neighbour);
  };
  for (const edge of s.graph.inEdges(node)) if (visit(edge, s.graph.subjectOf(edge), false)) return s.graph.subjectOf(edge);
  if (s.query.forward) return undefined;
  for (const edge of s.graph.outEdges(node)) if (visit(edge, s.graph.objectOf(edge), true)) return s.graph.objectOf(edge);
  return undefined;
}

function join(graph: GraphIndex, parent: Map<number, Step>, toward: Map<number, Step>, from: number, to: number, meet: number): FoundPath {
  const steps: Step[] = [];
  const nodes = [meet];
  for (let at = meet; at !== from; ) {
    const step = parent.get(at)!;
    steps.unshift(step);
    at = step.reversed ? graph.objectOf(step.edge) : graph.subjectOf(step.edge);
    nodes.unshift(at);
  }
  for (let at = meet; at !== to; ) {
    const step = toward.get(at)!;
    steps.push(step);
    at = step.reversed ? graph.subjectOf(step.edge) : graph.objectOf(step.edge);
    nodes.push(at);
  }
  return { steps, nodes };
}

const keyOf = (p: FoundPath) => p.steps.map((s) => s.edge).join(',');

export function findPaths(graph: GraphIndex, from: number, to: number, query: PathQuery): PathResult {
  const budget: Budget = { visited: 0, max: query.maxVisited, exhausted: false };
  const search = (bannedEdges = new Set<number>(), bannedNodes = new Set<number>()): Search => ({
    graph,
    query,
    budget,
    bannedEdges,
    bannedNodes,
  });
  const first = shortest(search(), from, to, query.maxDepth);
  if (!first) return { paths: [], visited: budget.visited, truncated: budget.exhausted };
  const found = [first];
  const seenKeys = new Set([keyOf(first)]);
  const candidates: FoundPath[] = [];
  while (found.length < query.maxPaths && !budget.exhausted) {
    const previous = found[found.length - 1];
    for (let i = 0; i < previous.nodes.length - 1 && !budget.exhausted; i++) {
      const spurNode = previous.nodes[i];
      const rootNodes = previous.nodes.slice(0, i + 1);
      const bannedEdges = new Set<number>();
      for (const p of found) if (sameStart(p.nodes, rootNodes)) bannedEdges.add(p.steps[i].edge);
      const spur = shortest(search(bannedEdges, new Set(rootNodes.slice(0, -1))), spurNode, to, query.maxDepth - i);
      if (!spur) continue;
      const candidate = { steps: [...previous.steps.slice(0, i), ...spur.steps], nodes: [...rootNodes.slice(0, -1), ...spur.nodes] };
      const key = keyOf(candidate);
      if (!seenKeys.has(key)) {
        seenKeys.add(key);
        candidates.push(candidate);
      }
    }
    if (candidates.length === 0) break;
    candidates.sort((a, b) => a.steps.length - b.steps.length);
    found.push(candidates.shift()!);
  }
  return { paths: found, visited: budget.visited, truncated: budget.exhausted };
}

function sameStart(nodes: number[], prefix: number[]): boolean {
  if (nodes.length < prefix.length + 1) return false;
  for (let i = 0; i < prefix.length; i++) if (nodes[i] !== prefix[i]) return false;
  return true;
}
