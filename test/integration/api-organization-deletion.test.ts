// Deleting an organization over the real REST API: only its owner, only with the slug as
// confirmation; its tokens and keys stop at once at the Agents API and the Brain; the purge job
// then deletes everything it owned in every service and leaves other organizations alone; a job
// left half-done (a crashed replica holding a stale lease) is finished by the next start.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { readEdgeConfig } from '../../edge/config.ts';
import { DELETIONS_COLLECTION, type DeletionJob } from '../../edge/api/organization-deletion/purge-job.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, tokenRequest, type ObtainedToken } from '../support/oauth-client.ts';
import { testEnv, type TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ ORGANIZATION_PURGE_DELAY_MS: '0', ORGANIZATION_PURGE_BATCH: '3' });
  api = platform.ctx.config.publicUrls.api;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const slugOf = async (token: ObtainedToken) =>
  (await call(`/organizations/${token.organizationId}`, { token: token.access_token })).json.slug;

async function seedMemories(p: Platform, organizationId: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await p.ctx.clients.brain.putMemory({
      organizationId,
      namespace: i % 2 ? Namespace.EPISODES : Namespace.KNOWLEDGE,
      key: `notes/${i}`,
      content: `Note ${i}: the ${['backup', 'deploy', 'invoice', 'pager', 'vault'][i % 5]} runbook changed on day ${i}.`,
      allowDuplicate: true,
    });
  }
}

/** Every record, in every collection, that still names the organization. */
async function leftovers(records: RecordStore, organizationId: string): Promise<Record<string, number>> {
  const byOrganization = [
    'memories',
    'memory_contradictions',
    'memory_questions',
    'entities',
    'relationships',
    'memberships',
    'team_members',
    'teams',
    'invitations',
    'audit_events',
    'api_keys',
    'agents',
    'auth_grants',
    'oidc_client',
    'api_idempotency_keys',
    'api_usage',
    'billing_checkouts',
    'seeding_runs',
    'seeding_items',
    'playbooks',
    'playbook_versions',
    'evaluation_datasets',
    'evaluation_cases',
    'evaluation_case_counters',
    'evaluations',
    'evaluation_results',
  ];
  const counts: Record<string, number> = {};
  for (const name of byOrganization) {
    const n = await records.collection(name).count({ organizationId });
    if (n) counts[name] = n;
  }
  // Seeding's upload parts and progress sequences are keyed `{organization}/{run}...`.
  for (const name of ['seeding_uploads', 'seeding_sequences']) {
    const n = await records.collection(name).count({ _id: { $gte: `${organizationId}/`, $lt: `${organizationId}0` } });
    if (n) counts[name] = n;
  }
  for (const name of ['organizations', 'subscriptions', 'brain_pass_terms'])
    if (await records.collection(name).get(organizationId)) counts[name] = 1;
  return counts;
}

async function waitForJob(records: RecordStore, organizationId: string, timeoutMs = 60_000): Promise<DeletionJob> {
  const jobs = records.collection<DeletionJob>(DELETIONS_COLLECTION);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobs.get(organizationId);
    if (job?.state === 'done') return job;
    if (Date.now() > until) throw new Error(`deletion job not done: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('who may delete an organization', () => {
  it('refuses admins, API keys, other organizations and a missing or wrong confirmation', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const org = owner.organizationId;
    const admin = await joinAs(platform, org, 'admin');
    const other = await obtainAccessToken(platform, { resource: api });
    const key = (await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'k', scopes: ['admin'] } })).json
      .secret;
    const slug = await slugOf(owner);
    const path = `/organizations/${org}?confirm=${slug}`;
    expect((await call(path, { token: admin.access_token, method: 'DELETE' })).status).toBe(403);
    expect((await call(path, { apiKey: key, method: 'DELETE' })).status).toBe(403);
    expect((await call(path, { token: other.access_token, method: 'DELETE' })).status).toBe(403);
    const missing = await call(`/organizations/${org}`, { token: owner.access_token, method: 'DELETE' });
    expect(missing.status).toBe(422);
    expect(missing.json.errors[0].loc).toEqual(['query', 'confirm']);
    const wrong = await call(`/organizations/${org}?confirm=not-${slug}`, { token: owner.access_token, method: 'DELETE' });
    expect(wrong.status).toBe(422);
    expect(wrong.json.errors[0]).toMatchObject({ loc: ['query', 'confirm'], msg: `must be the organization's slug, "${slug}"` });
    expect((await call(`/organizations/${org}`, { token: owner.access_token })).status).toBe(200);
  });
});

describe('deleting an organization', () => {
  it('stops its credentials at once and purges everything it owned, leaving other organizations alone', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const keep = await obtainAccessToken(platform, { resource: api });
    const org = owner.organizationId;
    const member = await joinAs(platform, org, 'member');
    const mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
    const mcp = await obtainAccessToken(platform, { resource: mcpUrl, user: owner.user, mode: 'sign-in', organizationId: org });
    const headers = { authorization: `Bearer ${owner.access_token}`, 'idempotency-key': 'deletion-test' };
    const key = (await call(`/organizations/${org}/api-keys`, { body: { name: 'k', scopes: ['memories'] }, headers })).json.secret;
    await call(`/organizations/${org}/confidential-clients`, { token: owner.access_token, body: { name: 'backend' } });
    const team = (await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'T' } })).json.id;
    await call(`/organizations/${org}/teams/${team}/members/${member.userId}`, { token: owner.access_token, method: 'PUT' });
    await call(`/organizations/${org}/invitations`, { token: owner.access_token, body: { email: 'x@example.com', role: 'viewer' } });
    const checkout = await call(`/organizations/${org}/checkouts`, {
      token: owner.access_token,
      body: { plan: 'professional', interval: 'month', billing_address: { country: 'NL' } },
    });
    expect(checkout.status, JSON.stringify(checkout.json)).toBe(201);
    const playbook = { document: { name: 'Purged', instructions: 'Nothing to do.' } };
    expect((await call(`/organizations/${org}/playbooks`, { token: owner.access_token, body: playbook })).status).toBe(201);
    await seedMemories(platform, org, 8);
    await seedMemories(platform, keep.organizationId, 2);
    const refs = [0, 2].map((i) => ({ namespace: Namespace.KNOWLEDGE, key: `notes/${i}` }));
    await platform.ctx.clients.brain.flagContradiction({ organizationId: org, memories: refs, reason: 'test' });
    await platform.ctx.clients.brain.askQuestion({ organizationId: org, question: 'Why?', memories: [refs[0]] });
    await platform.ctx.clients.entityGraph.assertRelationship({
      organizationId: org,
      subject: 'api',
      predicate: 'uses',
      object: 'db',
      memoryKey: 'notes/0',
    });
    // A seeding run waiting for review, and what a crashed extraction and a progress stream leave.
    const seeded = await fetch(`${api}/organizations/${org}/seeding-runs?filename=notes.md&review=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'text/markdown' },
      body: '# Ops\n\n## Pager\n\nThe pager rota changes on Mondays.\n\n## Vault\n\nVault unseals need two keys.\n',
    });
    expect(seeded.status).toBe(201);
    const run = ((await seeded.json()) as Json).id as string;
    // An evaluation dataset with a case, and an evaluation of it scored by the platform's worker.
    const t = owner.access_token;
    const dataset = (await call(`/organizations/${org}/evaluation-datasets`, { token: t, body: { name: 'D' } })).json.id;
    const evalCase = { input: 'backup runbook', namespace: 'knowledge', expected_memories: [{ namespace: 'knowledge', key: 'notes/0' }] };
    await call(`/organizations/${org}/evaluation-datasets/${dataset}/cases`, { token: t, body: evalCase });
    const evaluationId = (await call(`/organizations/${org}/evaluations`, { token: t, body: { dataset_id: dataset } })).json.id;
    for (let i = 0; i < 300; i += 1) {
      if ((await call(`/organizations/${org}/evaluations/${evaluationId}`, { token: t })).json.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const records = platform.ctx.stores.records;
    for (let until = Date.now() + 60_000; (await records.collection('seeding_items').count({ organizationId: org })) < 2; ) {
      if (Date.now() > until) throw new Error('the seeding run never extracted its items');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const owner of [org, keep.organizationId]) {
      await records.collection('seeding_uploads').put({ _id: `${owner}/sdr_left/0`, data: 'left behind' });
      await records.collection('seeding_sequences').put({ _id: `${owner}/${run}`, seq: 2 });
    }
    expect(Object.keys(await leftovers(records, org)).sort()).toEqual(
      expect.arrayContaining([
        'evaluation_datasets',
        'evaluation_cases',
        'evaluation_case_counters',
        'evaluations',
        'evaluation_results',
        'memories',
        'memberships',
        'teams',
        'team_members',
        'invitations',
        'api_keys',
        'audit_events',
        'auth_grants',
        'oidc_client',
        'billing_checkouts',
        'seeding_runs',
        'seeding_items',
        'seeding_uploads',
        'seeding_sequences',
        'playbooks',
        'playbook_versions',
      ]),
    );

    const deleted = await call(`/organizations/${org}?confirm=${await slugOf(owner)}`, { token: owner.access_token, method: 'DELETE' });
    expect(deleted.status).toBe(202);
    expect(deleted.json).toMatchObject({ organization_id: org, state: 'deleting' });
    // At once: tokens and keys of the organization stop, at the REST API and the Brain.
    for (const token of [owner, member]) expect((await call('/organizations', { token: token.access_token })).status).toBe(401);
    expect((await call(`/organizations/${org}`, { apiKey: key })).status).toBe(401);
    const brainCall = (h: Record<string, string>) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...h },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await brainCall({ authorization: `Bearer ${mcp.access_token}` })).status).toBe(401);
    expect((await brainCall({ 'x-api-key': key })).status).toBe(401);
    const refreshed = await tokenRequest(platform.ctx.config.publicUrls.auth, {
      grant_type: 'refresh_token',
      refresh_token: owner.refresh_token!,
      client_id: owner.clientId,
    });
    if (refreshed.status === 200) {
      const fresh = ((await refreshed.json()) as Json).access_token as string;
      expect((await call('/organizations', { token: fresh })).status).toBe(401);
    }
    const listed = await call('/organizations', { token: keep.access_token });
    expect(JSON.stringify(listed.json)).not.toContain(org);

    const job = await waitForJob(records, org);
    expect(job.deleted.brain).toBeGreaterThanOrEqual(10);
    expect(await leftovers(records, org)).toEqual({});
    expect(await leftovers(records, keep.organizationId)).toMatchObject({ seeding_uploads: 1, seeding_sequences: 1 });
    expect(await platform.ctx.stores.vectors.count(org)).toBe(0);
    expect(Number((await platform.ctx.clients.brain.getUsage({ organizationId: keep.organizationId })).memories)).toBe(2);
    expect((await call(`/organizations/${keep.organizationId}`, { token: keep.access_token })).status).toBe(200);
  });
});

describe('a deletion interrupted by a crash', () => {
  it('is finished by the next start, from the step it was in', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-deletion-'));
    const start = (delay: string) =>
      startPlatform({
        config: readEdgeConfig(testEnv(dir, { ORGANIZATION_PURGE_DELAY_MS: delay, ORGANIZATION_PURGE_BATCH: '4' }), 2),
        logger: createLogger({ level: 'silent' }),
      });
    try {
      // The first process records the deletion and closes the organization, then "crashes"
      // in the middle of the brain step: part of the memories deleted, its lease left behind.
      const first = await start('3600000');
      const { organization } = await first.ctx.clients.organizations.createOrganization({ name: 'Doomed', ownerUserId: 'usr_x' });
      const org = organization!.organizationId;
      await seedMemories(first, org, 10);
      const jobs = first.ctx.stores.records.collection<DeletionJob>(DELETIONS_COLLECTION);
      const now = Date.now();
      await jobs.put({
        _id: org,
        organizationId: org,
        name: 'Doomed',
        slug: organization!.slug,
        requestedBy: 'user:usr_x',
        requestedAt: now,
        state: 'pending',
        step: 2,
        deleted: { brain: 4 },
        // The dead replica's lease runs 3 s more: nobody takes the job before then.
        dueAt: now + 3_000,
        owner: 'a-replica-that-died',
        attempts: 0,
        version: 7,
      });
      await first.ctx.clients.organizations.deleteOrganization({ organizationId: org });
      expect((await first.ctx.clients.brain.deleteOrganizationData({ organizationId: org, batchSize: 4 })).done).toBe(false);
      await first.stop(0);

      const second = await start('0');
      try {
        const job = await waitForJob(second.ctx.stores.records, org);
        // The batch in flight is deleted again (it is found again); memories, their flagged
        // contradictions and questions all go.
        expect(job.deleted.brain).toBeGreaterThan(4);
        expect(job.finishedAt! - now).toBeGreaterThanOrEqual(3_000);
        expect(await leftovers(second.ctx.stores.records, org)).toEqual({});
        expect(await second.ctx.stores.vectors.count(org)).toBe(0);
      } finally {
        await second.stop(0);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
