// One organization's graph in memory: entities by id and by name, and the live relationships as
// integer adjacency lists with each one's citations, so that paths and impact walks over hundreds
// of thousands of edges, and their answers, touch no store. Built and kept fresh from the records
// by index-registry.ts; records are applied in any order and only when newer (by `seq`) than what
// the index holds for them.
//
// The citations are held here because reading them from the store was most of an impact query's
// time: 100 reached entities cite about 100 relationships, one indexed read each, and their JSON
// parsed, where the walk itself takes a fraction of a millisecond (docs/graph.md, Benchmark). They
// are the arrays of the records read anyway to build the index, so they cost memory only (about
// 100 MiB for 500,000 relationships of one citation each), and they are exactly as fresh as the
// edges they belong to, since every citation change is a relationship write with its own `seq`.
import type { CitationRecord, EntityRecord, RelationshipRecord } from './records.ts';

/** One relationship of a walk, and whether it was walked from object to subject. */
export interface Step {
  edge: number;
  reversed: boolean;
}

export interface EdgeView {
  relationshipId: string;
  subjectId: string;
  predicate: string;
  objectId: string;
}

/** An edge with what its record says of it (the citations, when it was created and changed), and its ends' names. */
export interface RelationshipView extends EdgeView {
  subjectName: string;
  objectName: string;
  citations: CitationRecord[];
  createdAt: number;
  updatedAt: number;
}

const NO_CITATIONS: CitationRecord[] = [];

export class GraphIndex {
  readonly organizationId: string;
  private entityById = new Map<string, EntityRecord>();
  private entityByName = new Map<string, string>();
  private entitySeq = new Map<string, number>();
  private nodeOf = new Map<string, number>();
  private nodeIds: string[] = [];
  /** The live entity of each node (none for a node only edges name, or one merged away). */
  private entityAt: (EntityRecord | undefined)[] = [];
  private out: number[][] = [];
  private in: number[][] = [];
  private edgeS: number[] = [];
  private edgeO: number[] = [];
  private edgeP: number[] = [];
  private edgeRel: string[] = [];
  private edgeCitations: CitationRecord[][] = [];
  private edgeCreated: number[] = [];
  private edgeUpdated: number[] = [];
  private freeEdges: number[] = [];
  private edgeOf = new Map<string, number>();
  private relationshipSeq = new Map<string, number>();
  private predicates: string[] = [];
  private predicateOf = new Map<string, number>();

  constructor(organizationId: string) {
    this.organizationId = organizationId;
  }

  get entityCount(): number {
    return this.entityById.size;
  }

  get relationshipCount(): number {
    return this.edgeOf.size;
  }

  applyEntity(record: EntityRecord): void {
    const held = this.entitySeq.get(record.entityId);
    if (held !== undefined && held >= record.seq) return;
    this.entitySeq.set(record.entityId, record.seq);
    const previous = this.entityById.get(record.entityId);
    if (previous) {
      for (const name of previous.names) if (this.entityByName.get(name) === record.entityId) this.entityByName.delete(name);
    }
    if (record.mergedInto !== undefined) {
      this.entityById.delete(record.entityId);
      const n = this.nodeOf.get(record.entityId);
      if (n !== undefined) this.entityAt[n] = undefined;
      return;
    }
    this.entityById.set(record.entityId, record);
    for (const name of record.names) this.entityByName.set(name, record.entityId);
    this.entityAt[this.node(record.entityId)] = record;
  }

  applyRelationship(record: RelationshipRecord): void {
    const held = this.relationshipSeq.get(record.relationshipId);
    if (held !== undefined && held >= record.seq) return;
    this.relationshipSeq.set(record.relationshipId, record.seq);
    const existing = this.edgeOf.get(record.relationshipId);
    if (record.deleted) {
      if (existing !== undefined) this.removeEdge(existing);
      return;
    }
    if (existing !== undefined) {
      this.setRecordOf(existing, record);
      return;
    }
    const edge = this.freeEdges.pop() ?? this.edgeRel.length;
    const s = this.node(record.subjectId);
    const o = this.node(record.objectId);
    this.edgeS[edge] = s;
    this.edgeO[edge] = o;
    this.edgeP[edge] = this.predicate(record.predicate);
    this.edgeRel[edge] = record.relationshipId;
    this.setRecordOf(edge, record);
    this.edgeOf.set(record.relationshipId, edge);
    this.out[s].push(edge);
    this.in[o].push(edge);
  }

  private setRecordOf(edge: number, record: RelationshipRecord): void {
    this.edgeCitations[edge] = record.citations;
    this.edgeCreated[edge] = record.createdAt;
    this.edgeUpdated[edge] = record.updatedAt;
  }

  private node(entityId: string): number {
    let n = this.nodeOf.get(entityId);
    if (n === undefined) {
      n = this.nodeIds.length;
      this.nodeOf.set(entityId, n);
      this.nodeIds.push(entityId);
      this.out.push([]);
      this.in.push([]);
    }
    return n;
  }

  private predicate(name: string): number {
    let p = this.predicateOf.get(name);
    if (p === undefined) {
      p = this.predicates.length;
      this.predicates.push(name);
      this.predicateOf.set(name, p);
    }
    return p;
  }

  private removeEdge(edge: number): void {
    dropFrom(this.out[this.edgeS[edge]], edge);
    dropFrom(this.in[this.edgeO[edge]], edge);
    this.edgeOf.delete(this.edgeRel[edge]);
    this.edgeRel[edge] = '';
    this.edgeCitations[edge] = NO_CITATIONS;
    this.freeEdges.push(edge);
  }

  /** The entity an id, name or alias refers to. */
  resolve(ref: string, normalized: string): EntityRecord | undefined {
    return this.entityById.get(ref) ?? this.named(normalized);
  }

  /** The entity a name or alias (normalized, records.ts normalizeName) belongs to; ids do not count. */
  named(normalized: string): EntityRecord | undefined {
    const entityId = this.entityByName.get(normalized);
    return entityId === undefined ? undefined : this.entityById.get(entityId);
  }

  entity(entityId: string): EntityRecord | undefined {
    return this.entityById.get(entityId);
  }

  entities(): IterableIterator<EntityRecord> {
    return this.entityById.values();
  }

  degree(entityId: string): number {
    const n = this.nodeOf.get(entityId);
    return n === undefined ? 0 : this.degreeOfNode(n);
  }

  /** The live entity of a node, by its number (what walks answer with). */
  entityOfNode(node: number): EntityRecord | undefined {
    return this.entityAt[node];
  }

  degreeOfNode(node: number): number {
    return this.out[node].length + this.in[node].length;
  }

  edge(edge: number): EdgeView {
    return {
      relationshipId: this.edgeRel[edge],
      subjectId: this.nodeIds[this.edgeS[edge]],
      predicate: this.predicates[this.edgeP[edge]],
      objectId: this.nodeIds[this.edgeO[edge]],
    };
  }

  /** The edge as its latest record has it, citations included, with its ends' names. */
  relationship(edge: number): RelationshipView {
    const s = this.edgeS[edge];
    const o = this.edgeO[edge];
    return {
      relationshipId: this.edgeRel[edge],
      subjectId: this.nodeIds[s],
      predicate: this.predicates[this.edgeP[edge]],
      objectId: this.nodeIds[o],
      subjectName: this.entityAt[s]?.name ?? this.nodeIds[s],
      objectName: this.entityAt[o]?.name ?? this.nodeIds[o],
      citations: this.edgeCitations[edge],
      createdAt: this.edgeCreated[edge],
      updatedAt: this.edgeUpdated[edge],
    };
  }

  /** Relationships of an entity one way, at most `limit`, and how many there are. */
  neighbours(entityId: string, direction: 'out' | 'in', limit: number): { edges: number[]; total: number } {
    const n = this.nodeOf.get(entityId);
    if (n === undefined) return { edges: [], total: 0 };
    const list = direction === 'out' ? this.out[n] : this.in[n];
    return { edges: list.slice(0, limit), total: list.length };
  }

  /** Predicate indexes of names, for walks; undefined when no filter (empty list). */
  predicateFilter(names: string[]): Set<number> | undefined {
    if (names.length === 0) return undefined;
    return new Set(names.map((n) => this.predicateOf.get(n) ?? -1));
  }

  predicateIndex(name: string): number | undefined {
    return this.predicateOf.get(name);
  }

  nodeIndex(entityId: string): number | undefined {
    return this.nodeOf.get(entityId);
  }

  nodeId(node: number): string {
    return this.nodeIds[node];
  }

  outEdges(node: number): readonly number[] {
    return this.out[node];
  }

  inEdges(node: number): readonly number[] {
    return this.in[node];
  }

  subjectOf(edge: number): number {
    return this.edgeS[edge];
  }

  objectOf(edge: number): number {
    return this.edgeO[edge];
  }

  predicateOfEdge(edge: number): number {
    return this.edgeP[edge];
  }

  predicateName(p: number): string {
    return this.predicates[p];
  }
}

/** Removes one value from an unordered list in constant time after finding it. */
function dropFrom(list: number[], value: number): void {
  const i = list.indexOf(value);
  if (i < 0) return;
  list[i] = list[list.length - 1];
  list.pop();
}
