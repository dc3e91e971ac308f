// An approximate nearest-neighbour index (HNSW, from the maintained `usearch` package, whose npm
// package ships prebuilt binaries) over one organization's rows of a MatrixIndex, used once the
// organization is large enough that the exact scan dominates a search.
//
// Why: exact search reads every row. At 100,000 512-dimensional vectors that is 200 MB per query,
// about 6 ms on a quiet two-core machine and many times more when several searches (or other
// processes) compete for memory bandwidth; at 1,000,000 it is 2 GB per query. HNSW visits a few
// thousand rows. The graph holds 8-bit quantized copies of the vectors (512 bytes each) and
// answers a candidate list; the matrix's exact float vectors then score the candidates, so the
// scores returned are exact cosines and only the choice of candidates is approximate (measured
// against exact search in test/integration/vectors-ann.test.ts and the search benchmark).
//
// The graph is built in the background, a slice at a time between other work, while the exact
// scan keeps answering; after that every write goes to both.
import usearch from 'usearch';

/**
 * HNSW parameters: 16 links per node, and the candidate lists of insertion and search. A search
 * list of 512 found every exact top-10 neighbour on clustered 512-dimensional test data where
 * 128 found 90% (test/contract/vectors-adapters.test.ts); it costs about a millisecond.
 */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 64;
const EXPANSION_SEARCH = 512;
/**
 * Rows added to the graph per slice of the background build, by two native threads: a slice
 * holds the event loop for about 50 ms on a quiet two-core machine.
 */
const BUILD_SLICE = 256;
const BUILD_THREADS = 2;
/**
 * Estimated bytes per point, besides its 8-bit vector: its level-0 links (2 x CONNECTIVITY of
 * 4 bytes) and node header in usearch, and its two entries in the id maps here. With the slot
 * table (16 bytes per slot of capacity) this matched the resident growth of a 50,000-point graph
 * of 512 dimensions (870 bytes a point). Removed points' slots are reused by later additions.
 */
const NODE_BYTES = 2 * CONNECTIVITY * 4 + 48;
const ID_MAP_BYTES = 160;
const SLOT_BYTES = 16;

export class AnnIndex {
  private readonly index: InstanceType<typeof usearch.Index>;
  /**
   * Stable numeric keys of the point ids (rows move in the matrix, keys do not), and the id of
   * each key by its number: an array read per candidate instead of a bigint-keyed map.
   */
  private readonly keyOf = new Map<string, number>();
  private readonly idOf: (string | undefined)[] = [];
  private nextKey = 1;
  private building = false;
  /** Points the background build will have added when done. */
  private planned = 0;
  private stopped = false;
  /** True once every row present when the build started (and every later write) is in the graph. */
  ready = false;

  constructor(dimensions: number) {
    this.index = new usearch.Index({
      dimensions,
      metric: 'cos',
      quantization: 'i8',
      connectivity: CONNECTIVITY,
      expansion_add: EXPANSION_ADD,
      expansion_search: EXPANSION_SEARCH,
    } as ConstructorParameters<typeof usearch.Index>[0]);
  }

  get size(): number {
    return this.index.size();
  }

  /** Estimated bytes held (the memory budget), counting the points a running build will add. */
  estimatedBytes(): number {
    const points = Math.max(this.index.size(), this.planned);
    const dimensions = this.index.dimensions();
    return points * (dimensions + NODE_BYTES + ID_MAP_BYTES) + Math.max(this.index.capacity(), points) * SLOT_BYTES;
  }

  /** Stops a running build (the index is being dropped): its remaining slices do nothing. */
  stop(): void {
    this.stopped = true;
  }

  /** Adds or replaces a point. */
  set(id: string, vector: Float32Array): void {
    const old = this.keyOf.get(id);
    if (old !== undefined) {
      this.index.remove(BigInt(old));
      this.idOf[old] = undefined;
    }
    const key = this.nextKey++;
    this.keyOf.set(id, key);
    this.idOf[key] = id;
    this.index.add(BigInt(key), vector);
  }

  delete(id: string): void {
    const key = this.keyOf.get(id);
    if (key === undefined) return;
    this.index.remove(BigInt(key));
    this.keyOf.delete(id);
    this.idOf[key] = undefined;
  }

  /** The ids of about the `k` nearest points, nearest first. */
  search(query: Float32Array, k: number): string[] {
    const found = this.index.search(query, Math.min(k, this.index.size()), 1);
    const ids: string[] = [];
    for (const key of found.keys) {
      const id = this.idOf[Number(key)];
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /**
   * Adds the points `ids` a slice at a time, yielding to the event loop between slices, each
   * with its vector at that moment (`vectorOf`, undefined once deleted); writes made meanwhile
   * go through set/delete, and a point already added is skipped.
   */
  build(ids: string[], vectorOf: (id: string) => Float32Array | undefined): void {
    if (this.building || this.ready) return;
    this.building = true;
    this.planned = ids.length;
    let next = 0;
    const slice = () => {
      if (this.stopped) return;
      const end = Math.min(ids.length, next + BUILD_SLICE);
      const keys: number[] = [];
      const vectors: Float32Array[] = [];
      for (; next < end; next++) {
        const id = ids[next]!;
        const vector = this.keyOf.has(id) ? undefined : vectorOf(id);
        if (!vector) continue;
        const key = this.nextKey++;
        this.keyOf.set(id, key);
        this.idOf[key] = id;
        keys.push(key);
        vectors.push(vector);
      }
      if (keys.length) {
        const matrix = new Float32Array(vectors.length * vectors[0]!.length);
        for (const [i, v] of vectors.entries()) matrix.set(v, i * v.length);
        this.index.add(BigUint64Array.from(keys, BigInt), matrix, BUILD_THREADS);
      }
      if (next < ids.length) setImmediate(slice);
      else {
        this.building = false;
        this.ready = true;
      }
    };
    setImmediate(slice);
  }
}
