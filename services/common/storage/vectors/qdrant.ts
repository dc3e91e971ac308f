// The production vector store: one Qdrant collection per dimensionality, shared by every
// organization (Qdrant's recommended multitenancy layout), with `organization_id` indexed as the
// tenant key. Every read, count and delete carries `organization_id` as a `must` condition, and
// point ids are derived from (organization, id), so two organizations using the same id get two
// distinct points and one can never overwrite or delete the other's.
//
// Stored payload: `{ organization_id, point_id, payload: { ...caller fields } }`. Nesting the
// caller's fields keeps them from ever colliding with the two keys the store relies on.

import { createHash } from 'node:crypto';
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import type {
  PayloadValue,
  StoredPoint,
  VectorFilter,
  VectorMatch,
  VectorPoint,
  VectorScanPage,
  VectorSearchOptions,
  VectorStore,
} from './interface.ts';
import { StoreUnavailableError } from '../unavailable.ts';
import {
  checkFilter,
  checkIds,
  checkOrganizationId,
  checkPoints,
  checkScanOptions,
  checkSearchOptions,
  normaliseVector,
} from './validate.ts';

export interface QdrantVectorStoreOptions {
  /** Base URL of Qdrant's REST API, e.g. `http://qdrant:6333`. */
  url: string;
  apiKey?: string;
  /** The collection is `${collectionPrefix}_${dimensions}`. */
  collectionPrefix: string;
  dimensions: number;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
}

/** Points per upsert request: keeps request bodies around a megabyte at 512 dimensions. */
const UPSERT_BATCH = 256;

// A fixed namespace for this platform's point ids (generated once; changing it would orphan
// every stored point).
const NAMESPACE = Buffer.from('5b0f3c1e9a6d4e27b8c3d41f0a2e6c97', 'hex');

/**
 * The Qdrant point id for (organizationId, id): a name-based UUID (RFC 9562 version 5: SHA-1
 * over a namespace and the name). The name is length-prefixed so that no two pairs share one.
 */
export function pointUuid(organizationId: string, id: string): string {
  const name = `${Buffer.byteLength(organizationId)}:${organizationId}/${id}`;
  const hash = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

type Condition = Schemas['Condition'];

/**
 * The Qdrant filter for one organization plus the caller's payload conditions, with the same
 * semantics as `matchesFilter`: `match` on a field holding an array matches when any element
 * equals, and an array condition becomes one `must` per value. Qdrant's `match` takes only
 * integers among numbers, so a fractional number is matched as the range [x, x].
 */
export function qdrantFilter(organizationId: string, filter?: VectorFilter): Schemas['Filter'] {
  const must: Condition[] = [{ key: 'organization_id', match: { value: organizationId } }];
  for (const [key, condition] of Object.entries(filter ?? {})) {
    const values = Array.isArray(condition) ? condition : [condition];
    for (const value of values) {
      const path = `payload.${key}`;
      if (typeof value === 'number' && !Number.isInteger(value)) {
        must.push({ key: path, range: { gte: value, lte: value } });
      } else {
        must.push({ key: path, match: { value } });
      }
    }
  }
  return { must };
}

function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const { status, data, message } = error as { status?: unknown; data?: unknown; message?: unknown };
    if (typeof status === 'number') {
      const detail = (data as { status?: { error?: unknown } } | undefined)?.status?.error;
      return `HTTP ${status}${typeof detail === 'string' ? `: ${detail.slice(0, 300)}` : ''}`;
    }
    const cause = (error as { cause?: { code?: unknown } }).cause;
    if (typeof cause?.code === 'string') return `${String(message)} (${cause.code})`;
    if (typeof message === 'string') return message;
  }
  return String(error);
}

/** Whether a failed request says Qdrant is unreachable, timing out or failing (retryable). */
function isUnavailable(error: unknown): boolean {
  const status = (error as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') return status === 408 || status === 429 || status >= 500;
  // No HTTP answer at all: fetch failed (refused, reset, DNS) or the request timed out.
  return error instanceof Error;
}

/** A point's organization, id and caller payload, from the stored payload layout above. */
function storedPoint(stored: Record<string, unknown> | null | undefined): StoredPoint | undefined {
  const organizationId = stored?.organization_id;
  const id = stored?.point_id;
  if (typeof organizationId !== 'string' || typeof id !== 'string') return undefined;
  return { organizationId, id, payload: (stored?.payload as Record<string, PayloadValue> | undefined) ?? {} };
}

export function createQdrantVectorStore(options: QdrantVectorStoreOptions): VectorStore {
  const { dimensions, collectionPrefix } = options;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65536) {
    throw new Error(`dimensions must be an integer from 1 to 65536, got ${dimensions}`);
  }
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(collectionPrefix)) {
    throw new Error('the Qdrant collection prefix may hold only letters, digits, "_" and "-"');
  }
  return new QdrantVectorStore(options);
}

class QdrantVectorStore implements VectorStore {
  readonly kind = 'qdrant';
  readonly dimensions: number;
  private readonly url: string;
  private readonly collection: string;
  private readonly client: QdrantClient;
  private closed = false;
  private ready: Promise<void> | undefined;

  constructor(options: QdrantVectorStoreOptions) {
    const { url, apiKey, collectionPrefix, dimensions, timeoutMs = 30_000 } = options;
    this.dimensions = dimensions;
    this.url = url;
    this.collection = `${collectionPrefix}_${dimensions}`;
    // The version check is a request at construction whose failure is only a console warning;
    // ping() is the readiness check instead.
    this.client = new QdrantClient({ url, apiKey, timeout: timeoutMs, checkCompatibility: false });
  }

  private async call<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const message = `Qdrant at ${this.url} (${operation} on collection "${this.collection}"): ${describe(error)}`;
      if (isUnavailable(error)) throw new StoreUnavailableError('vectors', message, { cause: error });
      throw new Error(`Qdrant ${operation} on collection "${this.collection}" failed: ${describe(error)}`, { cause: error });
    }
  }

  /** Creates the collection on first use; a failure is retried by the next call. */
  private ensureCollection(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the Qdrant vector store is closed'));
    this.ready ??= this.prepareCollection().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async prepareCollection(): Promise<void> {
    const { client, collection } = this;
    const { exists } = await this.call('collection check', () => client.collectionExists(collection));
    if (exists) await this.checkCollection();
    else await this.createCollection();
    // Creating an index that exists is a no-op in Qdrant, so this runs on every start.
    await this.call('payload index creation', () =>
      client.createPayloadIndex(collection, {
        field_name: 'organization_id',
        field_schema: { type: 'keyword', is_tenant: true },
        wait: true,
      }),
    );
  }

  private async createCollection(): Promise<void> {
    const { client, collection } = this;
    try {
      await client.createCollection(collection, { vectors: { size: this.dimensions, distance: 'Cosine' } });
    } catch (error) {
      // Another replica may have created it between the check and the create.
      const again = await this.call('collection check', () => client.collectionExists(collection));
      if (!again.exists) {
        throw new Error(`Qdrant could not create collection "${collection}": ${describe(error)}`, { cause: error });
      }
    }
  }

  /** An existing collection must hold vectors of this store's dimensions, compared by cosine. */
  private async checkCollection(): Promise<void> {
    const { client, collection, dimensions } = this;
    const info = await this.call('collection info', () => client.getCollection(collection));
    const vectors = info.config.params.vectors as { size?: number; distance?: string } | undefined;
    if (vectors?.size !== undefined && (vectors.size !== dimensions || vectors.distance !== 'Cosine')) {
      throw new Error(
        `Qdrant collection "${collection}" holds ${vectors.size}-dimensional ${vectors.distance} vectors; ` +
          `expected ${dimensions}-dimensional Cosine`,
      );
    }
  }

  async upsert(points: VectorPoint[]): Promise<void> {
    const checked = checkPoints(points, this.dimensions);
    if (checked.length === 0) return;
    await this.ensureCollection();
    for (let start = 0; start < checked.length; start += UPSERT_BATCH) {
      const batch = checked.slice(start, start + UPSERT_BATCH).map((point) => ({
        id: pointUuid(point.organizationId, point.id),
        vector: Array.from(point.vector),
        payload: { organization_id: point.organizationId, point_id: point.id, payload: point.payload },
      }));
      await this.call('upsert', () => this.client.upsert(this.collection, { wait: true, points: batch }));
    }
  }

  async delete(organizationId: string, ids: string[]): Promise<void> {
    checkOrganizationId(organizationId);
    const checked = checkIds(ids);
    if (checked.length === 0) return;
    await this.ensureCollection();
    const filter = qdrantFilter(organizationId);
    const points: Condition = { has_id: checked.map((id) => pointUuid(organizationId, id)) };
    filter.must = [...(filter.must as Condition[]), points];
    await this.call('delete', () => this.client.delete(this.collection, { wait: true, filter }));
  }

  async deleteOrganization(organizationId: string): Promise<void> {
    checkOrganizationId(organizationId);
    await this.ensureCollection();
    await this.call('delete', () => this.client.delete(this.collection, { wait: true, filter: qdrantFilter(organizationId) }));
  }

  async search(organizationId: string, vector: Float32Array | number[], options: VectorSearchOptions): Promise<VectorMatch[]> {
    checkOrganizationId(organizationId);
    const query = normaliseVector(vector, this.dimensions, 'query vector');
    const { limit, filter } = checkSearchOptions(options);
    await this.ensureCollection();
    const response = await this.call('query', () =>
      this.client.query(this.collection, {
        query: Array.from(query),
        filter: qdrantFilter(organizationId, filter),
        limit,
        with_payload: true,
      }),
    );
    return response.points.map((point) => {
      const stored = point.payload as { point_id?: unknown; payload?: Record<string, PayloadValue> } | null;
      return {
        id: String(stored?.point_id ?? point.id),
        score: Math.max(-1, Math.min(1, point.score)),
        payload: stored?.payload ?? {},
      };
    });
  }

  async count(organizationId: string, filter?: VectorFilter): Promise<number> {
    checkOrganizationId(organizationId);
    const checked = checkFilter(filter);
    await this.ensureCollection();
    const response = await this.call('count', () =>
      this.client.count(this.collection, { filter: qdrantFilter(organizationId, checked), exact: true }),
    );
    return response.count;
  }

  async retrieve(organizationId: string, ids: string[]): Promise<StoredPoint[]> {
    checkOrganizationId(organizationId);
    const checked = [...new Set(checkIds(ids))];
    if (checked.length === 0) return [];
    await this.ensureCollection();
    const points = await this.call('retrieve', () =>
      this.client.retrieve(this.collection, {
        ids: checked.map((id) => pointUuid(organizationId, id)),
        with_payload: true,
        with_vector: false,
      }),
    );
    return points
      .map((point) => storedPoint(point.payload))
      .filter((point): point is StoredPoint => point?.organizationId === organizationId);
  }

  async scan(options: { after?: string; limit: number }): Promise<VectorScanPage> {
    const { after, limit } = checkScanOptions(options);
    await this.ensureCollection();
    const page = await this.call('scroll', () =>
      this.client.scroll(this.collection, { limit, offset: after, with_payload: true, with_vector: false }),
    );
    const next = page.next_page_offset;
    return {
      points: page.points.map((point) => storedPoint(point.payload)).filter((point): point is StoredPoint => !!point),
      next: next === null || next === undefined ? undefined : String(next),
    };
  }

  async ping(): Promise<void> {
    await this.ensureCollection();
    await this.call('ping', () => this.client.getCollection(this.collection));
  }

  async close(): Promise<void> {
    // The REST client holds no connections of its own to release.
    this.closed = true;
  }
}
