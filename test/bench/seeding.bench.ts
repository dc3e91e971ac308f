// What seeding costs: a zip of Markdown files (SECTIONS sections, from the synthetic memories of
// support.ts) seeded by the brain module on the embedded stores, through its SeedingService (an
// in-memory Connect transport): extraction time, then items written per second end to end
// (every item through PutMemory: embedding, the duplicate and contradiction checks, the records).
// Run: ./node_modules/.bin/node test/bench/seeding.bench.ts  (SECTIONS, default 500)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { strToU8, zipSync } from 'fflate';
import { SeedingService, SeedingStatus } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { createBrainModule } from '../../services/brain/index.ts';
import { readStorageConfig } from '../../services/common/config.ts';
import { createLogger } from '../../services/common/log.ts';
import { openStores } from '../../services/common/stores.ts';
import { testEnv } from '../support/platform.ts';
import { printTable, syntheticMemory } from './support.ts';

const SECTIONS = Number(process.env.SECTIONS ?? 500);
const PER_FILE = 5;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-bench-seeding-'));
const logger = createLogger({ level: 'warn' });
const stores = await openStores(readStorageConfig(testEnv(dataDir), os.availableParallelism()), { logger });
const brain = createBrainModule(stores, logger);
const seeding = createClient(SeedingService, createRouterTransport(brain.routes));
console.log(
  `Seeding benchmark: ${SECTIONS} sections, ${os.availableParallelism()} cores, load ${os.loadavg()[0]!.toFixed(2)}, Node ${process.version}`,
);

const files: Record<string, Uint8Array> = {};
for (let f = 0; f < SECTIONS / PER_FILE; f++) {
  const sections = Array.from({ length: PER_FILE }, (_, s) => {
    const m = syntheticMemory(f * PER_FILE + s);
    return `## ${m.title} ${f}-${s}\n\n${m.content}\n`;
  });
  files[`docs/area-${f % 10}/doc-${f}.md`] = strToU8(`# Document ${f}\n\n${sections.join('\n')}`);
}
const zip = zipSync(files);
const started = performance.now();
const { run } = await seeding.startSeeding({
  organizationId: 'bench',
  source: { case: 'upload', value: { filename: 'docs.zip', mediaType: 'application/zip', content: zip } },
});
let extractedAt = 0;
for (;;) {
  const { run: r } = await seeding.getSeedingRun({ organizationId: 'bench', runId: run!.runId });
  if (!extractedAt && r!.progress!.total > 0) extractedAt = performance.now();
  if (r!.status === SeedingStatus.SUCCEEDED || r!.status === SeedingStatus.FAILED) {
    const total = (performance.now() - started) / 1000;
    const writing = (performance.now() - extractedAt) / 1000;
    const p = r!.progress!;
    printTable('Seeding a zip of Markdown (embedded stores)', [
      {
        sections: p.total,
        'zip KiB': Math.round(zip.length / 1024),
        'extract s': (extractedAt - started) / 1000,
        'total s': total,
        'items/s': p.total / writing,
        stored: p.stored,
        contradiction: p.contradiction,
        duplicate: p.duplicate,
      },
    ]);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await brain.close?.();
await stores.close();
fs.rmSync(dataDir, { recursive: true, force: true });
