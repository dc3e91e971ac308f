// A request id given to the edge reaches the service and its log line; secrets never do.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { readEdgeConfig } from '../../edge/config.ts';
import { requestScope } from '../../edge/http/request-context.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import { testEnv } from '../support/platform.ts';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-reqid-'));
let platform: Platform;

beforeAll(async () => {
  const config = readEdgeConfig(testEnv(dataDir, { LOG_LEVEL: 'info' }), 2);
  platform = await startPlatform({ config, logger: createLogger({ level: 'info' }, sink) });
}, 120_000);
afterAll(async () => {
  await platform?.stop(1_000);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('request ids and logs', () => {
  it('propagates the edge request id to the service log line, with code and duration', async () => {
    await requestScope.run({ requestId: 'req-1234' }, () =>
      platform.ctx.clients.brain.getMemories({ organizationId: 'org', namespace: Namespace.KNOWLEDGE, keys: ['nope'] }),
    );
    const line = lines.find((l) => l.requestId === 'req-1234' && l.msg === 'rpc');
    expect(line).toMatchObject({ rpc: 'mindgate.brain.v1.BrainService/GetMemories', code: 'ok' });
    expect(typeof line?.ms).toBe('number');
  });

  it('logs failures with their code and never the internal credential', async () => {
    await requestScope.run({ requestId: 'req-5678' }, () =>
      platform.ctx.clients.brain.getMemories({ organizationId: '', namespace: Namespace.KNOWLEDGE, keys: ['x'] }).catch(() => undefined),
    );
    expect(lines.find((l) => l.requestId === 'req-5678')).toMatchObject({ code: 'InvalidArgument' });
    await fetch(`http://${platform.grpc.brain}/mindgate.brain.v1.BrainService/GetMemories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-token': 'not-the-token', authorization: 'Bearer abc' },
      body: '{}',
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(platform.internalToken);
    expect(text).not.toContain('not-the-token');
  });
});
