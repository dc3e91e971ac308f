// Memory seeding against the plan and the network: a run that reaches the plan's max_memories
// stops with that reason (what fits is stored, the rest skipped), and a URL source fetches a page
// from an allowed host (SEEDING_URL_HOSTS), refusing other hosts and pages that are not
// Markdown, text or JSON Lines.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS_FILE } from '../../services/billing/catalogue.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

const plansFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-plans-')), 'plans.yaml');
fs.writeFileSync(plansFile, fs.readFileSync(DEFAULT_PLANS_FILE, 'utf8').replace('max_memories: 100000', 'max_memories: 3'));

let platform: TestPlatform;
let pages: http.Server;
let pagesUrl: string;
let api: string;
let first: ObtainedToken;
let second: ObtainedToken;
let third: ObtainedToken;
const call = restClient(() => api);

const PAGES: Record<string, [string, string]> = {
  '/docs/oncall.md': [
    'text/markdown; charset=utf-8',
    '# On-call\n\n## Handover\n\nHandover happens on Mondays at 10:00.\n\n## Escalation\n\nEscalate to the incident commander after fifteen minutes.\n',
  ],
  '/runbooks/vault.html': [
    'text/html; charset=utf-8',
    '<!doctype html><html><head><title>Vault runbook</title><script>track()</script></head><body>' +
      '<nav><a href="/">Home</a> · <a href="/docs">Docs</a></nav>' +
      '<main><h1>Vault</h1><h2>Unsealing</h2><p>Vault unseals need <strong>three of five</strong> key holders.</p>' +
      '<h2>Rotation</h2><ul><li>Rotate the root token monthly.</li><li>Audit logs go to the SIEM.</li></ul></main>' +
      '<footer>© Example</footer></body></html>',
  ],
  '/manual.pdf': ['application/pdf', '%PDF-1.7'],
};

async function settled(org: string, id: string, token: string): Promise<Json> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await call(`/organizations/${org}/seeding-runs/${id}`, { token });
    if (['succeeded', 'failed', 'cancelled'].includes(run.json.status)) return run.json;
    if (Date.now() > deadline) throw new Error(`run did not finish: ${run.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  pages = http.createServer((req, res) => {
    const page = PAGES[req.url ?? ''];
    if (!page) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': page[0] }).end(page[1]);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  platform = await startOAuthTestPlatform({
    BILLING_PLANS_FILE: plansFile,
    TRIAL_DAYS: '0',
    SEEDING_URL_HOSTS: '127.0.0.1',
    SEEDING_ALLOW_PRIVATE_URLS: 'true',
    SEEDING_POLL_MS: '50',
  });
  api = platform.ctx.config.publicUrls.api;
  first = await obtainAccessToken(platform, { resource: api });
  second = await obtainAccessToken(platform, { resource: api });
  third = await obtainAccessToken(platform, { resource: api });
}, 180_000);
afterAll(async () => {
  await platform?.stop();
  await new Promise((resolve) => pages?.close(resolve));
});

describe('seeding against the plan and the network', () => {
  it("stops at the plan's max_memories with that reason, keeping what fit", async () => {
    const org = first.organizationId;
    const lines = ['alpha', 'bravo', 'charlie', 'delta', 'echo']
      .map((word, i) => JSON.stringify({ key: `codes/${word}`, content: `The ${word} door code is ${1000 + i * 7919}.` }))
      .join('\n');
    const res = await fetch(`${api}/organizations/${org}/seeding-runs?filename=codes.jsonl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.access_token}`, 'content-type': 'application/x-ndjson' },
      body: lines,
    });
    expect(res.status).toBe(201);
    const run = await settled(org, ((await res.json()) as Json).id, first.access_token);
    expect(run).toMatchObject({ status: 'failed', stop_reason: 'plan-limit', progress: { total: 5, stored: 3, skipped: 2 } });
    expect(run.error).toContain('max_memories 3');
    const skipped = await call(`/organizations/${org}/seeding-runs/${run.id}/items?outcome=skipped`, { token: first.access_token });
    expect(skipped.json.items.map((i: Json) => i.key)).toEqual(['codes/delta', 'codes/echo']);
  });

  it('seeds a Markdown page from an allowed host, and refuses other hosts and other types', async () => {
    const org = second.organizationId;
    const t = second.access_token;
    const start = (url: string) => call(`/organizations/${org}/seeding-runs`, { token: t, body: { url, key_prefix: 'web/' } });
    const started = await start(`${pagesUrl}/docs/oncall.md`);
    expect(started.status).toBe(201);
    expect(started.json.source).toMatchObject({ kind: 'url', name: `${pagesUrl}/docs/oncall.md` });
    const run = await settled(org, started.json.id, t);
    expect(run).toMatchObject({ status: 'succeeded', progress: { stored: 2 }, source: { media_type: 'text/markdown' } });
    const items = await call(`/organizations/${org}/seeding-runs/${run.id}/items`, { token: t });
    expect(items.json.items.map((i: Json) => i.key)).toEqual([
      'web/127.0.0.1/docs/oncall/handover',
      'web/127.0.0.1/docs/oncall/escalation',
    ]);
    const other = await start('http://localhost:9/x.md');
    expect(other.status).toBe(422);
    expect(other.json.errors[0].msg).toContain('localhost is not a host URL sources may fetch from');
    const pdf = await settled(org, (await start(`${pagesUrl}/manual.pdf`)).json.id, t);
    expect(pdf).toMatchObject({ status: 'failed', stop_reason: 'source' });
    expect(pdf.error).toContain('application/pdf');
  });

  it('seeds an HTML page: its main content, one memory per section, without navigation, scripts or footer', async () => {
    const org = third.organizationId;
    const t = third.access_token;
    const start = (url: string) => call(`/organizations/${org}/seeding-runs`, { token: t, body: { url, key_prefix: 'web/' } });
    const html = await settled(org, (await start(`${pagesUrl}/runbooks/vault.html`)).json.id, t);
    expect(html).toMatchObject({ status: 'succeeded', progress: { stored: 2 }, source: { media_type: 'text/html' } });
    const sections = (await call(`/organizations/${org}/seeding-runs/${html.id}/items`, { token: t })).json.items as Json[];
    expect(sections.map((i) => i.key)).toEqual(['web/127.0.0.1/runbooks/vault/unsealing', 'web/127.0.0.1/runbooks/vault/rotation']);
    const unsealing = await call(`/organizations/${org}/memories/knowledge/${encodeURIComponent(sections[0].key)}`, { token: t });
    expect(unsealing.json.title).toContain('Unsealing');
    expect(unsealing.json.content).toContain('**three of five**');
    const rotation = await call(`/organizations/${org}/memories/knowledge/${encodeURIComponent(sections[1].key)}`, { token: t });
    expect(rotation.json.content).toContain('Rotate the root token monthly.');
    for (const left of ['track()', 'Home', '© Example']) expect(JSON.stringify([unsealing.json, rotation.json])).not.toContain(left);
  });
});
