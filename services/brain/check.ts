// `npm run brain:check [-- --repair]`: the consistency check between memories and their vectors
// (vector-check.ts), over the stores the Brain is configured with (the same environment).
// Prints one JSON line of figures on stdout; logs go to stderr. Exit status: 0 when consistent
// (or repaired), 1 when inconsistencies were found and not repaired, 2 when it cannot start
// (configuration, or the embedded vector file in use by a running Brain: stop it first, or use
// MongoDB and Qdrant, which several processes share).
import os from 'node:os';
import pino from 'pino';
import { readServiceConfig } from '../common/config.ts';
import { createLogger } from '../common/log.ts';
import { readConfigOrExit, startOrExit } from '../common/process.ts';
import { openStores } from '../common/stores.ts';
import { createBrainContext } from './context.ts';
import { checkVectors } from './vector-check.ts';

const USAGE = 'usage: npm run brain:check [-- --repair]';
const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--repair')) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
const config = readConfigOrExit(() => readServiceConfig(process.env, 'brain', os.availableParallelism()));
const logger = createLogger({ level: config.logLevel, name: 'brain-check' }, pino.destination(2));

// The vector file held by the running Brain is refused in one line with exit code 2.
const stores = await startOrExit(() => openStores(config.storage, { logger }));
try {
  const report = await checkVectors(createBrainContext(stores, logger), { repair: args.includes('--repair') });
  process.stdout.write(`${JSON.stringify(report)}\n`);
  const found = report.recordsWithoutVectors + report.staleVectors + report.vectorsWithoutRecords;
  process.exitCode = found > report.repaired ? 1 : 0;
} finally {
  await stores.close();
}
