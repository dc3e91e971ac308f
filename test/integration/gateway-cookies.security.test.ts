// The gateway is the boundary between browsers, itself and the backends it serves on its own
// origin. A hostile co-hosted backend must neither read nor set the gateway's cookies (the
// facade's browser binding) nor the other listeners' (a browser sends a host's cookies to every
// port of it), and so cannot walk a victim through the facade to a redirect URI of its choosing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPlatformCookie } from '../../edge/gateway/platform-cookies.ts';
import { createBrowser, parseConsentPage, type Browser } from '../support/gateway-browser.ts';
import { startGatewayEnv, type GatewayEnv } from '../support/gateway-env.ts';
import { authorizeUrl, pkce, postForm, rawRequest, register } from '../support/gateway-flow.ts';
import { authorize, CookieJar, newTestUser, registerClient, startOAuthTestPlatform } from '../support/oauth-client.ts';

let env: GatewayEnv;
let base: string;
const VICTIM_REDIRECT = 'http://127.0.0.1:45888/callback';
const ATTACKER_REDIRECT = 'http://127.0.0.1:45999/steal';

beforeAll(async () => {
  env = await startGatewayEnv();
  base = env.base;
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

interface AttackerFlow {
  ticket: string;
  action: string;
  clientId: string;
  verifier: string;
  /** The Set-Cookie lines the gateway answered the attacker's own request with. */
  setCookie: string[];
}

/** The attacker, from its own machine: a client of its own, and a consent ticket for `cookie`. */
async function attackerFlow(cookie?: string): Promise<AttackerFlow> {
  const clientId = String((await register(base, 'alpha', ATTACKER_REDIRECT)).client_id);
  const p = pkce();
  const url = authorizeUrl(`${base}/alpha/oauth/authorize`, {
    clientId,
    redirectUri: ATTACKER_REDIRECT,
    challenge: p.challenge,
    state: 'evil',
  });
  const res = await fetch(url, { headers: cookie ? { cookie } : {} });
  const { ticket, action } = parseConsentPage(await res.text());
  return { ticket, action, clientId, verifier: p.verifier, setCookie: res.headers.getSetCookie() };
}

/**
 * The hostile page submits the attacker's consent form in the victim's browser (same site: the
 * browser sends its cookies), and the browser follows the redirects through the upstream IdP,
 * where the victim is signed in. Returns the tokens the attacker redeems, if it got that far.
 */
async function walkVictim(victim: Browser, flow: AttackerFlow): Promise<Record<string, unknown> | undefined> {
  const answer = await victim.postForm(flow.action, { ticket: flow.ticket, decision: 'approve' });
  if (answer.status !== 302 || !answer.location) return undefined;
  const { stoppedAt } = await victim.follow(answer.location, ATTACKER_REDIRECT);
  const code = stoppedAt ? new URL(stoppedAt).searchParams.get('code') : null;
  if (!code) return undefined;
  const res = await postForm(`${base}/alpha/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: ATTACKER_REDIRECT,
    code_verifier: flow.verifier,
    client_id: flow.clientId,
  });
  return res.status === 200 ? res.body : undefined;
}

/** The victim opens a consent page of its own, which gives its browser the binding cookies. */
async function victimWithBinding(): Promise<Browser> {
  const victim = createBrowser();
  const clientId = String((await register(base, 'alpha', VICTIM_REDIRECT)).client_id);
  const page = await victim.get(
    authorizeUrl(`${base}/alpha/oauth/authorize`, { clientId, redirectUri: VICTIM_REDIRECT, challenge: pkce().challenge }),
  );
  expect(page.status).toBe(200);
  return victim;
}

describe("a hostile backend on the gateway's origin", () => {
  it("cannot read the victim's binding and use it to obtain the victim's upstream tokens", async () => {
    const victim = await victimWithBinding();
    // The victim visits the hostile backend's page; the backend keeps every cookie it is sent.
    const page = await victim.get(`${base}/open/echo`);
    const seen = String((JSON.parse(page.text) as { headers: { cookie?: string } }).headers.cookie ?? '');
    const flow = await attackerFlow(seen || undefined);
    expect(await walkVictim(victim, flow)).toBeUndefined();
    expect(seen).not.toContain('mindgate-gw');
  });

  it("cannot fix the victim's binding with Set-Cookie and then use it", async () => {
    // The attacker's own request gives it binding values it knows; its page sets them in the
    // victim's browser, exactly as the gateway sent them to the attacker.
    const flow = await attackerFlow();
    expect(flow.setCookie.length).toBeGreaterThan(0);
    for (const victim of [createBrowser(), await victimWithBinding()]) {
      const hostile = new URL(`${base}/open/set-cookie`);
      for (const line of flow.setCookie) hostile.searchParams.append('c', line);
      expect((await victim.get(hostile.href)).status).toBe(200);
      expect(await walkVictim(victim, flow)).toBeUndefined();
    }
  });

  it("never receives the platform's cookies, in any case or prefix, and keeps its own", async () => {
    const before = env.alpha.seen.length;
    await rawRequest(base, 'GET', '/open/echo', {
      cookie: [
        'theirs=1',
        '__Host-mindgate-gw-binding=b1',
        '__host-MINDGATE-GW-BINDING=b2',
        '__Secure-mindgate-gw-facade-binding=f1',
        '_session=s1',
        '_session.sig=s2',
        '_interaction=i1',
        '_interaction.sig=i2',
        '_interaction_resume=r1',
        '_interaction_resume.sig=r2',
        'mg_csrf=c1',
        '__Secure-_session=s3',
        'also-theirs=2',
        '_session_x=kept',
      ].join('; '),
    });
    const seen = env.alpha.seen.slice(before).find((r) => r.url === '/raw/echo')!;
    expect(seen.headers.cookie).toBe('theirs=1; also-theirs=2; _session_x=kept');
  });

  it('sends no Cookie header when every cookie was the platform’s', async () => {
    const before = env.alpha.seen.length;
    await rawRequest(base, 'GET', '/open/echo', { cookie: '__Host-mindgate-gw-binding=b1; _session=s1' });
    const seen = env.alpha.seen.slice(before).find((r) => r.url === '/raw/echo')!;
    expect(seen.headers.cookie).toBeUndefined();
  });

  it("cannot set, overwrite or clear the platform's cookies, and still sets its own", async () => {
    const hostile = new URL(`${base}/open/set-cookie`);
    const lines = [
      'theirs=1; Path=/',
      '__Host-mindgate-gw-binding=x; Path=/; Secure; HttpOnly',
      '__HOST-Mindgate-Gw-Binding=x; Path=/; Secure',
      '__Secure-mindgate-gw-facade-binding=x; Path=/alpha/oauth; Secure',
      '__Host-mindgate-gw-binding=; Max-Age=0; Path=/; Secure',
      ' _session=x; Path=/',
      '_interaction.sig=x; Path=/interaction',
      'MG_CSRF=x; Path=/',
      // Nameless cookies, which browsers send back as their bare value: `_session=x`.
      '=_session=x; Path=/',
      ' =__Host-mindgate-gw-binding=x; Path=/; Secure',
      '_interaction; Path=/',
      'also-theirs=2; Path=/open',
    ];
    for (const line of lines) hostile.searchParams.append('c', line);
    const res = await fetch(hostile);
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(['theirs=1; Path=/', 'also-theirs=2; Path=/open']);
  });

  it('cannot clear every cookie of the site with Clear-Site-Data', async () => {
    const res = await fetch(`${base}/open/set-cookie?clear=1&c=${encodeURIComponent('theirs=1; Path=/')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('clear-site-data')).toBeNull();
    expect(res.headers.getSetCookie()).toEqual(['theirs=1; Path=/']);
  });

  it("never serves the facade's cookie path: /{server}/oauth/* is the gateway's, not the backend's", async () => {
    const before = env.alpha.seen.length;
    for (const path of ['/open/oauth', '/open/oauth/', '/open/oauth/other', '/alpha/oauth/anything?x=1']) {
      const res = await rawRequest(base, 'GET', path, { authorization: 'Bearer x' });
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body), path).toMatchObject({ error: 'not_found' });
    }
    expect(env.alpha.seen.length).toBe(before);
  });

  it('keeps half of the binding in a cookie scoped to the facade path, which the browser never sends to a backend', async () => {
    const victim = await victimWithBinding();
    const host = victim.cookies.get(new URL(base).host)!;
    const paths = [...host.values()].map((c) => `${c.name} ${c.path}`).sort();
    expect(paths).toEqual(['__Host-mindgate-gw-binding /', '__Secure-mindgate-gw-facade-binding /alpha/oauth']);
    expect(victim.cookieHeader(`${base}/open/echo`)).not.toContain('facade-binding');
    expect(victim.cookieHeader(`${base}/alpha/oauth/callback`)).toContain('facade-binding');
  });
});

describe("the platform's cookie list", () => {
  it('covers every cookie the authorization server sets during a sign-up and sign-in', async () => {
    const platform = await startOAuthTestPlatform();
    try {
      const names = new Set<string>();
      class RecordingJar extends CookieJar {
        override store(res: Response): void {
          for (const line of res.headers.getSetCookie()) names.add(line.slice(0, line.indexOf('=')).trim());
          super.store(res);
        }
      }
      const authUrl = platform.ctx.config.publicUrls.auth;
      const client = await registerClient(authUrl);
      const user = newTestUser('cookies');
      await authorize(authUrl, { client, user, jar: new RecordingJar() });
      await authorize(authUrl, { client, user, mode: 'sign-in', jar: new RecordingJar() });
      expect(names.size).toBeGreaterThan(2);
      expect([...names].filter((n) => !isPlatformCookie(n))).toEqual([]);
    } finally {
      await platform.stop();
    }
  });
});
