// The repository's Biome configuration (biome.jsonc), run by `npm run lint` in CI: a function of
// more than 80 lines fails in product code, one of 80 passes, and tests are exempt (a describe
// callback is a list of cases). Biome runs on a copy of the configuration in a scratch folder.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
let dir: string;

/** A function whose body is `lines` lines long. */
function functionOf(lines: number): string {
  const adds = Array.from({ length: lines - 2 }, (_, i) => `  total += ${i};`);
  return ['export function long(): number {', '  let total = 0;', ...adds, '  return total;', '}', ''].join('\n');
}

function lintRules(file: string, source: string): string[] {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), source);
  const run = spawnSync(path.join(root, 'node_modules/.bin/biome'), ['lint', '--vcs-enabled=false', '--reporter=json', file], {
    cwd: dir,
    encoding: 'utf8',
  });
  const report = JSON.parse(run.stdout) as { diagnostics: { category: string }[] };
  return report.diagnostics.map((d) => d.category);
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-lint-'));
  fs.copyFileSync(path.join(root, 'biome.jsonc'), path.join(dir, 'biome.jsonc'));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the function-length rule', () => {
  it('fails a function of 81 lines in product code', () => {
    expect(lintRules('edge/long.ts', functionOf(81))).toContain('lint/complexity/noExcessiveLinesPerFunction');
  });

  it('passes a function of 80 lines', () => {
    expect(lintRules('services/short.ts', functionOf(80))).toEqual([]);
  });

  it('leaves tests alone', () => {
    expect(lintRules('test/long.test.ts', functionOf(200))).toEqual([]);
  });
});
