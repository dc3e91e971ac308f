// What every interaction route shares: page and redirect responses, form reading, the CSRF
// tokens (bound to the interaction, or to a cookie on the standalone pages), and the lookup of
// the interaction bound to this browser.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createPeopleAudit, type PeopleStep } from '../../api/audit.ts';
import type { AppContext } from '../../context.ts';
import { readBody } from '../../http/respond.ts';
import type { RouteContext } from '../../http/router.ts';
import type { Accounts } from '../accounts.ts';
import { messagePage, PAGE_HEADERS } from '../pages.ts';
import type { AuthServer } from '../provider.ts';

const FORM_LIMIT = 16 * 1024;
const CSRF_COOKIE = 'mg_csrf';

export interface InteractionsOptions {
  app: AppContext;
  server: AuthServer;
  accounts: Accounts;
  cookieKey: string;
}

/** A form the caller got wrong: answered with a 400 page, never a 500. */
export class FormError extends Error {}

export function send(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': String(Buffer.byteLength(html)), ...headers });
  res.end(res.req?.method === 'HEAD' ? undefined : html);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': '0', ...headers });
  res.end();
}

/** The 403 page of a form whose CSRF token does not match. */
export function refuseForm(res: ServerResponse): void {
  send(res, 403, messagePage('Request refused', 'The form was not valid. Go back and try again.', 'error'));
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new FormError('expected a form (application/x-www-form-urlencoded)');
  return new URLSearchParams((await readBody(req, FORM_LIMIT)).toString('utf8'));
}

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

export type InteractionKit = ReturnType<typeof createInteractionKit>;
export type InteractionDetails = Awaited<ReturnType<AuthServer['provider']['interactionDetails']>>;

/** The shared state and helpers of the interaction routes, built once per authorization server. */
export function createInteractionKit(options: InteractionsOptions) {
  const { app, server } = options;
  const issuer = app.config.publicUrls.auth;
  const social = app.config.auth.social;
  const csrfFor = (uid: string) => createHmac('sha256', options.cookieKey).update(`csrf:${uid}`).digest('base64url');
  const peopleAudit = createPeopleAudit(app);
  return {
    ...options,
    provider: server.provider,
    records: app.stores.records,
    issuer,
    social,
    csrfFor,
    checkCsrf: (uid: string, form: URLSearchParams) => equal(form.get('csrf') ?? '', csrfFor(uid)),
    ...standaloneCsrf(csrfFor, issuer.startsWith('https:')),
    ...interactionLookup(server.provider),
    socialLink: (uid: string) => (social ? { href: `/interaction/${uid}/social`, name: social.displayName } : undefined),
    /** Records a person's step (sign-up, joining) in the organization's audit log. */
    recordStep: (c: RouteContext, step: PeopleStep) => peopleAudit(c.req, c.requestId, step),
  };
}

/** Standalone pages bind their CSRF token to a random cookie (double submit, HMAC-ed). */
function standaloneCsrf(csrfFor: (uid: string) => string, secure: boolean) {
  return {
    standaloneCsrf(req: IncomingMessage, res: ServerResponse): string {
      let nonce = cookieValue(req, CSRF_COOKIE);
      if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) {
        nonce = randomBytes(16).toString('base64url');
        res.setHeader('set-cookie', `${CSRF_COOKIE}=${nonce}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
      }
      return csrfFor(`standalone:${nonce}`);
    },
    checkStandaloneCsrf(req: IncomingMessage, form: URLSearchParams): boolean {
      const nonce = cookieValue(req, CSRF_COOKIE);
      return !!nonce && equal(form.get('csrf') ?? '', csrfFor(`standalone:${nonce}`));
    },
  };
}

function interactionLookup(provider: AuthServer['provider']) {
  return {
    /** The interaction bound to this browser, or a page explaining that it is gone. */
    async details(c: RouteContext): Promise<InteractionDetails | undefined> {
      try {
        const d = await provider.interactionDetails(c.req, c.res);
        if (d.uid !== c.params.uid) throw new Error('interaction mismatch');
        return d;
      } catch {
        send(c.res, 400, messagePage('This sign-in has expired', 'Start again from the application you were signing in to.', 'error'));
        return undefined;
      }
    },
    async clientName(clientId: string): Promise<string> {
      const client = await provider.Client.find(clientId);
      return client?.clientName ?? clientId;
    },
  };
}
