// Idempotency-Key on the Agents API's creates, over real HTTP: a retry answers the first result
// again and creates nothing; a different request with the same key, or a malformed key, is 422;
// concurrent retries create one resource; a failed first attempt frees the key; stored answers
// are sealed, never the secret in clear.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let org: string;
const call = restClient(() => api);
const keysPath = () => `/organizations/${org}/api-keys`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const create = (name: string, key?: string, token = owner.access_token) =>
  call(keysPath(), { token, body: { name }, headers: key === undefined ? {} : { 'idempotency-key': key } });

async function keysNamed(name: string): Promise<Json[]> {
  const list = await call(`${keysPath()}?page_size=100`, { token: owner.access_token });
  return (list.json.api_keys as Json[]).filter((k) => k.name === name);
}

describe('Idempotency-Key on creates', () => {
  it('answers a retry with the first result and creates one key', async () => {
    const key = randomUUID();
    const first = await create('deploy', key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await create('deploy', key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(await keysNamed('deploy')).toHaveLength(1);
  });

  it('creates twice without the header', async () => {
    await create('twice');
    await create('twice');
    expect(await keysNamed('twice')).toHaveLength(2);
  });

  it('refuses the same key with a different request, and malformed keys, with 422 on the header', async () => {
    const key = randomUUID();
    expect((await create('one', key)).status).toBe(201);
    const other = await create('another', key);
    expect(other.status).toBe(422);
    expect(other.json.errors[0]).toMatchObject({ loc: ['header', 'Idempotency-Key'], msg: 'was already used with a different request' });
    for (const bad of ['has space', 'x'.repeat(256), 'caf\u00e9']) {
      const r = await call(keysPath(), { token: owner.access_token, body: { name: 'bad' }, headers: { 'idempotency-key': bad } });
      expect(r.status, bad).toBe(422);
    }
    expect(await keysNamed('bad')).toHaveLength(0);
  });

  it('creates one key when retries race', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => create('raced', key)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    for (const conflict of answers.filter((a) => a.status === 409)) expect(conflict.headers.get('retry-after')).toBe('1');
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.json.api_key.id));
    expect(ids.size).toBe(1);
    expect(await keysNamed('raced')).toHaveLength(1);
  });

  it('frees the key after a failed first attempt', async () => {
    const key = randomUUID();
    expect((await create('', key)).status).toBe(422);
    expect((await create('after-failure', key)).status).toBe(201);
  });

  it('scopes keys to the caller: another member with the same key creates their own', async () => {
    const admin = await joinAs(platform, org, 'admin');
    const key = randomUUID();
    const mine = await create('scoped', key);
    const theirs = await create('scoped', key, admin.access_token);
    expect(theirs.status).toBe(201);
    expect(theirs.json.api_key.id).not.toBe(mine.json.api_key.id);
  });

  it('keeps answers sealed: the stored record never holds the secret in clear', async () => {
    const key = randomUUID();
    const created = await create('sealed', key);
    const docs = await platform.ctx.stores.records.collection('api_idempotency_keys').find({ state: 'done' });
    expect(docs.length).toBeGreaterThan(0);
    const raw = JSON.stringify(docs);
    expect(raw).not.toContain(created.json.secret);
    expect(raw).not.toContain(key);
  });

  it("lists in docs/api.md's conventions exactly the operations that take the header", async () => {
    const doc = (await call('/openapi.json')).json;
    const creates = Object.values(doc.paths as Record<string, Record<string, Json>>)
      .flatMap((item) => Object.values(item))
      .filter((op) => (op.parameters ?? []).some((p: Json) => p.name === 'Idempotency-Key'))
      .map((op) => op.operationId as string)
      .sort();
    const text = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');
    const bullet = /- \*\*Idempotency\*\*: every POST that creates something \(`creates: true` on its route:([^)]*)\)/.exec(text);
    expect(bullet, 'the Idempotency bullet of docs/api.md').not.toBeNull();
    const documented = [...bullet![1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();
    expect(documented).toEqual(creates);
  });

  it('documents the header and the 409 on every create', async () => {
    const doc = (await call('/openapi.json')).json;
    for (const path of ['/organizations/{organization_id}/api-keys', '/organizations/{organization_id}/confidential-clients']) {
      const op = doc.paths[path].post;
      expect(op.parameters.map((p: Json) => p.name)).toContain('Idempotency-Key');
      expect(op.responses['409']).toBeDefined();
    }
  });
});
