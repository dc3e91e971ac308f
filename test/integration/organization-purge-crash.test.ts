// An organization's purge survives a crash: the platform runs as its own process (`node
// edge/main.ts`), the organization is deleted over the REST API, the process is killed with
// SIGKILL in the middle of the purge (its last step, the agents service's records: part of a
// large audit log gone, a lease left behind), and a new process on the same data directory
// finishes the job once that lease has run out: nothing of the organization is left in any store.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { DELETIONS_COLLECTION, type DeletionJob } from '../../edge/api/organization-deletion/purge-job.ts';
import { createServiceClients, type ServiceClients } from '../../edge/clients.ts';
import type { Platform } from '../../edge/platform.ts';
import { readEdgeConfig } from '../../edge/config.ts';
import { createLogger } from '../../services/common/log.ts';
import { openStores } from '../../services/common/stores.ts';
import { obtainAccessToken, reservePorts } from '../support/oauth-client.ts';
import { testEnv } from '../support/platform.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-purge-crash-'));
const TOKEN = 'an-internal-token-of-at-least-32-characters';
const MEMORIES = 10;
/** Enough records that deleting them one per batch takes seconds: the kill lands mid-step. */
const EVENTS = 2_000;
let env: Record<string, string>;
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Started {
  process: ChildProcess;
  grpc: Record<string, string>;
  /** Resolves with the first log line `until` accepts. */
  waitFor(until: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

function startProcess(): Promise<Started> {
  const proc = spawn(process.execPath, ['edge/main.ts'], {
    cwd: root,
    env: { ...inheritedEnv(), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = proc;
  const grpc: Record<string, string> = {};
  const waiters: { until: (e: Record<string, unknown>) => boolean; resolve: (e: Record<string, unknown>) => void }[] = [];
  readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof entry.service === 'string' && typeof entry.address === 'string') grpc[entry.service] = entry.address;
    for (const w of [...waiters]) {
      if (w.until(entry)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(entry);
      }
    }
  });
  const waitFor = (until: (e: Record<string, unknown>) => boolean, timeoutMs = 60_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('log line not seen')), timeoutMs);
      waiters.push({
        until,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  const started: Started = { process: proc, grpc, waitFor };
  return waitFor((e) => e.service === 'billing' && typeof e.address === 'string').then(() => started);
}

function clientsOf(started: Started): ServiceClients {
  const target = (name: string) => ({ address: started.grpc[name] });
  return createServiceClients({
    targets: { brain: target('brain'), 'entity-graph': target('entity-graph'), agents: target('agents'), billing: target('billing') },
    internalToken: TOKEN,
    logger: createLogger({ level: 'silent' }),
  });
}

async function inspect<T>(work: (stores: Awaited<ReturnType<typeof openStores>>) => Promise<T>): Promise<T> {
  const config = readEdgeConfig(env, 2);
  const stores = await openStores(config.storage, { logger: createLogger({ level: 'silent' }) });
  try {
    return await work(stores);
  } finally {
    await stores.close();
  }
}

describe('a purge interrupted by SIGKILL', () => {
  it('is finished by the next process, with nothing of the organization left', async () => {
    const [gateway, api, web, auth] = await reservePorts(4);
    env = testEnv(dir, {
      GATEWAY_PORT: String(gateway),
      API_PORT: String(api),
      WEB_PORT: String(web),
      AUTH_PORT: String(auth),
      PUBLIC_GATEWAY_URL: `http://127.0.0.1:${gateway}`,
      PUBLIC_API_URL: `http://127.0.0.1:${api}`,
      PUBLIC_WEB_URL: `http://127.0.0.1:${web}`,
      PUBLIC_AUTH_URL: `http://127.0.0.1:${auth}`,
      INTERNAL_TOKEN: TOKEN,
      LOG_LEVEL: 'debug',
      ORGANIZATION_PURGE_DELAY_MS: '0',
      ORGANIZATION_PURGE_BATCH: '1',
    });
    const first = await startProcess();
    const publicUrls = { api: env.PUBLIC_API_URL, auth: env.PUBLIC_AUTH_URL };
    const owner = await obtainAccessToken({ ctx: { config: { publicUrls } } } as unknown as Platform, { resource: publicUrls.api });
    const org = owner.organizationId;
    const clients = clientsOf(first);
    for (let i = 0; i < MEMORIES; i++) {
      await clients.brain.putMemory({
        organizationId: org,
        namespace: Namespace.KNOWLEDGE,
        key: `notes/${i}`,
        content: `Note ${i} about system ${i * 7919}.`,
        allowDuplicate: true,
      });
    }
    for (let i = 0; i < EVENTS; i++) {
      await clients.audit.recordEvent({
        event: {
          organizationId: org,
          actorKind: 'user',
          actorId: 'usr_seed',
          action: 'seed',
          target: `/seed/${i}`,
          status: 200,
          outcome: 'success',
        },
      });
    }
    const slug = (
      (await (
        await fetch(`${publicUrls.api}/organizations/${org}`, { headers: { authorization: `Bearer ${owner.access_token}` } })
      ).json()) as { slug: string }
    ).slug;

    const midway = first.waitFor((e) => e.msg === 'organization purge: batch done' && e.step === 'agents' && e.done === false);
    const res = await fetch(`${publicUrls.api}/organizations/${org}?confirm=${slug}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${owner.access_token}` },
    });
    expect(res.status).toBe(202);
    await midway;
    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));

    const halfway = await inspect(async (stores) => ({
      events: await stores.records.collection('audit_events').count({ organizationId: org }),
      memories: await stores.records.collection('memories').count({ organizationId: org }),
      job: await stores.records.collection<DeletionJob>(DELETIONS_COLLECTION).get(org),
    }));
    expect(halfway.memories).toBe(0);
    expect(halfway.events).toBeGreaterThan(0);
    expect(halfway.events).toBeLessThan(EVENTS);
    expect(halfway.job).toMatchObject({ state: 'pending', step: 6 });
    expect(halfway.job!.owner).not.toBe('');

    const second = await startProcess();
    const purged = await second.waitFor((e) => e.msg === 'organization purged' && e.organizationId === org, 60_000);
    expect((purged.deleted as Record<string, number>).brain).toBeGreaterThanOrEqual(MEMORIES);
    expect((purged.deleted as Record<string, number>).agents).toBeGreaterThanOrEqual(EVENTS);
    second.process.kill('SIGTERM');
    await new Promise((resolve) => second.process.once('exit', resolve));
    const after = await inspect(async (stores) => ({
      memories: await stores.records.collection('memories').count({ organizationId: org }),
      vectors: await stores.vectors.count(org),
      memberships: await stores.records.collection('memberships').count({ organizationId: org }),
      events: await stores.records.collection('audit_events').count({ organizationId: org }),
      job: await stores.records.collection<DeletionJob>(DELETIONS_COLLECTION).get(org),
    }));
    expect(after).toMatchObject({ memories: 0, vectors: 0, memberships: 0, events: 0, job: { state: 'done' } });
  }, 240_000);
});
