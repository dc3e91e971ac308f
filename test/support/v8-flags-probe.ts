// Preloaded into a child process with `node --import` by test/integration/v8-tuning.test.ts. It
// records every call of v8.setFlagsFromString (with the stack that made it) and, as the process
// exits, writes one line to stderr holding those calls and v8.cachedDataVersionTag(): V8 derives
// that tag from its flags as they are at that moment, so it shows what the process really runs
// with, which V8 offers no getter for.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';

export const PROBE_MARKER = 'v8-flags-probe ';

const calls: { flags: string; stack: string }[] = [];
const setFlagsFromString = v8.setFlagsFromString;
v8.setFlagsFromString = (flags: string) => {
  calls.push({ flags, stack: new Error().stack ?? '' });
  setFlagsFromString(flags);
};
// Named imports of node:v8 (`import { setFlagsFromString }`) see the wrapper too.
syncBuiltinESMExports();

process.on('exit', () => {
  fs.writeSync(2, `${PROBE_MARKER}${JSON.stringify({ calls, tag: v8.cachedDataVersionTag() })}\n`);
});
