// The Web API on the real platform: posts, post, search, status and index; the unversioned
// aliases; API-Version and the RateLimit headers on every answer (parsed as structured fields);
// 429s with Retry-After, windows moved by an injected clock, concurrent bursts, and counters
// shared by two replicas; malformed queries; the OpenAPI document; the deprecated route; and the
// authorization server metadata.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseItem, parseList } from 'structured-headers';
import { Validator } from '@seriousme/openapi-schema-validator';
import { readEdgeConfig } from '../../edge/config.ts';
import { sendJson } from '../../edge/http/respond.ts';
import { Router } from '../../edge/http/router.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { resolveApiAlias } from '../../edge/web/api.ts';
import { createLogger } from '../../services/common/log.ts';
import { testEnv } from '../support/platform.ts';

let dataDir: string;
let platform: Platform;
let replica: Platform;
let web: string;
// Frozen unless a test moves it, one second into a window, and the same for the records store's
// expiries; before the deprecated route's sunset, whatever today's date is.
let clock = Date.UTC(2026, 11, 1, 0, 0, 1);
let ipCounter = 0;
/** A fresh client address (the platform trusts 127.0.0.1 as a proxy), so tests do not share quotas. */
const newClient = () => `198.51.100.${++ipCounter}`;

async function get(pathAndQuery: string, client = newClient(), init: RequestInit = {}, base = web) {
  const res = await fetch(base + pathAndQuery, { ...init, headers: { 'x-forwarded-for': client, ...(init.headers ?? {}) } });
  const text = await res.text();
  return { res, text, json: () => JSON.parse(text) as any };
}

function expectApiHeaders(res: Response, policy: 'public-read' | 'blog-search') {
  const quota = policy === 'public-read' ? 60 : 30;
  expect(res.headers.get('api-version')).toBe('1');
  const [policyItem] = parseList(res.headers.get('ratelimit-policy')!);
  expect(policyItem[0]).toBe(policy);
  expect(Object.fromEntries(policyItem[1] as Map<string, unknown>)).toEqual({ q: quota, w: 60 });
  const [limitItem] = parseList(res.headers.get('ratelimit')!);
  expect(limitItem[0]).toBe(policy);
  const params = Object.fromEntries(limitItem[1] as Map<string, number>);
  expect(Object.keys(params).sort()).toEqual(['r', 't']);
  expect(Number.isInteger(params.r) && params.r >= 0 && params.r < quota).toBe(true);
  expect(Number.isInteger(params.t) && params.t >= 1 && params.t <= 60).toBe(true);
  expect(parseItem(res.headers.get('ratelimit-limit')!)[0]).toBe(quota);
  expect(parseItem(res.headers.get('ratelimit-remaining')!)[0]).toBe(params.r);
  expect(parseItem(res.headers.get('ratelimit-reset')!)[0]).toBe(params.t);
  return params;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-web-api-'));
  const config = readEdgeConfig(testEnv(dataDir, { TRUSTED_PROXIES: '127.0.0.1' }), 2);
  const logger = createLogger({ level: config.logLevel });
  platform = await startPlatform({ config, logger, now: () => clock });
  web = platform.urls.web;
  // A second edge on the same stores: a replica behind the same load balancer.
  const replicaConfig = readEdgeConfig(testEnv(dataDir, { TRUSTED_PROXIES: '127.0.0.1' }), 2);
  replica = await startPlatform({ config: replicaConfig, logger, stores: platform.ctx.stores, now: () => clock });
  // Searches wait for the blog's index, which embeds every post on a cold cache: a minute and
  // more on a loaded machine. It is built here, under the hook's timeout, so that the search
  // tests time the searches only. Each request has its own client address, and so its own quota.
  await Promise.all([web, replica.urls.web].map((base) => get('/api/v1/blog/search?q=warm', newClient(), {}, base)));
});

afterAll(async () => {
  await replica?.stop(500);
  await platform?.stop(500);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('authorization server metadata', () => {
  it('is a clear 404 problem while the authorization server publishes none', async () => {
    // This edge's authorization server is gone before anyone asked it for its metadata.
    await platform.edge.listeners.auth.close(0);
    for (const wellKnown of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const { res, json } = await get(wellKnown);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(json()).toMatchObject({ status: 404, title: 'Not Found' });
      expect(json().detail).toContain('authorization server');
    }
  });

  it("is the authorization server's own document, at both addresses", async () => {
    const own = await (await fetch(`${replica.urls.auth}/.well-known/openid-configuration`)).json();
    const a = await get('/.well-known/oauth-authorization-server', newClient(), {}, replica.urls.web);
    const b = await get('/.well-known/openid-configuration', newClient(), {}, replica.urls.web);
    expect(a.res.status).toBe(200);
    expect(a.json()).toEqual(own);
    expect(b.json()).toEqual(own);
    expect(a.json().issuer).toBe(replica.ctx.config.publicUrls.auth);
  });
});

describe('blog posts', () => {
  it('lists posts newest first with the agent fields, and pages through them with the cursor', async () => {
    const first = await get('/api/v1/blog/posts?limit=3');
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('content-type')).toBe('application/json');
    expectApiHeaders(first.res, 'public-read');
    const body = first.json();
    expect(body.data).toHaveLength(3);
    expect(body.pagination).toMatchObject({ limit: 3, total: expect.any(Number) });
    const post = body.data[0];
    expect(Object.keys(post.agent).sort()).toEqual(['key_claims', 'related_concepts', 'summary', 'when_to_use']);
    expect(post.links.markdown).toBe(`${platform.ctx.config.publicUrls.web}/blog/${post.slug}.md`);
    expect(first.res.headers.get('link')).toContain('rel="next"');

    const all = [...body.data];
    let cursor = body.pagination.next_cursor;
    while (cursor) {
      const page = (await get(`/api/v1/blog/posts?limit=3&cursor=${encodeURIComponent(cursor)}`)).json();
      all.push(...page.data);
      cursor = page.pagination.next_cursor;
    }
    const full = (await get('/api/v1/blog/posts?limit=100')).json();
    expect(full.pagination.next_cursor).toBeNull();
    expect(all.map((p) => p.slug)).toEqual(full.data.map((p: { slug: string }) => p.slug));
    expect(full.data.length).toBeGreaterThanOrEqual(6);
    const dates = full.data.map((p: { date: string }) => p.date);
    expect(dates).toEqual([...dates].sort().reverse());
  });

  it('filters by category', async () => {
    const body = (await get('/api/v1/blog/posts?category=Engineering&limit=100')).json();
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((p: { category: string }) => p.category === 'Engineering')).toBe(true);
    expect(body.pagination.total).toBe(body.data.length);
  });

  it('returns one post with its full text, and 404 for an unknown slug', async () => {
    const { res, json } = await get('/api/v1/blog/posts/the-brain');
    expect(res.status).toBe(200);
    expectApiHeaders(res, 'public-read');
    const post = json();
    expect(post.title).toContain('The Brain');
    expect(post.content_markdown).toContain('## Episodes and knowledge');
    expect(post.content_html).toContain('<h2 id="episodes-and-knowledge">');
    expect(post.sections[0]).toMatchObject({ heading: expect.any(String), url: expect.stringContaining('/blog/the-brain#') });

    // Conditional requests: the ETag comes back as 304 without a body, still counted and labelled.
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await get('/api/v1/blog/posts/the-brain', newClient(), { headers: { 'if-none-match': etag } });
    expect(again.res.status).toBe(304);
    expect(again.text).toBe('');
    expectApiHeaders(again.res, 'public-read');
    expect((await get('/api/v1/blog/posts/the-brain', newClient(), { headers: { 'if-none-match': '"other"' } })).res.status).toBe(200);

    for (const slug of ['no-such-post', 'THE-BRAIN', '%E0%A4%A', 'x'.repeat(500)]) {
      const missing = await get(`/api/v1/blog/posts/${slug}`);
      expect(missing.res.status).toBe(404);
      expect(missing.res.headers.get('content-type')).toBe('application/problem+json');
      expectApiHeaders(missing.res, 'public-read');
      expect(missing.json()).toMatchObject({ type: 'about:blank', title: 'Not Found', status: 404 });
    }
  });

  it('answers malformed list queries with 400 and each invalid parameter', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['category=Gossip', 'category'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${'a'.repeat(300)}`, 'cursor'],
    ];
    for (const [query, name] of cases) {
      const { res, json } = await get(`/api/v1/blog/posts?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expectApiHeaders(res, 'public-read');
      const problem = json();
      expect(problem).toMatchObject({ title: 'Bad Request', status: 400, instance: '/api/v1/blog/posts' });
      expect(problem['invalid-params'].map((p: { name: string }) => p.name)).toContain(name);
    }
  });
});

describe('blog search', () => {
  it('finds the post that answers a question, with its scores and best section', async () => {
    const { res, json } = await get('/api/v1/blog/search?q=how%20do%20I%20get%20a%20page%20as%20markdown&limit=3');
    expect(res.status).toBe(200);
    expectApiHeaders(res, 'blog-search');
    const body = json();
    expect(body.mode).toBe('hybrid');
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results.length).toBeLessThanOrEqual(3);
    expect(body.results[0].slug).toBe('web-api-for-agents');
    expect(body.results[0].scores).toEqual({ lexical: expect.any(Number), semantic: expect.any(Number) });
    expect(body.results[0].section?.url).toContain('/blog/web-api-for-agents#');
    const scores = body.results.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('filters by category and returns nothing for a query the blog does not cover', async () => {
    const eng = (await get('/api/v1/blog/search?q=oauth&category=Engineering')).json();
    expect(eng.results.every((r: { category: string }) => r.category === 'Engineering')).toBe(true);
    const none = (await get('/api/v1/blog/search?q=chocolate%20cake%20recipe')).json();
    expect(none).toMatchObject({ total: 0, results: [] });
  });

  it('answers malformed queries with 400 and each invalid parameter', async () => {
    const cases: Array<[string, string[]]> = [
      ['', ['q']],
      ['q=', ['q']],
      ['q=%20%20%20', ['q']],
      [`q=${'a'.repeat(201)}`, ['q']],
      ['q=a&q=b', ['q']],
      ['q=ab%00cd', ['q']],
      ['q=ok&limit=0', ['limit']],
      ['q=ok&limit=51', ['limit']],
      ['q=ok&limit=ten', ['limit']],
      ['q=ok&category=product', ['category']],
      ['limit=-1', ['q', 'limit']],
    ];
    for (const [query, names] of cases) {
      const { res, json } = await get(`/api/v1/blog/search?${query}`);
      expect(res.status, query).toBe(400);
      expectApiHeaders(res, 'blog-search');
      expect(
        json()
          ['invalid-params'].map((p: { name: string }) => p.name)
          .sort(),
        query,
      ).toEqual(names.sort());
    }
    // Odd but valid input is searched, not refused.
    for (const q of ['%zz', '%E2%9C%93%20unicode%20%E2%9C%93', 'a'.repeat(200), '🙂', 'SELECT * FROM posts;']) {
      const { res } = await get(`/api/v1/blog/search?q=${q}`);
      expect(res.status, q).toBe(200);
    }
  });
});

describe('platform status', () => {
  it('measures each service and store, with an overall status', async () => {
    // Wait for the search index, so the embedder is idle when it is measured.
    await get('/api/v1/blog/search?q=warm');
    const { res, json } = await get('/api/v1/platform-status');
    expect(res.status).toBe(200);
    expectApiHeaders(res, 'public-read');
    const body = json();
    expect(body.status).toBe('operational');
    expect(Date.parse(body.checked_at)).not.toBeNaN();
    const ids = body.components.map((c: { id: string }) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['brain', 'entity-graph', 'agents', 'billing', 'records', 'vectors', 'embeddings']));
    for (const c of body.components) {
      expect(c.status).toBe('operational');
      expect(typeof c.latency_ms).toBe('number');
      expect(c.latency_ms).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('versioning', () => {
  it('serves unversioned /api paths as v1', async () => {
    const v1 = await get('/api/v1/blog/posts?limit=2');
    const alias = await get('/api/blog/posts?limit=2');
    expect(alias.res.status).toBe(200);
    expect(alias.json()).toEqual(v1.json());
    expectApiHeaders(alias.res, 'public-read');
    expect((await get('/api/blog/posts/the-brain')).json().slug).toBe('the-brain');
    expect((await get('/api/blog/search?q=brain')).res.status).toBe(200);
    expect((await get('/api/platform-status')).json().components).toBeDefined();
  });

  it('keeps the alias pinned to v1 when a v2 route exists', async () => {
    const router = new Router();
    router.get('/api/v1/things', ({ res }) => sendJson(res, 200, { v: 1 }));
    router.get('/api/v2/things', ({ res }) => sendJson(res, 200, { v: 2 }));
    expect(resolveApiAlias('/api/things')).toBe('/api/v1/things');
    expect(router.match('GET', resolveApiAlias('/api/things')).match).toBeDefined();
    expect(resolveApiAlias('/api/v2/things')).toBe('/api/v2/things');
    expect(resolveApiAlias('/api')).toBe('/api');
    expect(resolveApiAlias('/apixyz')).toBe('/apixyz');
  });

  it('indexes the Web API at /api', async () => {
    for (const p of ['/api', '/api/v1']) {
      const { res, json } = await get(p);
      expect(res.status).toBe(200);
      expectApiHeaders(res, 'public-read');
      const body = json();
      expect(body.version).toBe('1');
      const ops = body.operations.map((o: { path: string }) => o.path);
      expect(ops).toEqual(
        expect.arrayContaining(['/api/v1/blog/posts', '/api/v1/blog/posts/{slug}', '/api/v1/blog/search', '/api/v1/platform-status']),
      );
      expect(body.operations.find((o: { path: string }) => o.path === '/api/v1/status').deprecated).toBe(true);
      expect(body.policies).toEqual([
        { name: 'public-read', quota: 60, window_seconds: 60 },
        { name: 'blog-search', quota: 30, window_seconds: 60 },
        { name: 'brain-pass', quota: 10, window_seconds: 60 },
      ]);
    }
  });

  it('marks the deprecated status route with Deprecation, Sunset and its successor', async () => {
    const { res, json } = await get('/api/v1/status');
    expect(res.status).toBe(200);
    expect(json().components).toBeDefined();
    const [date] = parseItem(res.headers.get('deprecation')!);
    expect(date).toEqual(new Date('2026-11-15T00:00:00Z'));
    expect(res.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(Date.parse(res.headers.get('sunset')!) - (date as Date).getTime()).toBeGreaterThanOrEqual(90 * 86_400_000);
    expect(res.headers.get('link')).toContain(`<${platform.ctx.config.publicUrls.web}/api/v1/platform-status>; rel="successor-version"`);
    const current = await get('/api/v1/platform-status');
    expect(current.res.headers.get('deprecation')).toBeNull();
  });

  it('carries API-Version and the rate-limit headers on errors too', async () => {
    const notFound = await get('/api/v1/nothing-here');
    expect(notFound.res.status).toBe(404);
    expect(notFound.res.headers.get('content-type')).toBe('application/problem+json');
    expectApiHeaders(notFound.res, 'public-read');
    const v2 = await get('/api/v2/blog/posts');
    expect(v2.res.status).toBe(404);
    expectApiHeaders(v2.res, 'public-read');
    const post = await get('/api/v1/blog/posts', newClient(), { method: 'POST', body: '{}' });
    expect(post.res.status).toBe(405);
    expect(post.res.headers.get('allow')).toContain('GET');
    expectApiHeaders(post.res, 'public-read');
    const head = await fetch(`${web}/api/v1/blog/posts`, { method: 'HEAD', headers: { 'x-forwarded-for': newClient() } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expectApiHeaders(head, 'public-read');
  });
});

describe('rate limits', () => {
  it('allows 60 reads per window per client, then answers 429 until the window resets', async () => {
    const client = newClient();
    for (let i = 1; i <= 60; i++) {
      const { res } = await get(i % 2 ? '/api/v1/blog/posts?limit=1' : '/api/v1/platform-status', client);
      expect(res.status).toBe(200);
      expect(expectApiHeaders(res, 'public-read').r).toBe(60 - i);
    }
    const { res, json } = await get('/api/v1/blog/posts/the-brain', client);
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const params = expectApiHeaders(res, 'public-read');
    expect(params).toEqual({ r: 0, t: 59 });
    expect(res.headers.get('retry-after')).toBe('59');
    expect(json()).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Too Many Requests',
      status: 429,
      instance: '/api/v1/blog/posts/the-brain',
      'violated-policies': ['public-read'],
    });
    // Another client is not affected; search has its own quota.
    expect((await get('/api/v1/blog/posts?limit=1')).res.status).toBe(200);
    expect((await get('/api/v1/blog/search?q=brain', client)).res.status).toBe(200);

    // Half a minute later: still the same window, Retry-After shrinks with it.
    clock += 30_000;
    const later = await get('/api/v1/blog/posts?limit=1', client);
    expect(later.res.status).toBe(429);
    expect(later.res.headers.get('retry-after')).toBe('29');
    // Next window: a fresh quota.
    clock += 29_000;
    const fresh = await get('/api/v1/blog/posts?limit=1', client);
    expect(fresh.res.status).toBe(200);
    expect(expectApiHeaders(fresh.res, 'public-read')).toEqual({ r: 59, t: 60 });
    clock += 1_000; // back to one second into a window, as the other tests expect
  });

  it('allows 30 searches per window per client', async () => {
    const client = newClient();
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await get(`/api/v1/blog/search?q=gateway%20${i}`, client)).res.status);
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(30)).toEqual([429, 429]);
    const problem = (await get('/api/v1/blog/search?q=x', client)).json();
    expect(problem['violated-policies']).toEqual(['blog-search']);
  });

  it('lets exactly the quota through a concurrent burst', async () => {
    const client = newClient();
    const results = await Promise.all(Array.from({ length: 90 }, () => get('/api/v1/blog/posts?limit=1', client)));
    const ok = results.filter((r) => r.res.status === 200);
    expect(ok).toHaveLength(60);
    expect(results.filter((r) => r.res.status === 429)).toHaveLength(30);
    const remaining = ok.map((r) => Number(r.res.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('shares the counters between replicas', async () => {
    const client = newClient();
    const bases = [web, replica.urls.web];
    const statuses: Array<{ base: string; status: number }> = [];
    for (let i = 0; i < 40; i++) {
      const base = bases[i % 2];
      statuses.push({ base, status: (await get(`/api/v1/blog/search?q=replica%20${i}`, client, {}, base)).res.status });
    }
    // Each replica alone would have allowed 30: together they allow 30.
    expect(statuses.filter((s) => s.status === 200)).toHaveLength(30);
    for (const base of bases) {
      expect(statuses.filter((s) => s.base === base).map((s) => s.status)).toEqual([...Array(15).fill(200), ...Array(5).fill(429)]);
    }
  });

  it('believes only the address the trusted proxy appended, not what the client wrote', async () => {
    const a = await get('/api/v1/blog/posts?limit=1', 'spoofed-1, 198.51.100.250');
    const b = await get('/api/v1/blog/posts?limit=1', '203.0.113.7, 198.51.100.250');
    expect(Number(a.res.headers.get('ratelimit-remaining'))).toBe(59);
    expect(Number(b.res.headers.get('ratelimit-remaining'))).toBe(58);
  });
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document of every operation, from the route declarations', async () => {
    const { res, json } = await get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = json();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api',
        '/api/v1/blog/posts',
        '/api/v1/blog/posts/{slug}',
        '/api/v1/blog/search',
        '/api/v1/platform-status',
        '/api/v1/status',
        '/openapi.json',
        '/llms.txt',
        '/llms-full.txt',
        '/robots.txt',
        '/sitemap.xml',
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
      ]),
    );
    expect(doc.paths['/api/v1/status'].get.deprecated).toBe(true);
    expect(doc.paths['/api/v1/platform-status'].get.deprecated).toBeUndefined();

    const search = doc.paths['/api/v1/blog/search'].get;
    const q = search.parameters.find((p: { name: string }) => p.name === 'q');
    const limit = search.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(q).toMatchObject({ in: 'query', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } });
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 } });
    expect(search.responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });
    expect(search.responses['429']).toEqual({ $ref: '#/components/responses/TooManyRequests' });
    expect(Object.keys(search.responses['200'].headers)).toEqual(
      expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'API-Version']),
    );
    expect(search['x-ratelimit-policy']).toBe('blog-search');
    expect(doc.components.schemas.PostSummary.properties.agent).toEqual({ $ref: '#/components/schemas/AgentNotes' });
    expect(doc.paths['/api/v1/blog/posts/{slug}'].get.parameters[0]).toMatchObject({ name: 'slug', in: 'path', required: true });
  });
});
