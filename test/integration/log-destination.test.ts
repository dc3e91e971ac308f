// The platform's log destination: every line of an event-loop turn leaves in one write, in
// order, before the next turn; lines still pending when the process exits are written.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, createTurnBatchedDestination } from '../../services/common/log.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('turn-batched log destination', () => {
  it('writes a turn of lines together, in order, at the end of the turn', async () => {
    const file = path.join(dir, 'turn.log');
    const fd = fs.openSync(file, 'w');
    const logger = createLogger({ level: 'info' }, createTurnBatchedDestination(fd));
    for (let i = 0; i < 100; i++) logger.info({ i }, 'line');
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    await new Promise((resolve) => setImmediate(resolve));
    const lines = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { i: number; time: string; msg: string });
    expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(lines[0]!.msg).toBe('line');
    expect(lines[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    fs.closeSync(fd);
  });

  it('writes what is pending when the process exits in the same turn, every logger in the order logged', () => {
    const script = `
      import { createLogger } from ${JSON.stringify(path.resolve('services/common/log.ts'))};
      const logger = createLogger({ level: 'info' });
      const other = createLogger({ level: 'info', name: 'other' });
      logger.info('before exit');
      other.warn('from another logger');
      logger.error({ code: 2 }, 'exiting');
      process.exit(3);
    `;
    let stdout = '';
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (err) {
      const e = err as { status: number; stdout: string };
      expect(e.status).toBe(3);
      stdout = e.stdout;
    }
    expect(
      stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(['before exit', 'from another logger', 'exiting']);
  });
});
