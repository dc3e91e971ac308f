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

/** One shortest path from `from` to `to` of at most `depth` steps, or undefined. */
function shortest(s: Search, from: number, to: number, depth: number): FoundPath | undefined {
  if (from === to) return { steps: [], nodes: [from] };
  const parent = new Map<number, Step>();
  const seen = new Set<number>([from, ...s.bannedNodes]);
  let frontier = [from];
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: number[] = [];
    for (const node of frontier) {
      if (++s.budget.visited > s.budget.max) {
        s.budget.exhausted = true;
        return undefined;
      }
      const reach = (edge: number, neighbour: number, reversed: boolean): boolean => {
        if (seen.has(neighbour) || s.bannedEdges.has(edge)) return false;
        if (s.query.predicates && !s.query.predicates.has(s.graph.predicateOfEdge(edge))) return false;
        seen.add(neighbour);
        parent.set(neighbour, { edge, reversed });
        next.push(neighbour);
        return neighbour === to;
      };
      for (const edge of s.graph.outEdges(node)) if (reach(edge, s.graph.objectOf(edge), false)) return unwind(s.graph, parent, from, to);
      if (s.query.forward) continue;
      for (const edge of s.graph.inEdges(node)) if (reach(edge, s.graph.subjectOf(edge), true)) return unwind(s.graph, parent, from, to);
    }
    frontier = next;
  }
  return undefined;
}

function unwind(graph: GraphIndex, parent: Map<number, Step>, from: number, to: number): FoundPath {
  const steps: Step[] = [];
  const nodes = [to];
  let node = to;
  while (node !== from) {
    const step = parent.get(node)!;
    steps.push(step);
    node = step.reversed ? graph.objectOf(step.edge) : graph.subjectOf(step.edge);
    nodes.push(node);
  }
  return { steps: steps.reverse(), nodes: nodes.reverse() };
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
