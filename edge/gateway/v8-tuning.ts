// V8 tuning for the proxy's allocation pattern. At proxy rates every request allocates a few
// tens of kilobytes that die within milliseconds; with the platform's large heap, V8's
// allocation-site pretenuring starts allocating such objects directly in the old generation,
// where they become garbage that only mark-compacts reclaim, and the old-to-new pointers they
// leave make every scavenge slow. Measured with test/bench/gateway.bench.ts: gateway CPU per
// request drops by about a quarter, and the p99 latency with it (scavenges went from ~1 ms to
// ~11 ms pauses with pretenuring on). The flag is a heuristic switch that V8 reads at each GC,
// so setting it after start is safe; it applies to the whole process.
import v8 from 'node:v8';

let applied = false;

export function disableAllocationSitePretenuring(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
