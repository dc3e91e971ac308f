// The V8 pretenuring switch is process-wide: building the platform (and its gateway surface)
// must leave it alone; only the process entry point (edge/main.ts) decides it.
import { afterAll, expect, it } from 'vitest';
import { isAllocationSitePretenuringDisabled } from '../../edge/gateway/v8-tuning.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform | undefined;

afterAll(async () => {
  await platform?.stop();
});

it('does not flip the process-wide pretenuring switch when a gateway surface is built', async () => {
  platform = await startTestPlatform();
  expect(isAllocationSitePretenuringDisabled()).toBe(false);
}, 120_000);
