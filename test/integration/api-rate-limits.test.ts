// Per-plan rate limits of the Agents API over real HTTP: each organization counted on its own,
// against the quota of the plan in force, with RateLimit headers on every authenticated answer and
// a 429 problem with Retry-After once the quota is spent. Quotas are set small for the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { QUOTA_EXCEEDED_TYPE } from '../../edge/http/rate-limit.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let trial: ObtainedToken;
let starter: ObtainedToken;
const call = restClient(() => api);
const org = (t: ObtainedToken) => `/organizations/${t.organizationId}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ API_RATE_LIMIT_STARTER: '4', API_RATE_LIMIT_PROFESSIONAL: '7' });
  api = platform.ctx.config.publicUrls.api;
  trial = await obtainAccessToken(platform, { resource: api });
  starter = await obtainAccessToken(platform, { resource: api });
  await platform.ctx.clients.billing.setPlan({ organizationId: starter.organizationId, plan: Plan.STARTER });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** Waits out a window about to end, so a burst is counted in one window. */
async function freshWindow(t: ObtainedToken): Promise<number> {
  const first = await call(org(t), { token: t.access_token });
  const reset = Number(first.headers.get('ratelimit-reset'));
  if (reset > 10) return 1;
  await new Promise((resolve) => setTimeout(resolve, reset * 1_000 + 200));
  return 0;
}

describe('per-plan rate limits', () => {
  it("counts an organization against its plan's quota and answers 429 with Retry-After past it", async () => {
    let used = await freshWindow(trial);
    const answers = [];
    for (; used < 8; used++) answers.push(await call(org(trial), { token: trial.access_token }));
    const ok = answers.slice(0, answers.length - 1);
    for (const r of ok) {
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('"api-professional";q=7;w=60');
      expect(r.headers.get('ratelimit')).toMatch(/^"api-professional";r=\d+;t=\d+$/);
    }
    const refused = answers[answers.length - 1];
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBe(Number(refused.headers.get('ratelimit-reset')));
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('counts each organization on its own, Starter with its own quota', async () => {
    let used = await freshWindow(starter);
    const statuses: number[] = [];
    for (; used < 5; used++) statuses.push((await call(`${org(starter)}/members`, { token: starter.access_token })).status);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
    const last = await call(org(starter), { token: starter.access_token });
    expect(last.headers.get('ratelimit-policy')).toBe('"api-starter";q=4;w=60');
  });

  // The rate limit counts an organization's callers: operations reached with its token or key. The
  // alert receive URL, authenticated by its source's own secret, is outside it.
  it('documents 429 on every operation reached with an organization token, and leaves /health unlimited', async () => {
    const doc = (await call('/openapi.json')).json;
    type Operation = { security?: Record<string, unknown>[]; responses: object };
    const secured = Object.values(doc.paths as Record<string, Record<string, Operation>>)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => (op.security ?? []).some((scheme) => 'BearerToken' in scheme));
    expect(secured.length).toBeGreaterThan(10);
    for (const op of secured) expect(op.responses).toHaveProperty('429');
    expect((await call('/health')).headers.get('ratelimit')).toBeNull();
  });
});
