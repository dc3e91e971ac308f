// The fixed-window limiter on the real embedded records store, with an injected clock (time is
// moved, never waited for), and the client-IP rules it keys on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseItem, parseList } from 'structured-headers';
import { createClientIpResolver, normalizeIp, parseProxyEntry, rateLimitKey } from '../../edge/http/client-ip.ts';
import { createRateLimiter, rateLimitHeaders, type RateLimitPolicy } from '../../edge/http/rate-limit.ts';
import { readWebConfig } from '../../edge/web/config.ts';
import { ConfigError } from '../../services/common/config.ts';
import { createSqliteRecordStore, type SqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';

const POLICY: RateLimitPolicy = { name: 'public-read', quota: 60, windowSeconds: 60 };

let dir: string;
let store: SqliteRecordStore;
// Start at a window boundary a little ahead of real time: the store expires documents by its
// own clock, which is this one too.
let clock = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
const now = () => clock;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-web-rl-'));
  store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), now, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('fixed-window limiter', () => {
  it('allows exactly the quota in a window, then refuses until the window resets', async () => {
    const limiter = createRateLimiter({ records: store, now });
    const key = 'client-a';
    for (let i = 1; i <= 60; i++) {
      const d = await limiter.consume(POLICY, key);
      expect(d.allowed).toBe(true);
      expect(d.remaining).toBe(60 - i);
      expect(d.resetSeconds).toBe(60);
    }
    const over = await limiter.consume(POLICY, key);
    expect(over).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 });

    clock += 42_500;
    const later = await limiter.consume(POLICY, key);
    expect(later.allowed).toBe(false);
    // 17.5 s left: whole seconds, rounded up, never 0.
    expect(later.resetSeconds).toBe(18);

    clock += 17_499;
    expect((await limiter.consume(POLICY, key)).resetSeconds).toBe(1);

    clock += 1; // the next window starts
    const fresh = await limiter.consume(POLICY, key);
    expect(fresh).toMatchObject({ allowed: true, remaining: 59, resetSeconds: 60 });
  });

  it('counts clients and policies separately', async () => {
    const limiter = createRateLimiter({ records: store, now });
    const search: RateLimitPolicy = { name: 'blog-search', quota: 2, windowSeconds: 60 };
    expect((await limiter.consume(search, 'x')).remaining).toBe(1);
    expect((await limiter.consume(search, 'x')).remaining).toBe(0);
    expect((await limiter.consume(search, 'x')).allowed).toBe(false);
    expect((await limiter.consume(search, 'y')).allowed).toBe(true);
    expect((await limiter.consume(POLICY, 'x')).allowed).toBe(true);
  });

  it('lets exactly the quota through a concurrent burst, across limiter instances (replicas)', async () => {
    const replicas = [createRateLimiter({ records: store, now }), createRateLimiter({ records: store, now })];
    const burst = await Promise.all(Array.from({ length: 150 }, (_, i) => replicas[i % 2].consume(POLICY, 'burst-client')));
    expect(burst.filter((d) => d.allowed)).toHaveLength(60);
    const remainders = burst
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((a, b) => a - b);
    // Every allowed request saw a distinct count.
    expect(remainders).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('counts on the replica alone when the store is unavailable, instead of failing', async () => {
    const broken = createSqliteRecordStore({ path: path.join(dir, 'broken.sqlite'), now, sweepIntervalMs: 0 });
    const limiter = createRateLimiter({ records: broken, now });
    await broken.close();
    const policy: RateLimitPolicy = { name: 'p', quota: 2, windowSeconds: 10 };
    expect((await limiter.consume(policy, 'k')).allowed).toBe(true);
    expect((await limiter.consume(policy, 'k')).allowed).toBe(true);
    expect((await limiter.consume(policy, 'k')).allowed).toBe(false);
  });

  it('formats the headers as draft-ietf-httpapi-ratelimit-headers structured fields', () => {
    const headers = rateLimitHeaders({ policy: POLICY, allowed: true, remaining: 42, resetSeconds: 17 });
    const [policy] = parseList(headers['ratelimit-policy']);
    expect(policy[0]).toBe('public-read');
    expect(Object.fromEntries(policy[1] as Map<string, unknown>)).toEqual({ q: 60, w: 60 });
    const [limit] = parseList(headers.ratelimit);
    expect(limit[0]).toBe('public-read');
    expect(Object.fromEntries(limit[1] as Map<string, unknown>)).toEqual({ r: 42, t: 17 });
    expect(parseItem(headers['ratelimit-limit'])[0]).toBe(60);
    expect(parseItem(headers['ratelimit-remaining'])[0]).toBe(42);
    expect(parseItem(headers['ratelimit-reset'])[0]).toBe(17);
  });
});

function request(remoteAddress: string, forwardedFor?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

describe('client IP', () => {
  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const resolve = createClientIpResolver([]);
    expect(resolve(request('203.0.113.9', '198.51.100.1'))).toBe('203.0.113.9');
    expect(resolve(request('::ffff:203.0.113.9'))).toBe('203.0.113.9');
  });

  it('reads X-Forwarded-For from the right through trusted proxies only', () => {
    const resolve = createClientIpResolver(['10.0.0.0/8', '192.168.1.7']);
    // The client wrote a fake address on the left; the proxy appended the real one.
    expect(resolve(request('10.1.2.3', '1.1.1.1, 203.0.113.9'))).toBe('203.0.113.9');
    // Two trusted hops.
    expect(resolve(request('10.1.2.3', '1.1.1.1, 203.0.113.9, 192.168.1.7'))).toBe('203.0.113.9');
    // Several header lines are one list.
    expect(resolve(request('10.1.2.3', ['1.1.1.1', '203.0.113.9, 10.9.9.9']))).toBe('203.0.113.9');
    // Ports and brackets that some proxies write.
    expect(resolve(request('10.1.2.3', '203.0.113.9:4711'))).toBe('203.0.113.9');
    expect(resolve(request('10.1.2.3', '"[2001:db8::1]:443"'))).toBe('2001:db8::1');
    // An untrusted peer's header is ignored.
    expect(resolve(request('203.0.113.50', '1.1.1.1'))).toBe('203.0.113.50');
    // A malformed entry stops the walk at the last trusted hop.
    expect(resolve(request('10.1.2.3', 'not-an-ip'))).toBe('10.1.2.3');
    expect(resolve(request('10.1.2.3', '1.1.1.1, garbage, 10.2.2.2'))).toBe('10.2.2.2');
    // No header: the proxy itself.
    expect(resolve(request('10.1.2.3'))).toBe('10.1.2.3');
  });

  it('keys IPv6 clients by their /64 and IPv4 clients by their address', () => {
    expect(rateLimitKey('2001:db8:1:2:aaaa::1')).toBe('2001:0db8:0001:0002::/64');
    expect(rateLimitKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:0db8:0001:0002::/64');
    expect(rateLimitKey('::1')).toBe('0000:0000:0000:0000::/64');
    expect(rateLimitKey('203.0.113.9')).toBe('203.0.113.9');
    expect(normalizeIp('::FFFF:198.51.100.7')).toBe('198.51.100.7');
  });

  it('accepts IPs and CIDRs in TRUSTED_PROXIES and names the variable otherwise', () => {
    expect(parseProxyEntry('10.0.0.0/8')).toMatchObject({ prefix: 8, family: 'ipv4' });
    expect(parseProxyEntry('fd00::/8')).toMatchObject({ prefix: 8, family: 'ipv6' });
    expect(parseProxyEntry('10.0.0.0/33')).toBeUndefined();
    expect(parseProxyEntry('proxy.local')).toBeUndefined();
    expect(readWebConfig({ TRUSTED_PROXIES: ' 127.0.0.1, 10.0.0.0/8 ' }).trustedProxies).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(() => readWebConfig({ TRUSTED_PROXIES: '127.0.0.1, nope' })).toThrow(ConfigError);
    expect(() => readWebConfig({ TRUSTED_PROXIES: 'nope' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => readWebConfig({ WEB_STATUS_CACHE_MS: 'soon' })).toThrow(/WEB_STATUS_CACHE_MS/);
  });
});
