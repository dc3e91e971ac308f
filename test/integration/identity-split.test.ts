// One owner for identity, with the agents service in its own process and its own data directory:
// sign-up, sign-in, throttling and the organization picker work through it over gRPC, accounts and
// memberships land in its store, and the edge's store holds none of them.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userIdOf } from '../support/members.ts';
import { authorize, obtainAccessToken, registerClient, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const agentsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-agents-'));
let agents: ChildProcess;
let platform: TestPlatform;
/** The agents process's start line (see logStarted). */
let started: { msg: string; vectors?: string; embeddings?: string } | undefined;

beforeAll(async () => {
  agents = spawn(process.execPath, ['services/agents/main.ts'], {
    cwd: root,
    // The throttling setting is the agents service's: the edge keeps the default of 10.
    env: {
      ...inheritedEnv(),
      DATA_DIR: agentsDir,
      AGENTS_GRPC_PORT: '0',
      INTERNAL_TOKEN: token,
      SIGN_IN_ATTEMPTS: '2',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agents did not start')), 60_000);
    readline.createInterface({ input: agents.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (typeof entry.msg === 'string' && entry.msg.startsWith('agents ')) started ??= entry;
      if (entry.address) {
        clearTimeout(timer);
        resolve(entry.address);
      }
    });
    agents.once('exit', (code) => reject(new Error(`agents exited with ${code}`)));
  });
  platform = await startOAuthTestPlatform({ AGENTS_SERVICE_ADDR: address, INTERNAL_TOKEN: token });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  if (agents && agents.exitCode === null) {
    const exited = new Promise((resolve) => agents.once('exit', resolve));
    agents.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(agentsDir, { recursive: true, force: true });
});

it('opens its records store alone: no vector store, no embeddings model', () => {
  expect(started?.msg).toMatch(/^agents \S+ started: records in SQLite \S+records\.sqlite$/);
  expect(started?.vectors).toBeUndefined();
  expect(started?.embeddings).toBeUndefined();
  expect(fs.existsSync(path.join(agentsDir, 'vectors.sqlite'))).toBe(false);
});

it('signs up and in through a remote agents service, whose store alone holds accounts and memberships', async () => {
  const api = platform.ctx.config.publicUrls.api;
  const auth = platform.ctx.config.publicUrls.auth;
  expect(platform.grpc.agents).toBeUndefined();
  const first = await obtainAccessToken(platform, { resource: api });
  const again = await obtainAccessToken(platform, { resource: api, user: first.user, mode: 'sign-in' });
  expect(userIdOf(again)).toBe(userIdOf(first));
  const me = await fetch(`${api}/users/me`, { headers: { authorization: `Bearer ${again.access_token}` } });
  expect(((await me.json()) as { email: string }).email).toBe(first.user.email);

  // SIGN_IN_ATTEMPTS=2 where the agents service runs: the third try is throttled, right password or not.
  const client = await registerClient(auth);
  for (const password of ['wrong-password-1', 'wrong-password-2']) {
    await expect(authorize(auth, { client, user: { ...first.user, password }, mode: 'sign-in' })).rejects.toThrow(/sign-in failed: 400/);
  }
  await expect(authorize(auth, { client, user: first.user, mode: 'sign-in' })).rejects.toThrow(/sign-in failed: 429/);

  const edge = platform.ctx.stores.records;
  const remote = createSqliteRecordStore({ path: path.join(agentsDir, 'records.sqlite') });
  try {
    for (const name of ['auth_users', 'auth_user_emails', 'auth_sign_in_attempts', 'organizations', 'memberships']) {
      expect(await edge.collection(name).count({}), `edge ${name}`).toBe(0);
      expect(await remote.collection(name).count({}), `agents ${name}`).toBeGreaterThan(0);
    }
  } finally {
    await remote.close();
  }
});
