// A bound on what one process keeps in memory, per organization, to answer searches: the Brain's
// lexical indexes (services/brain/search/index-registry.ts) and the embedded vector store's
// matrices with their HNSW graphs (vectors/embedded.ts). Each is a cache of a store (the records
// store, the SQLite vectors file), built on an organization's first use; without a bound a process
// would keep every organization it ever served until it restarts (BRAIN_INDEX_MEMORY_MB).
//
// Every structure is admitted with an estimate of its bytes (each owner's `estimatedBytes`). When
// their sum passes the limit, whole organizations are evicted: first any that alone needs more
// than the limit, then the least recently used. Never evicted: the most recently used
// organization (so one organization larger than the limit is still served, alone) and any
// organization with a call in flight (`holding`, around every Brain call). Evicting only drops
// the owners' references: nothing is torn down under a reader, and the next use rebuilds the
// structure from its store exactly as on a cold start.
import type { Logger } from '../log.ts';

export type IndexKind = 'lexical' | 'vectors';
export const INDEX_KINDS: readonly IndexKind[] = ['lexical', 'vectors'];

/** A structure kept for one organization, as its owner describes it to the budget. */
export interface ResidentIndex {
  kind: IndexKind;
  /** Estimated bytes it holds now; cheap, as it is read on every resize. */
  bytes(): number;
  /** Drops it (its owner forgets it); the next use rebuilds it from the store. */
  evict(): void;
}

/** What the owner of an admitted structure tells the budget. */
export interface Residency {
  /** The structure grew or shrank: re-reads its bytes and evicts others if over the limit. */
  resized(): void;
  /** The owner dropped it (organization deleted, index rebuilt, store closed). Idempotent. */
  release(): void;
  /** False once evicted or released. */
  readonly resident: boolean;
}

export interface IndexBudgetOptions {
  /** Bytes the structures may hold together; Infinity: no bound. */
  limitBytes: number;
  /** Where an organization that alone exceeds the limit is reported (once) and evictions logged. */
  logger?: Logger;
}

export interface IndexBudgetUsage {
  limitBytes: number;
  /** Estimated bytes held, by kind of structure. */
  bytes: Record<IndexKind, number>;
  /** Organizations with at least one structure held. */
  organizations: number;
  /** Organizations evicted since the process started. */
  evictions: number;
}

interface Tenant {
  organizationId: string;
  slots: Set<Slot>;
  bytes: number;
  /** Calls in flight for the organization (holding). */
  holds: number;
}

interface Slot {
  tenant: Tenant;
  index: ResidentIndex;
  bytes: number;
  live: boolean;
}

export class IndexBudget {
  readonly limitBytes: number;
  private readonly logger?: Logger;
  /** Least recently used first: a use of its structures moves an organization to the end. */
  private readonly tenants = new Map<string, Tenant>();
  private total = 0;
  private evictions = 0;
  /** Organizations already reported as exceeding the limit alone. */
  private readonly warned = new Set<string>();

  constructor(options: IndexBudgetOptions) {
    this.limitBytes = options.limitBytes;
    this.logger = options.logger;
  }

  /** Estimated bytes of every structure held. */
  get residentBytes(): number {
    return this.total;
  }

  /** Estimated bytes of the organization's structures held now (0: none, or evicted). */
  residentBytesOf(organizationId: string): number {
    return this.tenants.get(organizationId)?.bytes ?? 0;
  }

  /** Admits a structure of the organization (now its most recently used) and makes room for it. */
  admit(organizationId: string, index: ResidentIndex): Residency {
    const tenant = this.use(organizationId);
    const slot: Slot = { tenant, index, bytes: 0, live: true };
    tenant.slots.add(slot);
    this.resize(slot);
    return {
      resized: () => this.resize(slot),
      release: () => this.release(slot),
      get resident() {
        return slot.live;
      },
    };
  }

  /** The organization's structures were used: it becomes the most recently used. */
  touch(organizationId: string): void {
    if (this.tenants.has(organizationId)) this.use(organizationId);
  }

  /**
   * Runs `work` with the organization's structures kept from eviction; over the limit after,
   * evicts. A call is not a use: one that needs no index (a usage count) moves nothing.
   */
  async holding<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
    if (!organizationId) return work();
    let tenant = this.tenants.get(organizationId);
    if (!tenant) {
      tenant = { organizationId, slots: new Set(), bytes: 0, holds: 0 };
      this.tenants.set(organizationId, tenant);
    }
    tenant.holds += 1;
    try {
      return await work();
    } finally {
      tenant.holds -= 1;
      this.forgetIfEmpty(tenant);
      this.enforce();
    }
  }

  usage(): IndexBudgetUsage {
    const bytes: Record<IndexKind, number> = { lexical: 0, vectors: 0 };
    let organizations = 0;
    for (const tenant of this.tenants.values()) {
      if (tenant.slots.size > 0) organizations += 1;
      for (const slot of tenant.slots) bytes[slot.index.kind] += slot.bytes;
    }
    return { limitBytes: this.limitBytes, bytes, organizations, evictions: this.evictions };
  }

  /** The organization's tenant, created if needed, moved to most recently used. */
  private use(organizationId: string): Tenant {
    let tenant = this.tenants.get(organizationId);
    if (tenant) this.tenants.delete(organizationId);
    else tenant = { organizationId, slots: new Set(), bytes: 0, holds: 0 };
    this.tenants.set(organizationId, tenant);
    return tenant;
  }

  private resize(slot: Slot): void {
    if (!slot.live) return;
    const bytes = slot.index.bytes();
    const { tenant } = slot;
    tenant.bytes += bytes - slot.bytes;
    this.total += bytes - slot.bytes;
    slot.bytes = bytes;
    if (tenant.bytes > this.limitBytes && !this.warned.has(tenant.organizationId)) {
      this.warned.add(tenant.organizationId);
      this.logger?.warn(
        { organizationId: tenant.organizationId, estimatedMiB: mib(tenant.bytes), limitMiB: mib(this.limitBytes) },
        'index memory: this organization alone needs more than BRAIN_INDEX_MEMORY_MB; it is served, and evicted first when another organization is used',
      );
    }
    this.enforce();
  }

  private release(slot: Slot): void {
    if (!slot.live) return;
    slot.live = false;
    slot.tenant.slots.delete(slot);
    slot.tenant.bytes -= slot.bytes;
    this.total -= slot.bytes;
    this.forgetIfEmpty(slot.tenant);
  }

  private forgetIfEmpty(tenant: Tenant): void {
    if (tenant.slots.size === 0 && tenant.holds === 0 && this.tenants.get(tenant.organizationId) === tenant) {
      this.tenants.delete(tenant.organizationId);
    }
  }

  /**
   * Over the limit: evicts organizations that alone exceed it, then the least recently used;
   * never one with a call in flight, nor the most recently used one holding structures.
   */
  private enforce(): void {
    if (this.total <= this.limitBytes) return;
    const order = [...this.tenants.values()];
    const newest = order.findLast((tenant) => tenant.slots.size > 0);
    const evictable = (tenant: Tenant) => tenant.holds === 0 && tenant.slots.size > 0 && tenant !== newest;
    for (const tenant of order) {
      if (tenant.bytes > this.limitBytes && evictable(tenant)) this.evict(tenant);
    }
    for (const tenant of order) {
      if (this.total <= this.limitBytes) return;
      if (evictable(tenant)) this.evict(tenant);
    }
  }

  private evict(tenant: Tenant): void {
    const freed = tenant.bytes;
    const slots = [...tenant.slots];
    for (const slot of slots) this.release(slot);
    this.evictions += 1;
    for (const slot of slots) {
      try {
        slot.index.evict();
      } catch (err) {
        this.logger?.error({ err, organizationId: tenant.organizationId }, 'index memory: dropping an evicted index failed');
      }
    }
    this.logger?.debug(
      { organizationId: tenant.organizationId, freedMiB: mib(freed), residentMiB: mib(this.total) },
      'index memory: evicted',
    );
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}
