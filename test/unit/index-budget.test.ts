// The index memory budget's policy (services/common/storage/index-budget.ts), with structures of
// known sizes: least recently used organizations go first, an organization that alone exceeds the
// limit is served and goes first when another is used (reported once), the most recently used
// organization and organizations with a call in flight are never evicted, and what an owner
// releases or resizes is counted.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../services/common/log.ts';
import { IndexBudget, type IndexKind, type Residency } from '../../services/common/storage/index-budget.ts';
import { Writable } from 'node:stream';

/** A structure of `size` bytes that records its eviction. */
class Sized {
  size: number;
  evicted = false;
  residency!: Residency;
  constructor(size: number) {
    this.size = size;
  }
  admit(budget: IndexBudget, organizationId: string, kind: IndexKind = 'lexical'): this {
    this.residency = budget.admit(organizationId, { kind, bytes: () => this.size, evict: () => (this.evicted = true) });
    return this;
  }
}

function capturingLogger(lines: string[]) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return createLogger({ level: 'debug' }, sink);
}

describe('the index memory budget', () => {
  it('evicts the least recently used organizations, whole, until the rest fits', () => {
    const budget = new IndexBudget({ limitBytes: 100 });
    const a = new Sized(30).admit(budget, 'a');
    const aVectors = new Sized(10).admit(budget, 'a', 'vectors');
    const b = new Sized(30).admit(budget, 'b');
    const c = new Sized(20).admit(budget, 'c');
    budget.touch('a');
    expect(budget.residentBytes).toBe(90);
    const d = new Sized(30).admit(budget, 'd');
    // b is now the least recently used; evicting it alone makes room.
    expect([a.evicted, aVectors.evicted, b.evicted, c.evicted, d.evicted]).toEqual([false, false, true, false, false]);
    expect(budget.residentBytes).toBe(90);
    expect(budget.residentBytesOf('b')).toBe(0);
    expect(b.residency.resident).toBe(false);
    d.size = 70;
    d.residency.resized();
    // c, then a (both of its structures) go, least recently used first.
    expect([a.evicted, aVectors.evicted, c.evicted, d.evicted]).toEqual([true, true, true, false]);
    expect(budget.usage()).toEqual({ limitBytes: 100, bytes: { lexical: 70, vectors: 0 }, organizations: 1, evictions: 3 });
  });

  it('serves an organization larger than the limit, evicts it first when another is used, and says so once', () => {
    const lines: string[] = [];
    const budget = new IndexBudget({ limitBytes: 100, logger: capturingLogger(lines) });
    const small = new Sized(10).admit(budget, 'small');
    const large = new Sized(150).admit(budget, 'large');
    // The most recently used organization stays, though over the limit; the small one goes.
    expect([small.evicted, large.evicted]).toEqual([true, false]);
    expect(budget.residentBytes).toBe(150);
    const other = new Sized(10).admit(budget, 'other');
    const older = new Sized(10).admit(budget, 'older');
    expect(large.evicted).toBe(true);
    expect([other.evicted, older.evicted]).toEqual([false, false]);
    const again = new Sized(150).admit(budget, 'large');
    expect(again.evicted).toBe(false);
    const warnings = lines.filter((l) => l.includes('alone needs more than BRAIN_INDEX_MEMORY_MB'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, organizationId: 'large' });
  });

  it('never evicts an organization with a call in flight, and catches up when the call ends', async () => {
    const budget = new IndexBudget({ limitBytes: 100 });
    const a = new Sized(60).admit(budget, 'a');
    let finish!: () => void;
    const call = budget.holding('a', () => new Promise<void>((resolve) => (finish = resolve)));
    const b = new Sized(60).admit(budget, 'b');
    expect([a.evicted, b.evicted]).toEqual([false, false]);
    expect(budget.residentBytes).toBe(120);
    finish();
    await call;
    // b was used after a: a goes once its call is over.
    expect([a.evicted, b.evicted]).toEqual([true, false]);
    expect(budget.residentBytes).toBe(60);
  });

  it('lets a call that uses no index leave an organization over the limit in place', async () => {
    const budget = new IndexBudget({ limitBytes: 100 });
    const small = new Sized(10).admit(budget, 'small');
    const large = new Sized(150).admit(budget, 'large');
    expect(small.evicted).toBe(true);
    await budget.holding('other', async () => {});
    await budget.holding('small', async () => {});
    expect(large.evicted).toBe(false);
    expect(budget.usage().organizations).toBe(1);
    // Used again by another organization's index: then it goes.
    new Sized(10).admit(budget, 'other');
    expect(large.evicted).toBe(true);
  });

  it('counts what owners release and resize, and forgets organizations left with nothing', () => {
    const budget = new IndexBudget({ limitBytes: 100 });
    const a = new Sized(40).admit(budget, 'a');
    const b = new Sized(40).admit(budget, 'b', 'vectors');
    a.residency.release();
    a.residency.release();
    expect(budget.residentBytes).toBe(40);
    expect(budget.usage().organizations).toBe(1);
    b.size = 10;
    b.residency.resized();
    expect(budget.usage().bytes).toEqual({ lexical: 0, vectors: 10 });
    // A released structure's later resizes are not counted.
    a.size = 1_000;
    a.residency.resized();
    expect(budget.residentBytes).toBe(10);
    expect(budget.usage().evictions).toBe(0);
  });
});
