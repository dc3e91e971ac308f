// The MCP-server, integration and gateway-key operations of the Agents API fuzzed from their own
// OpenAPI document with fast-check: bodies built from each operation's schema, with a value of the
// wrong type (or of any JSON type) in any field, arbitrary JSON, bodies that are not JSON, odd path
// and query values and odd Idempotency-Key and If-Match headers. Whatever comes, the answer is a
// status the document lists for the operation, never a 5xx, and every 4xx is an RFC 9457 problem
// naming its status. A failing case is shrunk by fast-check and printed with its seed.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json, type RestResult } from '../support/rest.ts';

// Removals last, so that the operations before them reach the server and key that exist.
const OPERATIONS = [
  'createMcpServer',
  'listMcpServers',
  'getMcpServer',
  'updateMcpServer',
  'testMcpServer',
  'listIntegrations',
  'installIntegration',
  'createGatewayKey',
  'listGatewayKeys',
  'rotateGatewayKey',
  'deleteMcpServer',
  'revokeGatewayKey',
];
const RUNS = 50;

let platform: TestPlatform;
let api: string;
let token: string;
let org: string;
let doc: Json;
/** Ids that exist, so that some cases reach past the lookup. */
const known: Record<string, string[]> = { server_id: [], key_id: [], integration: [] };
const call = restClient(() => api);

beforeAll(async () => {
  // No private addresses (the default), and a rate limit the fuzzing stays under.
  platform = await startOAuthTestPlatform({
    API_RATE_LIMIT_STARTER: '1000000',
    GATEWAY_REGISTRY_POLL_MS: '100',
    // The connection test reaches nowhere: an unanswered connect ends soon.
    GATEWAY_CONNECT_TIMEOUT_MS: '100',
  });
  api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  token = owner.access_token;
  org = owner.organizationId;
  platform.ctx.config.api.operatorOrganizationId = org;
  doc = (await call('/openapi.json')).json;
  const server = await call(`/organizations/${org}/mcp-servers`, { token, body: { name: 'fuzz-known', url: 'http://8.8.8.8:9/' } });
  expect(server.status).toBe(201);
  known.server_id.push(server.json.id);
  const key = await call(`/organizations/${org}/gateway-keys`, { token, body: { name: 'fuzz-known' } });
  expect(key.status).toBe(201);
  known.key_id.push(key.json.gateway_key.id);
  const catalog = await call(`/organizations/${org}/integrations?page_size=100`, { token });
  known.integration.push(...catalog.json.integrations.map((i: Json) => i.name));
  expect(known.integration).toContain('plain');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

/** A schema with its `$ref` resolved against the document's components. */
function resolve(schema: Json | undefined): Json {
  let s = schema ?? {};
  while (typeof s.$ref === 'string')
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((node: Json, part: string) => node[part], doc);
  return s;
}

const URLS = [
  'http://8.8.8.8:9/',
  'https://1.1.1.1/mcp',
  'http://127.0.0.1:1/',
  'http://169.254.169.254/latest',
  'http://[::1]/',
  'ftp://8.8.8.8/',
  'not a url',
  '',
];

/** Values that fit a schema most of the time, and of any JSON type now and then. */
function anyValue(schema: Json | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: fitting(resolve(schema), name, depth) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
}

function fitting(s: Json, name: string, depth: number): fc.Arbitrary<unknown> {
  const variants = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (variants) return fc.oneof(...variants.map((v) => fitting(resolve(v), name, depth)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'object' || s.properties) {
    if (depth > 3) return fc.constant({});
    const props = Object.fromEntries(Object.entries((s.properties ?? {}) as Json).map(([k, v]) => [k, anyValue(v, k, depth + 1)]));
    return fc.record(props, { requiredKeys: [] });
  }
  if (type === 'array') return fc.array(anyValue(s.items, name, depth + 1), { maxLength: 4 });
  if (type === 'boolean') return fc.boolean();
  if (type === 'integer') return fc.integer({ min: (s.minimum ?? -1_000) - 2, max: (s.maximum ?? 1_000_000) + 2 });
  if (type === 'number') return fc.double({ noNaN: true });
  if (type === 'null') return fc.constant(null);
  if (/url|issuer|endpoint|uri/i.test(name) || s.format === 'uri') return fc.constantFrom(...URLS);
  if (typeof s.pattern === 'string') {
    const pattern = s.pattern;
    return fc.oneof(
      fc.stringMatching(new RegExp(pattern)).filter((v) => v.length <= (s.maxLength ?? 200)),
      fc.string({ maxLength: 40 }),
    );
  }
  return fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('', ' ', 'a'.repeat(300)));
}

const NAME = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const PUBLIC_URL = fc.constantFrom('http://8.8.8.8:9/', 'https://1.1.1.1/mcp');

/** A body each operation accepts, for cases that change one or two of its fields from there. */
const VALID: Record<string, fc.Arbitrary<Json>> = {
  createMcpServer: fc.record({ name: NAME, url: PUBLIC_URL }),
  updateMcpServer: fc.oneof(
    fc.constant({}),
    fc.record({ description: fc.string({ maxLength: 20 }) }),
    fc.record({ enabled: fc.boolean() }),
  ),
  installIntegration: fc.record({ name: NAME, inputs: fc.record({ url: PUBLIC_URL }) }),
  createGatewayKey: fc.record({ name: NAME }),
  rotateGatewayKey: fc.constant({}),
  testMcpServer: fc.constant({}),
};

/** Bodies each operation accepts, tried first, so that every run has a case accepted. */
const EXAMPLE_BODIES: Record<string, Json> = {
  createMcpServer: { name: 'fuzz-example', url: 'https://1.1.1.1/mcp' },
  updateMcpServer: { description: 'Fuzzed.' },
  installIntegration: { name: 'fuzz-example-install', inputs: { url: 'https://1.1.1.1/mcp' } },
  createGatewayKey: { name: 'fuzz-example' },
  rotateGatewayKey: {},
  testMcpServer: {},
};

/** The case of an operation that reaches things that exist with a body it accepts. */
function exampleCase(op: Json): Case {
  const params = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
  const known0 = (name: string) => (name === 'organization_id' ? org : name === 'integration' ? 'plain' : (known[name]?.[0] ?? 'x'));
  const body = EXAMPLE_BODIES[op.operationId];
  return {
    params: Object.fromEntries(params.map((p) => [p.name, known0(p.name)])),
    query: {},
    body: body ? { kind: 'json', value: body } : { kind: 'none' },
    headers: {},
  };
}

/** A valid body with up to two fields replaced by anything their schema (or JSON) allows. */
function nearlyValid(operationId: string, schema: Json): fc.Arbitrary<unknown> {
  const props = (resolve(schema).properties ?? {}) as Json;
  return fc
    .tuple(VALID[operationId] ?? fc.constant({}), fc.subarray(Object.keys(props), { maxLength: Math.min(2, Object.keys(props).length) }))
    .chain(([base, keys]) =>
      fc.record(Object.fromEntries(keys.map((k) => [k, anyValue(props[k], k)]))).map((changed) => ({ ...base, ...changed })),
    );
}

/** A path segment of anything but `.` and `..`, which the client resolves away before sending. */
const ANY_SEGMENT = fc.string({ minLength: 1, maxLength: 30 }).filter((v) => v !== '.' && v !== '..');

interface Case {
  params: Record<string, string>;
  query: Record<string, string>;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | { kind: 'none' };
  headers: Record<string, string>;
}

function caseFor(op: Json, method: string): fc.Arbitrary<Case> {
  const params = (op.parameters ?? []) as Json[];
  const pathParams = Object.fromEntries(
    params
      .filter((p) => p.in === 'path')
      .map((p) => [
        p.name,
        p.name === 'organization_id'
          ? fc.oneof({ weight: 9, arbitrary: fc.constant(org) }, { weight: 1, arbitrary: ANY_SEGMENT })
          : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(known[p.name] ?? ['x'])) }, ANY_SEGMENT),
      ]),
  );
  const query = Object.fromEntries(
    params
      .filter((p) => p.in === 'query')
      .map((p) => [p.name, anyValue(p.schema, p.name).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))]),
  );
  const schema = op.requestBody?.content?.['application/json']?.schema;
  const body = schema
    ? fc.oneof(
        { weight: 4, arbitrary: nearlyValid(op.operationId, schema).map((value) => ({ kind: 'json' as const, value })) },
        { weight: 3, arbitrary: anyValue(schema).map((value) => ({ kind: 'json' as const, value })) },
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((text) => ({ kind: 'raw' as const, text: `{${text}` })) },
        { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
      )
    : fc.constant({ kind: 'none' as const });
  const headers = fc.record(
    {
      'idempotency-key': fc.string({ maxLength: 20 }).filter((k) => /^[\x20-\x7e]*$/.test(k)),
      ...(method === 'PATCH' ? { 'if-match': fc.constantFrom('"1"', '*', 'W/"1"', 'garbage', '"999"') } : {}),
    },
    { requiredKeys: [] },
  );
  return fc.record({
    params: fc.record(pathParams),
    query: fc.record(query, { requiredKeys: [] }),
    body,
    headers,
  }) as fc.Arbitrary<Case>;
}

async function send(path: string, method: string, c: Case): Promise<RestResult> {
  const url = path.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(c.params[name] ?? 'x'));
  const search = new URLSearchParams(c.query).toString();
  const target = search ? `${url}?${search}` : url;
  const init = { method, token, headers: c.headers };
  if (c.body.kind === 'json') return call(target, { ...init, body: c.body.value });
  if (c.body.kind === 'raw') return call(target, { ...init, rawBody: c.body.text });
  return call(target, init);
}

describe('fuzzing the registry operations', () => {
  for (const operationId of OPERATIONS) {
    it(`${operationId}: documented statuses only, problems for every 4xx, never a 5xx`, async () => {
      const [path, method, op] = Object.entries(doc.paths as Record<string, Record<string, Json>>)
        .flatMap(([p, ops]) => Object.entries(ops).map(([m, o]) => [p, m.toUpperCase(), o] as const))
        .find(([, , o]) => o.operationId === operationId)!;
      const documented = Object.keys(op.responses as Json);
      const answered = new Set<number>();
      await fc.assert(
        fc.asyncProperty(caseFor(op, method), async (c) => {
          const res = await send(path, method, c);
          answered.add(res.status);
          expect(res.status, res.text).toBeLessThan(500);
          expect(documented, `${res.status} ${res.text}`).toContain(String(res.status));
          if (res.status >= 400) {
            expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            expect(res.json.status).toBe(res.status);
          }
        }),
        // The example first: with it, some case is accepted whatever the random ones are.
        { numRuns: RUNS, examples: [[exampleCase(op)]] },
      );
      // The cases got past validation too: some were accepted, some refused.
      expect(
        [...answered].some((status) => status < 300),
        [...answered].join(' '),
      ).toBe(true);
      expect(
        [...answered].some((status) => status >= 400),
        [...answered].join(' '),
      ).toBe(true);
    }, 120_000);
  }
});
