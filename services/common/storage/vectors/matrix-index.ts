// The in-memory half of the embedded vector store: one organization's unit vectors as rows of a
// contiguous float32 matrix, scored against a query by a small WebAssembly SIMD kernel.
//
// Why WebAssembly: exact search over 100,000 x 512 floats is bound by the dot products. A plain
// JavaScript loop (unrolled) takes about 30 ms on a two-core machine; four-lane f32x4 arithmetic
// takes about 6.5 ms, close to memory bandwidth. Each organization gets its own
// WebAssembly.Memory (matrix, query and score buffer), so growing one organization never copies
// another's rows, and a search can only ever read the rows of the organization it was asked for.

import { AnnIndex } from './ann-index.ts';
import type { PayloadValue, VectorFilter, VectorMatch } from './interface.ts';
import { copyPayload, matchesFilter } from './validate.ts';

/*
 * The kernel, in WebAssembly text format. Assembled with wabt 1.0.39
 * (`wat2wasm dot.wat`); the bytes below are that output, base64-encoded.
 *
 * (module
 *   (import "env" "memory" (memory 1))
 *   ;; scores(matrix, query, rows, stride, out): out[r] = sum_j matrix[r*stride + j] * query[j]
 *   ;; stride is a multiple of 8 floats: each inner iteration consumes two f32x4 lanes.
 *   (func (export "scores") (param $m i32) (param $q i32) (param $rows i32) (param $stride i32) (param $out i32)
 *     (local $qend i32) (local $p i32) (local $qp i32) (local $a v128) (local $b v128) (local $end i32)
 *     (local.set $end (i32.add (local.get $out) (i32.shl (local.get $rows) (i32.const 2))))
 *     (local.set $qend (i32.add (local.get $q) (i32.shl (local.get $stride) (i32.const 2))))
 *     (local.set $p (local.get $m))
 *     (block $done
 *       (loop $row
 *         (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
 *         (local.set $a (v128.const i32x4 0 0 0 0))
 *         (local.set $b (v128.const i32x4 0 0 0 0))
 *         (local.set $qp (local.get $q))
 *         (loop $col
 *           (local.set $a (f32x4.add (local.get $a) (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $qp)))))
 *           (local.set $b (f32x4.add (local.get $b) (f32x4.mul (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $qp)))))
 *           (local.set $p (i32.add (local.get $p) (i32.const 32)))
 *           (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
 *           (br_if $col (i32.lt_u (local.get $qp) (local.get $qend))))
 *         (local.set $a (f32x4.add (local.get $a) (local.get $b)))
 *         (f32.store (local.get $out)
 *           (f32.add
 *             (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
 *             (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (br $row))))
 * )
 */
const KERNEL_BASE64 =
  'AGFzbQEAAAABCQFgBX9/f39/AAIPAQNlbnYGbWVtb3J5AgABAwIBAAcKAQZzY29yZXMAAArOAQHLAQMDfwJ7AX8gBCACQQJ0aiEKIAEgA0ECdGohBSAAIQYCQANAIAQgCk8NAf0MAAAAAAAAAAAAAAAAAAAAACEI/QwAAAAAAAAAAAAAAAAAAAAAIQkgASEHA0AgCCAG/QAEACAH/QAEAP3mAf3kASEIIAkgBv0ABBAgB/0ABBD95gH95AEhCSAGQSBqIQYgB0EgaiEHIAcgBUkNAAsgCCAJ/eQBIQggBCAI/R8AIAj9HwGSIAj9HwIgCP0fA5KSOAIAIARBBGohBAwACwsL';

// @types/node does not declare WebAssembly (TypeScript has it only in its DOM libraries, which
// this project does not load); these are the members used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmModule {
  readonly kind?: 'wasm-module';
}
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
};

let kernelModule: WasmModule | undefined;
function kernel(): WasmModule {
  kernelModule ??= new WebAssembly.Module(Buffer.from(KERNEL_BASE64, 'base64'));
  return kernelModule;
}

type ScoresFn = (matrix: number, query: number, rows: number, stride: number, out: number) => void;

const PAGE = 65536;
// 32-bit WebAssembly addresses at most 4 GiB; V8 allows all of it on 64-bit hosts.
const MAX_PAGES = 65536;
const MIN_CAPACITY = 64;
/**
 * Estimated JavaScript heap per row of capacity: its id, its parsed payload (namespace, key, a
 * few tags, a time) and its entry in the id map; 230 to 280 bytes measured on Node 24.
 */
const ROW_HEAP_BYTES = 300;

/** One organization's vectors. Rows are dense: deleting moves the last row into the gap. */
export class MatrixIndex {
  readonly dimensions: number;
  /** Row length in floats, padded to a multiple of 8 with zeros for the kernel. */
  readonly stride: number;
  private capacity = 0;
  private rows = 0;
  private memory!: WasmMemory;
  private scores!: ScoresFn;
  private floats!: Float32Array;
  private readonly ids: string[] = [];
  private readonly payloads: Record<string, PayloadValue>[] = [];
  private readonly rowOf = new Map<string, number>();
  /** Rows from which searches use the approximate index (ann-index.ts); Infinity never. */
  private readonly approximateFrom: number;
  private ann?: AnnIndex;

  constructor(dimensions: number, initialCapacity = MIN_CAPACITY, approximateFrom = Number.POSITIVE_INFINITY) {
    this.dimensions = dimensions;
    this.approximateFrom = approximateFrom;
    this.stride = Math.ceil(dimensions / 8) * 8;
    this.allocate(Math.max(MIN_CAPACITY, initialCapacity));
  }

  get size(): number {
    return this.rows;
  }

  /**
   * Estimated bytes held (the memory budget, index-budget.ts): the WebAssembly memory (matrix,
   * query and scores, allocated for the whole capacity), the rows' ids and payloads, and the
   * approximate index. Known from the first row: capacity is allocated before rows are loaded.
   */
  estimatedBytes(): number {
    return this.memory.buffer.byteLength + this.capacity * ROW_HEAP_BYTES + (this.ann?.estimatedBytes() ?? 0);
  }

  /** The index is being dropped: stops a background build of its approximate index. */
  close(): void {
    this.ann?.stop();
  }

  // Layout in bytes: [query: stride floats][matrix: capacity rows][scores: capacity floats].
  // The score buffer is scratch, so moving it when the matrix grows costs nothing.
  private get matrixOffset(): number {
    return this.stride * 4;
  }

  private get scoresOffset(): number {
    return this.matrixOffset + this.capacity * this.stride * 4;
  }

  private bytesFor(capacity: number): number {
    return this.stride * 4 + capacity * this.stride * 4 + capacity * 4;
  }

  private pagesFor(capacity: number): number {
    const pages = Math.ceil(this.bytesFor(capacity) / PAGE);
    if (pages > MAX_PAGES) {
      throw new Error(
        `the embedded vector store cannot hold ${capacity} vectors of ${this.dimensions} dimensions ` +
          'for one organization (4 GiB limit); configure Qdrant for this size',
      );
    }
    return pages;
  }

  /** Fresh memory of `capacity` rows holding the current rows (used to start and to shrink). */
  private allocate(capacity: number): void {
    const memory = new WebAssembly.Memory({ initial: this.pagesFor(capacity), maximum: MAX_PAGES });
    const instance = new WebAssembly.Instance(kernel(), { env: { memory } });
    const floats = new Float32Array(memory.buffer);
    if (this.rows > 0) {
      const start = this.matrixOffset / 4;
      floats.set(this.floats.subarray(start, start + this.rows * this.stride), start);
    }
    this.memory = memory;
    this.scores = instance.exports.scores as ScoresFn;
    this.floats = floats;
    this.capacity = capacity;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const needed = this.pagesFor(capacity) - this.memory.buffer.byteLength / PAGE;
    if (needed > 0) this.memory.grow(needed);
    // Growing detaches the old ArrayBuffer; rows stay where they were.
    this.floats = new Float32Array(this.memory.buffer);
    this.capacity = capacity;
  }

  private writeRow(row: number, vector: Float32Array): void {
    const start = (this.matrixOffset >> 2) + row * this.stride;
    this.floats.set(vector, start);
    // The padding may hold an old score buffer's bytes after growth; the query's padding is
    // zero, but a stale NaN times zero is still NaN, so clear it.
    if (this.stride > this.dimensions) this.floats.fill(0, start + this.dimensions, start + this.stride);
  }

  /** Inserts or replaces. `vector` must be L2-normalised and of `dimensions` length. */
  set(id: string, vector: Float32Array, payload: Record<string, PayloadValue>): void {
    let row = this.rowOf.get(id);
    if (row === undefined) {
      if (this.rows === this.capacity) this.grow();
      row = this.rows++;
      this.rowOf.set(id, row);
      this.ids[row] = id;
    }
    this.writeRow(row, vector);
    this.payloads[row] = payload;
    this.ann?.set(id, vector);
  }

  /** Writes a row straight from its stored bytes (little-endian float32), for loading. */
  setBytes(id: string, bytes: Uint8Array, payload: Record<string, PayloadValue>): void {
    const aligned = new Float32Array(this.dimensions);
    new Uint8Array(aligned.buffer).set(bytes.subarray(0, this.dimensions * 4));
    this.set(id, aligned, payload);
  }

  delete(id: string): boolean {
    const row = this.rowOf.get(id);
    if (row === undefined) return false;
    this.rowOf.delete(id);
    this.ann?.delete(id);
    const last = --this.rows;
    if (row !== last) {
      const base = this.matrixOffset >> 2;
      this.floats.copyWithin(base + row * this.stride, base + last * this.stride, base + (last + 1) * this.stride);
      const movedId = this.ids[last]!;
      this.ids[row] = movedId;
      this.payloads[row] = this.payloads[last]!;
      this.rowOf.set(movedId, row);
    }
    this.ids.length = last;
    this.payloads.length = last;
    // WebAssembly memory cannot shrink in place; after large deletions move to a smaller one.
    if (this.capacity > MIN_CAPACITY && this.rows < this.capacity / 4) {
      this.allocate(Math.max(MIN_CAPACITY, this.capacity / 2));
    }
    return true;
  }

  count(filter?: VectorFilter): number {
    if (!filter || Object.keys(filter).length === 0) return this.rows;
    let n = 0;
    for (let row = 0; row < this.rows; row++) if (matchesFilter(this.payloads[row]!, filter)) n++;
    return n;
  }

  /** A copy of the stored vector of `id` (a view would detach when the memory grows). */
  private vectorOf(id: string): Float32Array | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined) return undefined;
    const start = (this.matrixOffset >> 2) + row * this.stride;
    return this.floats.slice(start, start + this.dimensions);
  }

  /**
   * Dot product of the query (already in the kernel's query buffer) with a stored row, by the
   * kernel: the same arithmetic as the scan, so an approximate search's scores are the exact
   * search's to the bit, and four lanes at a time (a JavaScript loop over 400 candidates was a
   * tenth of a search's CPU at 100,000 memories).
   */
  private rowScore(row: number): number {
    this.scores(this.matrixOffset + row * this.stride * 4, 0, 1, this.stride, this.scoresOffset);
    return this.floats[this.scoresOffset >> 2]!;
  }

  /**
   * Candidates from the approximate index scored exactly; undefined when the index is not built
   * yet or too few candidates pass the filter (the caller then scans every row).
   */
  private approximate(query: Float32Array, limit: number, filter?: VectorFilter): VectorMatch[] | undefined {
    if (!this.ann && this.rows >= this.approximateFrom) {
      this.ann = new AnnIndex(this.dimensions);
      this.ann.build(this.ids.slice(0, this.rows), (id) => this.vectorOf(id));
    }
    if (!this.ann?.ready) return undefined;
    const useFilter = filter !== undefined && Object.keys(filter).length > 0;
    const scored: { score: number; row: number }[] = [];
    const candidates = this.ann.search(query, Math.max(8 * limit, 128));
    this.floats.set(query, 0);
    for (const id of candidates) {
      const row = this.rowOf.get(id);
      if (row === undefined || (useFilter && !matchesFilter(this.payloads[row]!, filter))) continue;
      scored.push({ score: this.rowScore(row), row });
    }
    // A selective filter (most candidates fail it) would leave the true top rows outside the
    // candidates: scan instead.
    if (scored.length < limit || scored.length < candidates.length / 2) return undefined;
    scored.sort((a, b) => b.score - a.score || a.row - b.row);
    return scored.slice(0, limit).map(({ score, row }) => ({
      id: this.ids[row]!,
      score: Math.max(-1, Math.min(1, score)),
      payload: copyPayload(this.payloads[row]!),
    }));
  }

  /**
   * Top `limit` rows by dot product with the unit `query`, best first: exact below
   * `approximateFrom` rows, approximate candidates with exact scores above (ann-index.ts).
   */
  search(query: Float32Array, limit: number, filter?: VectorFilter): VectorMatch[] {
    if (this.rows === 0) return [];
    const approximate = this.approximate(query, limit, filter);
    if (approximate) return approximate;
    this.floats.set(query, 0);
    this.scores(this.matrixOffset, 0, this.rows, this.stride, this.scoresOffset);
    const scores = this.floats.subarray(this.scoresOffset >> 2, (this.scoresOffset >> 2) + this.rows);
    const useFilter = filter !== undefined && Object.keys(filter).length > 0;
    const heap = new TopK(limit);
    for (let row = 0; row < this.rows; row++) {
      const score = scores[row]!;
      // Filters are checked only for rows that would enter the top k, which is most rows for
      // a selective filter but few for a broad one.
      if (!heap.accepts(score)) continue;
      if (useFilter && !matchesFilter(this.payloads[row]!, filter)) continue;
      heap.push(score, row);
    }
    return heap.sorted().map(({ score, row }) => ({
      id: this.ids[row]!,
      // Rounding can carry a unit vector's self-similarity a hair past 1.
      score: Math.max(-1, Math.min(1, score)),
      payload: copyPayload(this.payloads[row]!),
    }));
  }
}

/** A bounded min-heap keeping the `k` best (score, row) pairs seen. */
class TopK {
  private readonly k: number;
  private readonly scores: Float64Array;
  private readonly rows: Int32Array;
  private n = 0;

  constructor(k: number) {
    this.k = k;
    this.scores = new Float64Array(k);
    this.rows = new Int32Array(k);
  }

  accepts(score: number): boolean {
    return this.n < this.k || score > this.scores[0]!;
  }

  push(score: number, row: number): void {
    if (this.n < this.k) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.scores[parent]! <= score) break;
        this.scores[i] = this.scores[parent]!;
        this.rows[i] = this.rows[parent]!;
        i = parent;
      }
      this.scores[i] = score;
      this.rows[i] = row;
      return;
    }
    // Replace the minimum at the root and sift down.
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.n) break;
      const right = left + 1;
      const child = right < this.n && this.scores[right]! < this.scores[left]! ? right : left;
      if (this.scores[child]! >= score) break;
      this.scores[i] = this.scores[child]!;
      this.rows[i] = this.rows[child]!;
      i = child;
    }
    this.scores[i] = score;
    this.rows[i] = row;
  }

  sorted(): { score: number; row: number }[] {
    const out: { score: number; row: number }[] = [];
    for (let i = 0; i < this.n; i++) out.push({ score: this.scores[i]!, row: this.rows[i]! });
    return out.sort((a, b) => b.score - a.score || a.row - b.row);
  }
}
