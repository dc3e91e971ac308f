// Child process of test/integration/v8-tuning.test.ts: builds every surface of the platform as a
// test or an embedding program would, without the process entry point, then stops it.
import { startTestPlatform } from './platform.ts';

const platform = await startTestPlatform();
await platform.stop();
process.exit(0);
