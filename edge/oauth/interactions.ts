// The pages oidc-provider sends the browser to: sign in, sign up (onboarding: account,
// organization, brain, plan), consent with the organization picker, social sign-in, and
// e-mail verification. Every form carries a CSRF token bound to the interaction (or to a
// cookie on the standalone pages).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as oidcClient from 'openid-client';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { SetPlanRequestSchema } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { RecordDoc } from '../../services/common/storage/records/interface.ts';
import type { AppContext } from '../context.ts';
import { readBody } from '../http/respond.ts';
import type { RouteContext, Router } from '../http/router.ts';
import { AccountError, MIN_PASSWORD_LENGTH, ThrottledError, type Accounts, type UserRecord } from './accounts.ts';
import type { Mailer } from './mail.ts';
import { consentPage, messagePage, PAGE_HEADERS, signInPage, signUpPage } from './pages.ts';
import type { AuthServer } from './provider.ts';

const FORM_LIMIT = 16 * 1024;
const CSRF_COOKIE = 'mg_csrf';
const SOCIAL_STATE_TTL_MS = 10 * 60 * 1000;

interface SocialStateDoc extends RecordDoc {
  uid: string;
  verifier: string;
  nonce: string;
}

interface SocialTicketDoc extends RecordDoc {
  uid: string;
  userId: string;
}

export interface InteractionsOptions {
  app: AppContext;
  server: AuthServer;
  accounts: Accounts;
  mailer: Mailer;
  cookieKey: string;
}

function send(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': String(Buffer.byteLength(html)), ...headers });
  res.end(res.req?.method === 'HEAD' ? undefined : html);
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': '0', ...headers });
  res.end();
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new FormError('expected a form (application/x-www-form-urlencoded)');
  return new URLSearchParams((await readBody(req, FORM_LIMIT)).toString('utf8'));
}

class FormError extends Error {}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function registerInteractions(router: Router, options: InteractionsOptions): void {
  const { app, server, accounts, mailer } = options;
  const { provider } = server;
  const issuer = app.config.publicUrls.auth;
  const secure = issuer.startsWith('https:');
  const records = app.stores.records;
  const socialStates = records.collection<SocialStateDoc>('auth_social_states');
  const socialTickets = records.collection<SocialTicketDoc>('auth_social_tickets');
  const social = app.config.auth.social;
  let socialConfig: Promise<oidcClient.Configuration> | undefined;

  const csrfFor = (uid: string) => createHmac('sha256', options.cookieKey).update(`csrf:${uid}`).digest('base64url');
  const checkCsrf = (uid: string, form: URLSearchParams) => equal(form.get('csrf') ?? '', csrfFor(uid));

  /** Standalone pages bind their CSRF token to a random cookie (double submit, HMAC-ed). */
  function standaloneCsrf(req: IncomingMessage, res: ServerResponse): string {
    let nonce = cookieValue(req, CSRF_COOKIE);
    if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      res.setHeader('set-cookie', `${CSRF_COOKIE}=${nonce}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
    }
    return csrfFor(`standalone:${nonce}`);
  }
  const checkStandaloneCsrf = (req: IncomingMessage, form: URLSearchParams) => {
    const nonce = cookieValue(req, CSRF_COOKIE);
    return !!nonce && equal(form.get('csrf') ?? '', csrfFor(`standalone:${nonce}`));
  };

  /** The interaction bound to this browser, or a page explaining that it is gone. */
  async function details(c: RouteContext) {
    try {
      const d = await provider.interactionDetails(c.req, c.res);
      if (d.uid !== c.params.uid) throw new Error('interaction mismatch');
      return d;
    } catch {
      send(c.res, 400, messagePage('This sign-in has expired', 'Start again from the application you were signing in to.', 'error'));
      return undefined;
    }
  }

  async function clientName(clientId: string): Promise<string> {
    const client = await provider.Client.find(clientId);
    return client?.clientName ?? clientId;
  }

  const socialLink = (uid: string) =>
    social ? { href: `/interaction/${uid}/social`, name: social.displayName } : undefined;

  async function renderSignIn(c: RouteContext, uid: string, clientId: string, extra: { status?: number; error?: string; email?: string; notice?: string; headers?: Record<string, string> } = {}) {
    send(
      c.res,
      extra.status ?? 200,
      signInPage({
        action: `/interaction/${uid}/sign-in`,
        signUpHref: `/interaction/${uid}/sign-up`,
        csrf: csrfFor(uid),
        email: extra.email,
        error: extra.error,
        notice: extra.notice,
        clientName: await clientName(clientId),
        social: socialLink(uid),
      }),
      extra.headers,
    );
  }

  async function organizationsOf(userId: string) {
    const list = await app.clients.organizations.listOrganizations({ userId });
    return list.organizations.map((o) => ({ id: o.organization!.organizationId, name: o.organization!.name }));
  }

  async function renderConsent(c: RouteContext, d: Awaited<ReturnType<typeof provider.interactionDetails>>, extra: { status?: number; error?: string } = {}) {
    const accountId = d.session!.accountId;
    const user = await accounts.get(accountId);
    const clientId = String(d.params.client_id);
    const redirectUri = String(d.params.redirect_uri ?? '');
    let redirectHost = redirectUri;
    try {
      const u = new URL(redirectUri);
      redirectHost = u.host ? `${u.protocol}//${u.host}` : `${u.protocol}`;
    } catch {}
    const resource = d.params.resource;
    send(
      c.res,
      extra.status ?? 200,
      consentPage({
        action: `/interaction/${d.uid}/consent`,
        abortAction: `/interaction/${d.uid}/abort`,
        csrf: csrfFor(d.uid),
        clientName: await clientName(clientId),
        clientId,
        redirectHost,
        userEmail: user?.email ?? accountId,
        scopes: String(d.params.scope ?? '').split(' ').filter(Boolean),
        resources: (Array.isArray(resource) ? resource : resource ? [resource] : [server.resources.api]).map(String),
        organizations: await organizationsOf(accountId),
        error: extra.error,
        notice: user && !user.emailVerified ? `We sent a verification link to ${user.email}.` : undefined,
      }),
    );
  }

  /** Onboarding: the organization, its brain and its plan (a Professional trial, or Starter). */
  async function createOrganization(name: string, ownerUserId: string): Promise<string> {
    const created = await app.clients.organizations.createOrganization({ name, ownerUserId });
    const organizationId = created.organization!.organizationId;
    const trialDays = app.config.auth.trialDays;
    await app.clients.billing.setPlan(
      create(SetPlanRequestSchema, {
        organizationId,
        plan: trialDays > 0 ? Plan.PROFESSIONAL : Plan.STARTER,
        trialEndTime: trialDays > 0 ? timestampFromMs(app.now() + trialDays * 86_400_000) : undefined,
      }),
    );
    return organizationId;
  }

  async function sendVerification(user: UserRecord): Promise<void> {
    const token = await accounts.createEmailToken(user);
    const link = `${issuer}/verify-email?token=${token}`;
    try {
      await mailer.send({
        to: user.email,
        subject: 'Verify your e-mail address for Mindgate',
        text: `Hello ${user.name},\n\nConfirm that this is your address by opening this link within 24 hours:\n\n${link}\n\nIf you did not create a Mindgate account, ignore this message.\n`,
      });
    } catch (err) {
      app.logger.warn({ err: (err as Error).message }, 'verification mail could not be sent');
    }
  }

  function signUpInput(form: URLSearchParams) {
    return {
      email: form.get('email') ?? '',
      password: form.get('password') ?? '',
      name: form.get('name') ?? '',
      organization: (form.get('organization') ?? '').trim(),
    };
  }

  /** Creates the account and its organization; answers the page itself on a user error. */
  async function signUp(form: URLSearchParams, render: (error: string, field?: string) => void): Promise<UserRecord | undefined> {
    const input = signUpInput(form);
    if (!input.organization || input.organization.length > 200) {
      render('Enter an organization name of at most 200 characters.', 'organization');
      return undefined;
    }
    let user: UserRecord;
    try {
      user = await accounts.signUp(input);
    } catch (err) {
      if (err instanceof AccountError) {
        render(err.message, err.field);
        return undefined;
      }
      throw err;
    }
    await createOrganization(input.organization, user._id);
    await sendVerification(user);
    return user;
  }

  router.get('/interaction/:uid', async (c) => {
    const d = await details(c);
    if (!d) return;
    if (d.prompt.name === 'login') return renderSignIn(c, d.uid, String(d.params.client_id));
    return renderConsent(c, d);
  });

  router.post('/interaction/:uid/sign-in', async (c) => {
    const d = await details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!checkCsrf(d.uid, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    const email = form.get('email') ?? '';
    try {
      const user = await accounts.signIn(email, form.get('password') ?? '');
      await provider.interactionFinished(c.req, c.res, { login: { accountId: user._id, amr: ['pwd'] } }, { mergeWithLastSubmission: false });
    } catch (err) {
      if (err instanceof ThrottledError) {
        return renderSignIn(c, d.uid, String(d.params.client_id), {
          status: 429,
          error: err.message,
          email,
          headers: { 'retry-after': String(err.retryAfterSeconds) },
        });
      }
      if (err instanceof AccountError) return renderSignIn(c, d.uid, String(d.params.client_id), { status: 400, error: err.message, email });
      throw err;
    }
  });

  const renderSignUp = (c: RouteContext, action: string, signInHref: string, csrf: string, status = 200, extra: { error?: string; field?: string; form?: URLSearchParams; uid?: string } = {}) => {
    const v = extra.form ? signUpInput(extra.form) : undefined;
    send(
      c.res,
      status,
      signUpPage({
        action,
        signInHref,
        csrf,
        values: v ? { email: v.email, name: v.name, organization: v.organization } : undefined,
        error: extra.error,
        errorField: extra.field,
        minPasswordLength: MIN_PASSWORD_LENGTH,
        social: extra.uid ? socialLink(extra.uid) : undefined,
      }),
    );
  };

  router.get('/interaction/:uid/sign-up', async (c) => {
    const d = await details(c);
    if (!d) return;
    renderSignUp(c, `/interaction/${d.uid}/sign-up`, `/interaction/${d.uid}`, csrfFor(d.uid), 200, { uid: d.uid });
  });

  router.post('/interaction/:uid/sign-up', async (c) => {
    const d = await details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!checkCsrf(d.uid, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    const user = await signUp(form, (error, field) =>
      renderSignUp(c, `/interaction/${d.uid}/sign-up`, `/interaction/${d.uid}`, csrfFor(d.uid), 400, { error, field, form, uid: d.uid }),
    );
    if (!user) return;
    await provider.interactionFinished(c.req, c.res, { login: { accountId: user._id, amr: ['pwd'] } }, { mergeWithLastSubmission: false });
  });

  router.post('/interaction/:uid/consent', async (c) => {
    const d = await details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!checkCsrf(d.uid, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    if (d.prompt.name !== 'consent' || !d.session?.accountId) {
      return send(c.res, 400, messagePage('Request refused', 'Sign in first.', 'error'));
    }
    const accountId = d.session.accountId;
    const clientId = String(d.params.client_id);
    let organizationId = (form.get('organization') ?? '').trim();
    const newName = (form.get('new_organization') ?? '').trim();
    if (!organizationId && newName) {
      if (newName.length > 200) return renderConsent(c, d, { status: 400, error: 'Enter an organization name of at most 200 characters.' });
      organizationId = await createOrganization(newName, accountId);
    }
    try {
      if (!organizationId) throw new ConnectError('no organization', Code.NotFound);
      await app.clients.organizations.getMembership({ organizationId, userId: accountId });
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) {
        return renderConsent(c, d, { status: 403, error: 'Pick one of your organizations.' });
      }
      throw err;
    }
    const grant = new provider.Grant({ accountId, clientId });
    const detailsOfPrompt = d.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (detailsOfPrompt.missingOIDCScope) grant.addOIDCScope(detailsOfPrompt.missingOIDCScope.join(' '));
    if (detailsOfPrompt.missingOIDCClaims) grant.addOIDCClaims(detailsOfPrompt.missingOIDCClaims);
    const granted = new Set<string>();
    for (const [indicator, scopes] of Object.entries(detailsOfPrompt.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
      granted.add(indicator);
    }
    const grantId = await grant.save();
    await server.recordGrant({
      _id: grantId,
      organizationId,
      clientId,
      accountId,
      scope: String(d.params.scope ?? ''),
      resources: [...granted],
    });
    await provider.interactionFinished(c.req, c.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  router.post('/interaction/:uid/abort', async (c) => {
    const d = await details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!checkCsrf(d.uid, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    await provider.interactionFinished(
      c.req,
      c.res,
      { error: 'access_denied', error_description: 'The user denied the request.' },
      { mergeWithLastSubmission: false },
    );
  });

  // Standalone sign-up, for people who arrive from the website rather than from an application.
  router.get('/sign-up', (c) => {
    const csrf = standaloneCsrf(c.req, c.res);
    renderSignUp(c, '/sign-up', '/sign-in', csrf);
  });

  router.post('/sign-up', async (c) => {
    const form = await readForm(c.req);
    if (!checkStandaloneCsrf(c.req, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    const csrf = standaloneCsrf(c.req, c.res);
    const user = await signUp(form, (error, field) => renderSignUp(c, '/sign-up', '/sign-in', csrf, 400, { error, field, form }));
    if (!user) return;
    send(c.res, 201, messagePage('Your account is ready', `We sent a verification link to ${user.email}. Connect an application (an MCP client, the CLI) to sign in.`));
  });

  router.get('/sign-in', (c) => {
    send(c.res, 200, messagePage('Sign in from your application', 'Sign-in starts from an application (an MCP client, the dashboard or the CLI), which sends you here. New? Create an account at /sign-up.'));
  });

  router.get('/verify-email', (c) => {
    const token = c.query.get('token') ?? '';
    const csrf = standaloneCsrf(c.req, c.res);
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) {
      return send(c.res, 400, messagePage('Link not valid', 'This verification link is malformed.', 'error'));
    }
    // A GET only shows a button, so that link scanners in mail systems cannot use up the link.
    send(
      c.res,
      200,
      messagePage('Verify your e-mail address', 'Confirm that this address is yours.').replace(
        '</main>',
        `<form method="post" action="/verify-email"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="token" value="${token}"><button type="submit">Verify my address</button></form></main>`,
      ),
    );
  });

  router.post('/verify-email', async (c) => {
    const form = await readForm(c.req);
    if (!checkStandaloneCsrf(c.req, form)) return send(c.res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
    const user = await accounts.verifyEmail(form.get('token') ?? '');
    if (!user) return send(c.res, 400, messagePage('Link not valid', 'This verification link is unknown, used or expired.', 'error'));
    send(c.res, 200, messagePage('E-mail address verified', `${user.email} is verified. You can close this page.`));
  });

  // Social sign-in through any OpenID Connect provider (openid-client, code flow with PKCE).
  async function socialClient(): Promise<oidcClient.Configuration> {
    if (!social) throw new ConnectError('social sign-in is not configured', Code.NotFound);
    socialConfig ??= oidcClient.discovery(
      new URL(social.issuer),
      social.clientId,
      social.clientSecret,
      undefined,
      social.issuer.startsWith('http:') ? { execute: [oidcClient.allowInsecureRequests] } : undefined,
    );
    socialConfig.catch(() => (socialConfig = undefined));
    return socialConfig;
  }
  const socialRedirectUri = `${issuer}/social/callback`;

  router.get('/interaction/:uid/social', async (c) => {
    const d = await details(c);
    if (!d) return;
    if (!social) return send(c.res, 404, messagePage('Not available', 'Social sign-in is not configured.', 'error'));
    const config = await socialClient();
    const verifier = oidcClient.randomPKCECodeVerifier();
    const state = oidcClient.randomState();
    const nonce = oidcClient.randomNonce();
    await socialStates.put({ _id: state, uid: d.uid, verifier, nonce, expiresAt: app.now() + SOCIAL_STATE_TTL_MS });
    const url = oidcClient.buildAuthorizationUrl(config, {
      redirect_uri: socialRedirectUri,
      scope: 'openid email profile',
      code_challenge: await oidcClient.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    redirect(c.res, url.href);
  });

  router.get('/social/callback', async (c) => {
    const state = c.query.get('state') ?? '';
    const saved = /^[A-Za-z0-9_-]{1,128}$/.test(state) ? await socialStates.take(state) : undefined;
    if (!saved) return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
    if (c.query.get('error')) {
      return send(c.res, 400, messagePage('Sign-in cancelled', 'The identity provider did not sign you in. Start again from your application.', 'error'));
    }
    let user: UserRecord;
    try {
      const config = await socialClient();
      const current = new URL(`${socialRedirectUri}?${c.query.toString()}`);
      const tokens = await oidcClient.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: saved.verifier,
        expectedState: state,
        expectedNonce: saved.nonce,
        idTokenExpected: true,
      });
      let claims: Record<string, unknown> & { iss: string; sub: string } = { ...tokens.claims()! };
      // Providers that conform ID tokens to the spec put e-mail and name in userinfo only.
      if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
        claims = { ...(await oidcClient.fetchUserInfo(config, tokens.access_token, claims.sub)), iss: claims.iss, sub: claims.sub };
      }
      ({ user } = await accounts.fromSocialIdentity({
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof claims.email === 'string' ? claims.email : undefined,
        emailVerified: claims.email_verified === true,
        name: typeof claims.name === 'string' ? claims.name : undefined,
      }));
    } catch (err) {
      if (err instanceof AccountError) return send(c.res, 409, messagePage('Cannot sign you in', err.message, 'error'));
      app.logger.warn({ err: (err as Error).message }, 'social sign-in failed');
      return send(c.res, 502, messagePage('Cannot sign you in', 'The identity provider could not confirm who you are.', 'error'));
    }
    const ticket = randomBytes(24).toString('base64url');
    await socialTickets.put({ _id: ticket, uid: saved.uid, userId: user._id, expiresAt: app.now() + 5 * 60 * 1000 });
    // Back under /interaction/<uid>, where the browser sends the interaction cookie.
    redirect(c.res, `/interaction/${saved.uid}/social/complete?ticket=${ticket}`);
  });

  router.get('/interaction/:uid/social/complete', async (c) => {
    const d = await details(c);
    if (!d) return;
    const ticketId = c.query.get('ticket') ?? '';
    const ticket = /^[A-Za-z0-9_-]{32}$/.test(ticketId) ? await socialTickets.take(ticketId) : undefined;
    if (!ticket || ticket.uid !== d.uid) return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
    await provider.interactionFinished(c.req, c.res, { login: { accountId: ticket.userId, amr: ['fed'] } }, { mergeWithLastSubmission: false });
  });

  // Form errors are the caller's, never a 500.
  void FormError;
}

export { FormError };
