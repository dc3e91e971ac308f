// V8 tuning for the proxy's allocation pattern. At proxy rates every request allocates a few
// tens of kilobytes that die within milliseconds; with the platform's large heap, V8's
// allocation-site pretenuring may start allocating such objects directly in the old generation,
// where they become garbage that only mark-compacts reclaim, and the old-to-new pointers they
// leave make every scavenge slow. It was measured with test/bench/gateway.bench.ts
// (--pretenuring): see docs/gateway.md for the figures.
//
// The flag is a heuristic switch that V8 reads at each GC, so setting it after start is safe;
// but it applies to the whole process: the Brain's services share it when they run in the same
// process. So only a process entry point (edge/main.ts) decides it, once; building a surface
// never does (test/integration/v8-tuning.test.ts watches both from outside the process).
import v8 from 'node:v8';

let disabled = false;

export function disableAllocationSitePretenuring(): void {
  if (disabled) return;
  disabled = true;
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
