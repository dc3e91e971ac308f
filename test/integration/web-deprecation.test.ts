// The deprecation mechanism of edge/http, usable by any API: one declaration on a route gives
// its responses Deprecation (RFC 9745), Sunset (RFC 8594) and successor links, marks it
// deprecated in the OpenAPI document, refuses sunsets under 90 days, and retires the route
// once the sunset has passed. Exercised on a real listener with an injected clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseItem } from 'structured-headers';
import * as z from 'zod';
import { defineApiRoute, integerParam, mountApiRoutes } from '../../edge/http/api-route.ts';
import { defineDeprecation, DeprecationError, deprecationHeaders, MIN_SUNSET_NOTICE_DAYS } from '../../edge/http/deprecation.ts';
import { startListener, type Listener } from '../../edge/http/listener.ts';
import { buildOpenApiDocument } from '../../edge/http/openapi.ts';
import { createProblemSurface } from '../../edge/http/problem-surface.ts';
import { sendJson, sendProblem } from '../../edge/http/respond.ts';
import { Router } from '../../edge/http/router.ts';
import { STATUS_ALIAS_DEPRECATION } from '../../edge/web/api.ts';
import { createLogger } from '../../services/common/log.ts';

const deprecation = defineDeprecation({
  deprecatedAt: '2026-11-15T00:00:00Z',
  sunsetAt: '2027-03-01T00:00:00Z',
  successor: '/v2/things',
  documentation: 'https://docs.example.com/deprecations/things-v1',
});

const routes = [
  defineApiRoute({
    method: 'GET',
    path: '/v1/things',
    operationId: 'listThingsV1',
    summary: 'List things (v1)',
    query: z.object({ limit: integerParam({ min: 1, max: 10, default: 5 }) }),
    responses: { '200': { description: 'Things.', content: { 'application/json': z.object({ things: z.array(z.number()) }) } } },
    deprecation,
    handler: ({ res, input }) => sendJson(res, 200, { things: Array.from({ length: input.query.limit }, (_, i) => i) }),
  }),
  defineApiRoute({
    method: 'GET',
    path: '/v2/things',
    operationId: 'listThings',
    summary: 'List things',
    responses: { '200': { description: 'Things.' } },
    handler: ({ res }) => sendJson(res, 200, { things: [] }),
  }),
];

let clock = Date.parse('2026-12-01T00:00:00Z');
let listener: Listener;

beforeAll(async () => {
  const router = new Router();
  mountApiRoutes(router, routes, {
    baseUrl: 'https://api.example.com',
    now: () => clock,
    onInvalid: (ctx, invalid) => sendProblem(ctx.res, { title: 'Bad Request', status: 400, 'invalid-params': invalid }),
  });
  const logger = createLogger({ level: 'silent' });
  listener = await startListener(createProblemSurface('test', router, logger), { host: '127.0.0.1', port: 0, logger });
});

afterAll(async () => {
  await listener.close(0);
});

describe('a deprecated route', () => {
  it('answers as before, with Deprecation, Sunset and the successor and deprecation links', async () => {
    const res = await fetch(`${listener.url}/v1/things?limit=2`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ things: [0, 1] });

    // RFC 9745: an RFC 9651 Date item.
    const [when] = parseItem(res.headers.get('deprecation')!);
    expect(when).toBeInstanceOf(Date);
    expect((when as Date).toISOString()).toBe('2026-11-15T00:00:00.000Z');
    // RFC 8594: an HTTP date, not before the deprecation.
    const sunset = res.headers.get('sunset')!;
    expect(sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(Date.parse(sunset)).toBeGreaterThanOrEqual((when as Date).getTime() + MIN_SUNSET_NOTICE_DAYS * 86_400_000);

    const link = res.headers.get('link')!;
    expect(link).toContain('<https://api.example.com/v2/things>; rel="successor-version"');
    expect(link).toContain('<https://docs.example.com/deprecations/things-v1>; rel="deprecation"');
  });

  it('carries the headers on its error responses too', async () => {
    const res = await fetch(`${listener.url}/v1/things?limit=zero`);
    expect(res.status).toBe(400);
    expect(res.headers.get('deprecation')).toBe('@1794700800');
    expect(res.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
  });

  it('leaves routes that are not deprecated alone', async () => {
    const res = await fetch(`${listener.url}/v2/things`);
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
    expect(res.headers.get('link')).toBeNull();
  });

  it('answers 410 Gone, pointing at the successor, once the sunset has passed', async () => {
    const saved = clock;
    clock = Date.parse('2027-03-01T00:00:00Z');
    try {
      const res = await fetch(`${listener.url}/v1/things`);
      expect(res.status).toBe(410);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = (await res.json()) as { status: number; detail: string };
      expect(body.status).toBe(410);
      expect(body.detail).toContain('/v2/things');
      expect(res.headers.get('link')).toContain('rel="successor-version"');
    } finally {
      clock = saved;
    }
  });

  it('is marked deprecated in the OpenAPI document built from the same declaration', () => {
    const doc = buildOpenApiDocument(routes, { info: { title: 'Things', version: '2.0.0' } }) as {
      paths: Record<string, { get: Record<string, unknown> }>;
    };
    const v1 = doc.paths['/v1/things'].get;
    expect(v1.deprecated).toBe(true);
    expect(v1['x-sunset']).toBe('2027-03-01');
    expect(v1.description).toContain('Use /v2/things instead');
    const headers = (v1.responses as Record<string, { headers: Record<string, unknown> }>)['200'].headers;
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    expect(doc.paths['/v2/things'].get.deprecated).toBeUndefined();
  });
});

describe('a deprecation declaration', () => {
  it('refuses a sunset less than 90 days after the deprecation', () => {
    expect(() => defineDeprecation({ deprecatedAt: '2026-11-15', sunsetAt: '2027-02-12' })).toThrow(DeprecationError);
    expect(() => defineDeprecation({ deprecatedAt: '2026-11-15', sunsetAt: '2026-11-01' })).toThrow(/at least 90 days/);
    expect(defineDeprecation({ deprecatedAt: '2026-11-15', sunsetAt: '2027-02-13' }).sunsetAt.toISOString()).toBe(
      '2027-02-13T00:00:00.000Z',
    );
  });

  it('refuses invalid dates and links', () => {
    expect(() => defineDeprecation({ deprecatedAt: 'soon', sunsetAt: '2027-03-01' })).toThrow(/deprecatedAt/);
    expect(() => defineDeprecation({ deprecatedAt: '2026-11-15', sunsetAt: '2027-03-01', successor: 'javascript:alert(1)' })).toThrow(
      /successor/,
    );
  });

  it('keeps relative links relative without a base URL', () => {
    const headers = deprecationHeaders(defineDeprecation({ deprecatedAt: '2026-01-01', sunsetAt: '2026-06-01', successor: '/v2' }));
    expect(headers.links).toEqual(['</v2>; rel="successor-version"']);
    expect(headers.deprecation).toBe(`@${Date.parse('2026-01-01') / 1000}`);
  });

  it('gives the Web API its real deprecated route at least 90 days of notice', () => {
    const notice = STATUS_ALIAS_DEPRECATION.sunsetAt.getTime() - STATUS_ALIAS_DEPRECATION.deprecatedAt.getTime();
    expect(notice).toBeGreaterThanOrEqual(90 * 86_400_000);
    expect(STATUS_ALIAS_DEPRECATION.successor).toBe('/api/v1/platform-status');
  });
});
