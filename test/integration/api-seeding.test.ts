// Memory seeding over the real REST API and the brain's SeedingService: a Markdown upload seeded
// into keyed, titled memories; a JSONL file with a malformed line (reported with its line number,
// the rest seeded); review mode (approve, reject); cancel; 413 before the upload is read whole and
// 415 for other types; a URL source refused while URL sources are off; progress over SSE with
// Last-Event-ID; tenant isolation on every operation.
import http from 'node:http';
import type net from 'node:net';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
const call = restClient(() => api);
const m = (p: string, o = org) => `/organizations/${o}${p}`;
const MAX_UPLOAD = 64 * 1024;

async function upload(query: string, type: string, body: string | Blob, token = owner.access_token, o = org) {
  const res = await fetch(`${api}${m(`/seeding-runs${query}`, o)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body,
  });
  return { status: res.status, json: (await res.json()) as Json, headers: res.headers };
}

async function finished(id: string, o = org, settled = ['succeeded', 'failed', 'cancelled', 'awaiting_review']): Promise<Json> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await call(m(`/seeding-runs/${id}`, o), { token: owner.access_token });
    if (settled.includes(run.json.status)) return run.json;
    if (Date.now() > deadline) throw new Error(`run did not settle: ${run.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const items = async (id: string, query = '') =>
  (await call(m(`/seeding-runs/${id}/items${query}`), { token: owner.access_token })).json.items as Json[];

/** Reads an SSE stream to its end: the events as {event, id, data}. */
async function readEvents(path: string, lastEventId?: string): Promise<Array<{ event: string; id: string; data: Json }>> {
  const headers: Record<string, string> = { authorization: `Bearer ${owner.access_token}`, accept: 'text/event-stream' };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  const res = await fetch(`${api}${path}`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event:'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      return { event: field('event')!, id: field('id')!, data: JSON.parse(field('data')!) as Json };
    });
}

const RUNBOOK = `---
title: Deploy runbook
tags: [ops]
---
# Deploy runbook

The checkout service deploys from the main branch through the release pipeline. The checkout service depends on the payments API.

## Rollback

Roll back with the previous release tag; the payments team approves a rollback.

## Alerts

### Paging

Paging follows the escalation policy of the incident handbook.
`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ SEEDING_MAX_UPLOAD_BYTES: String(MAX_UPLOAD), SEEDING_POLL_MS: '50' });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
}, 180_000);
afterAll(async () => {
  await platform?.stop();
});

describe('memory seeding', () => {
  it('seeds a Markdown file into one memory per section, keyed by path and heading', async () => {
    const started = await upload('?filename=runbooks/deploy.md&key_prefix=docs/', 'text/markdown', RUNBOOK);
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ status: 'queued', source: { kind: 'upload', name: 'deploy.md', media_type: 'text/markdown' } });
    const run = await finished(started.json.id);
    const list = await items(started.json.id);
    expect(run).toMatchObject({ status: 'succeeded', progress: { total: 3, stored: 3 } });
    expect(list.map((i) => [i.key, i.title, i.outcome])).toEqual([
      ['docs/deploy', 'Deploy runbook', 'stored'],
      ['docs/deploy/rollback', 'Rollback', 'stored'],
      ['docs/deploy/paging', 'Alerts › Paging', 'stored'],
    ]);
    expect(list[0]).toMatchObject({ tags: ['ops'], origin: 'deploy.md', entities: expect.arrayContaining(['payments API']) });
    expect(list[2].origin).toBe('deploy.md#paging');
    const memory = await call(m('/memories/knowledge/docs%2Fdeploy%2Frollback'), { token: owner.access_token });
    expect(memory.status).toBe(200);
    expect(memory.json.content).toContain('previous release tag');
    // Seeding the same file again writes nothing new: the same text at the same keys.
    const again = await upload('?filename=runbooks/deploy.md&key_prefix=docs/', 'text/markdown', RUNBOOK);
    expect(await finished(again.json.id)).toMatchObject({ status: 'succeeded', progress: { unchanged: 3, stored: 0 } });
    const listed = await call(m('/seeding-runs?page_size=1'), { token: owner.access_token });
    expect(listed.json.seeding_runs[0].id).toBe(again.json.id);
    expect(listed.json.next_page_token).toEqual(expect.any(String));
  });

  it('seeds a zip of a docs folder: Markdown, text and JSONL files by extension, the rest left out', async () => {
    const zip = zipSync({
      'handbook/ops/backups.md': strToU8('# Backups\n\nNightly backups of the ledger go to the cold bucket.\n'),
      'handbook/glossary.txt': strToU8('SLO: the service level objective agreed with the product team.'),
      'handbook/facts.jsonl': strToU8(`${JSON.stringify({ key: 'facts/region', content: 'Production runs in the Frankfurt region.' })}\n`),
      'handbook/diagram.png': new Uint8Array([137, 80, 78, 71]),
      'handbook/.draft.md': strToU8('# Draft\n\nnot seeded'),
      '__MACOSX/handbook/._backups.md': strToU8('junk'),
    });
    const started = await upload('?filename=handbook.zip&key_prefix=zip/', 'application/zip', new Blob([zip]));
    expect(started.status).toBe(201);
    expect(await finished(started.json.id)).toMatchObject({ status: 'succeeded', progress: { total: 3, stored: 3 } });
    expect((await items(started.json.id)).map((i) => [i.key, i.origin])).toEqual([
      ['zip/facts/region', 'handbook/facts.jsonl line 1'],
      ['zip/handbook/glossary', 'handbook/glossary.txt'],
      ['zip/handbook/ops/backups', 'handbook/ops/backups.md'],
    ]);
    const corrupt = await upload('?filename=bad.zip', 'application/zip', new Blob([new Uint8Array([80, 75, 3, 4, 1, 2, 3])]));
    expect(await finished(corrupt.json.id)).toMatchObject({ status: 'failed', stop_reason: 'source' });
  });

  it('answers a retried upload with the same Idempotency-Key with the first run', async () => {
    const send = () =>
      fetch(`${api}${m('/seeding-runs?filename=retry.txt&review=true')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'text/plain', 'idempotency-key': 'seed-retry-1' },
        body: 'A fact sent twice.',
      });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(((await second.json()) as Json).id).toBe(((await first.json()) as Json).id);
  });

  it('reports a malformed JSONL line with its line number and seeds the others', async () => {
    const lines = [
      JSON.stringify({ key: 'facts/db-port', content: 'The orders database listens on port 5433.', title: 'Orders DB port' }),
      '{"key": "facts/broken", "content": ',
      '',
      JSON.stringify({ key: 'facts/no-content' }),
      JSON.stringify({ key: 'facts/cache', content: 'The session cache runs on Redis 7.', namespace: 'knowledge', tags: ['cache'] }),
      JSON.stringify({ key: 'facts/when', content: 'The ledger moved to Postgres.', event_time: 'last spring' }),
    ].join('\n');
    const started = await upload('?filename=facts.jsonl', 'application/jsonl', lines);
    expect(started.status).toBe(201);
    const run = await finished(started.json.id);
    expect(run).toMatchObject({ status: 'succeeded', progress: { total: 5, stored: 2, rejected: 3 } });
    const rejected = await items(started.json.id, '?outcome=rejected');
    expect(rejected.map((i) => i.reason)).toEqual([
      expect.stringMatching(/^line 2: not JSON/),
      'line 4: content: must be a non-empty string',
      'line 6: event_time: must be an ISO 8601 date or date-time',
    ]);
    expect(rejected[0].origin).toBe('facts.jsonl line 2');
    expect((await call(m('/memories/knowledge/facts%2Fcache'), { token: owner.access_token })).json.tags).toEqual(['cache']);
  });

  it('holds memories for review: approved ones are written, rejected ones never', async () => {
    const text = 'First fact: the billing export runs nightly at 02:00.\n\nSecond fact: invoices are kept for ten years.';
    const started = await upload(
      '?filename=notes.md&review=true&key_prefix=review/',
      'text/markdown',
      `# Notes\n\n## A\n\n${text.split('\n\n')[0]}\n\n## B\n\n${text.split('\n\n')[1]}\n`,
    );
    const waiting = await finished(started.json.id);
    expect(waiting).toMatchObject({ status: 'awaiting_review', review: true, progress: { awaiting_review: 2, stored: 0 } });
    expect((await call(m('/memories/knowledge/review%2Fnotes%2Fa'), { token: owner.access_token })).status).toBe(404);
    const review = (body: Json) => call(m(`/seeding-runs/${started.json.id}/review`), { token: owner.access_token, body });
    expect((await review({ decision: 'approve' })).status).toBe(422);
    const approved = await review({ decision: 'approve', indexes: [0] });
    expect(approved.status).toBe(200);
    expect(approved.json.decided).toBe(1);
    const rejected = await review({ decision: 'reject', all: true, reason: 'not ours' });
    expect(rejected.json.decided).toBe(1);
    const run = await finished(started.json.id, org, ['succeeded', 'failed']);
    expect(run).toMatchObject({ status: 'succeeded', progress: { stored: 1, rejected: 1, awaiting_review: 0 } });
    expect((await call(m('/memories/knowledge/review%2Fnotes%2Fa'), { token: owner.access_token })).status).toBe(200);
    expect((await call(m('/memories/knowledge/review%2Fnotes%2Fb'), { token: owner.access_token })).status).toBe(404);
    expect((await items(started.json.id, '?outcome=rejected'))[0].reason).toBe('not ours');
    expect((await review({ decision: 'approve', all: true })).status).toBe(409);
  });

  it('cancels a run: what was not written is skipped, and a finished run cannot be cancelled', async () => {
    const started = await upload('?filename=held.txt&review=true', 'text/plain', 'Held fact one.\n\nHeld fact two.');
    await finished(started.json.id);
    const cancel = await call(m(`/seeding-runs/${started.json.id}/cancel`), { token: owner.access_token, body: { reason: 'wrong file' } });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toMatchObject({ status: 'cancelled', error: 'wrong file', stop_reason: 'cancelled', progress: { skipped: 1 } });
    const again = await call(m(`/seeding-runs/${started.json.id}/cancel`), { token: owner.access_token, body: {} });
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('tag:mindgate.dev,2026:problem/run-finished');
  });

  it('refuses an oversized upload before reading it whole (413) and other media types (415)', async () => {
    const big = await upload('?filename=big.txt', 'text/plain', 'x'.repeat(MAX_UPLOAD + 1));
    expect(big.status).toBe(413);
    expect(big.json.type).toBe('tag:mindgate.dev,2026:problem/content-too-large');
    // A chunked body without Content-Length is counted while it is read: the answer comes before the end is sent.
    const url = new URL(`${api}${m('/seeding-runs?filename=stream.txt')}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      const chunk = 'y'.repeat(16 * 1024);
      const pump = () => {
        while (req.write(chunk)) if ((req.socket as net.Socket | null)?.destroyed) return;
      };
      req.on('drain', pump);
      pump();
    });
    expect(status).toBe(413);
    const pdf = await upload('?filename=a.pdf', 'application/pdf', '%PDF-1.7');
    expect(pdf.status).toBe(415);
    expect(pdf.json.type).toBe('tag:mindgate.dev,2026:problem/unsupported-media-type');
    const url2 = await call(m('/seeding-runs'), { token: owner.access_token, body: { url: 'https://example.com/runbook.md' } });
    expect(url2.status).toBe(422);
    expect(url2.json.errors).toEqual([{ loc: ['body', 'url'], msg: expect.stringMatching(/^URL sources are off/), type: 'value_error' }]);
  });

  it('streams progress over SSE, and resumes after Last-Event-ID', async () => {
    const started = await upload(
      '?filename=stream.md&key_prefix=sse/',
      'text/markdown',
      '# S\n\nOne.\n\n## T\n\nThe queue drains in four minutes.\n',
    );
    const events = await readEvents(m(`/seeding-runs/${started.json.id}/events`));
    const kinds = events.map((e) => e.event);
    expect(kinds.filter((k) => k === 'item')).toHaveLength(2);
    expect(kinds[kinds.length - 1]).toBe('end');
    expect(events.find((e) => e.event === 'progress' && e.data.status === 'succeeded')).toBeDefined();
    const firstItem = events.find((e) => e.event === 'item')!;
    const resumed = await readEvents(m(`/seeding-runs/${started.json.id}/events`), firstItem.id);
    expect(resumed.filter((e) => e.event === 'item').map((e) => e.data.key)).toEqual(
      events
        .filter((e) => e.event === 'item')
        .slice(1)
        .map((e) => e.data.key),
    );
  });

  it("keeps each organization's runs to itself", async () => {
    const started = await upload('?filename=mine.txt&review=true', 'text/plain', 'A fact of this organization only.');
    const id = started.json.id;
    const t = other.access_token;
    const theirs = other.organizationId;
    // Another organization's path: 403 on every operation.
    expect((await upload('?filename=x.txt', 'text/plain', 'x', t)).status).toBe(403);
    for (const [path, init] of [
      [m('/seeding-runs'), {}],
      [m(`/seeding-runs/${id}`), {}],
      [m(`/seeding-runs/${id}/items`), {}],
      [m(`/seeding-runs/${id}/events`), {}],
      [m(`/seeding-runs/${id}/cancel`), { body: {} }],
      [m(`/seeding-runs/${id}/review`), { body: { decision: 'approve', all: true } }],
    ] as const) {
      expect((await call(path, { token: t, ...init })).status).toBe(403);
    }
    // This run's id under one's own organization: not found.
    for (const [path, init] of [
      [m(`/seeding-runs/${id}`, theirs), {}],
      [m(`/seeding-runs/${id}/items`, theirs), {}],
      [m(`/seeding-runs/${id}/events`, theirs), {}],
      [m(`/seeding-runs/${id}/cancel`, theirs), { body: {} }],
      [m(`/seeding-runs/${id}/review`, theirs), { body: { decision: 'approve', all: true } }],
    ] as const) {
      expect((await call(path, { token: t, ...init })).status).toBe(404);
    }
    expect((await call(m('/seeding-runs', theirs), { token: t })).json.seeding_runs).toEqual([]);
  });
});
