// What every route module of the REST API shares: the route type, what a route needs to run
// (its dependencies), the path parameters, the errors mapped to HTTP in index.ts, and the
// request body reader.
import { timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { AppContext } from '../context.ts';
import { integerParam, type AnyApiRoute, type AnyApiRouteContext, type ResponseSpec } from '../http/api-route.ts';
import { readBody, sendJson } from '../http/respond.ts';
import { parseJsonBody, RequestValidationError, validate } from '../http/validation.ts';
import type { OAuthManagement } from '../oauth/management.ts';
import type { Access } from './access.ts';
import type { Caller } from './auth.ts';

export interface OrganizationRouteOptions {
  ctx: AppContext;
  authenticate: (ctx: AnyApiRouteContext) => Promise<Caller>;
}

/** What a route handler uses: the options, plus the OAuth management and the body limit. */
export interface RouteDeps extends OrganizationRouteOptions {
  management: OAuthManagement;
  limit: number;
}

/**
 * A route plus what the OpenAPI builder does not know: request body, security, who may call it,
 * and whether it creates something (and so honours Idempotency-Key).
 */
export type RestRoute = AnyApiRoute & {
  body?: z.ZodType;
  secured?: boolean;
  access?: Access;
  creates?: boolean;
  /** A body limit of its own (file uploads), instead of MAX_BODY_BYTES. */
  bodyLimit?: number;
  /** Media types the body may have besides JSON, taken as files (OpenAPI: binary). */
  uploadTypes?: string[];
  /** The body may be YAML too (application/yaml), read by the route itself. */
  yamlBody?: boolean;
  /** An unguarded route's own security requirement (a source's secret), for the OpenAPI document. */
  security?: Record<string, string[]>[];
  /** The OpenAPI requestBody of a route whose body is not JSON at all (JSON Lines, say). */
  requestBody?: Record<string, unknown>;
};

/** The resource does not exist, or belongs to another organization (404). */
export class NotFoundError extends Error {}

/** The request body is not JSON (415). */
export class MediaTypeError extends Error {}

/** The request conflicts with another one or with the resource's state (409). */
export class ConflictError extends Error {
  readonly headers: Record<string, string>;
  constructor(message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ConflictError';
    this.headers = headers;
  }
}

const stashed = new WeakMap<AnyApiRouteContext, Buffer>();

/** Keeps a body read before the handler (to fingerprint it), for readJson. */
export function stashBody(c: AnyApiRouteContext, body: Buffer): void {
  stashed.set(c, body);
}

/** The raw body (an upload): the one stashed by Idempotency-Key, or read now within `limit`. */
export async function readRawBody(c: AnyApiRouteContext, limit: number): Promise<Buffer> {
  return stashed.get(c) ?? (await readBody(c.req, limit));
}

export async function readJson<S extends z.ZodType>(c: AnyApiRouteContext, schema: S, limit: number): Promise<z.output<S>> {
  const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new MediaTypeError('send the body as application/json');
  return validate(schema, parseJsonBody(stashed.get(c) ?? (await readBody(c.req, limit))), 'body');
}

/** Runs a call to an internal service, answering 404 where the service answers NOT_FOUND. */
export async function notFoundAs404<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) throw new NotFoundError(err.rawMessage);
    throw err;
  }
}

export const iso = (t: Timestamp | undefined) => (t ? new Date(timestampMs(t)).toISOString() : null);
export const json = (schema: z.ZodType, description: string): ResponseSpec => ({ description, content: { 'application/json': schema } });

export const errors = { '401': 'Unauthorized', '403': 'Forbidden', '422': 'ValidationFailed' } as const;

export const OrganizationId = z
  .string()
  .regex(/^org_[A-Za-z0-9]{1,60}$/, { error: 'must be an organization id (org_...)' })
  .meta({ description: 'Organization id.', example: 'org_3hT9xQ2mZr8vKp1L' });
const ClientId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a client id' });
export const Name = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(200, { error: 'must be at most 200 characters' });

export const orgParams = z.object({ organization_id: OrganizationId });
export const clientParams = z.object({ organization_id: OrganizationId, client_id: ClientId });

/** The query of every list: `page_size` (1-100, default 50) and the previous page's `page_token`. */
export const pageQuery = z.object({
  page_size: integerParam({ min: 1, max: 100, default: 50, description: 'How many items to return, 1-100.' }),
  page_token: z
    .string()
    .max(2_048, { error: 'must be at most 2048 characters' })
    .regex(/^[A-Za-z0-9_-]*$/, { error: 'must be a next_page_token from a previous page' })
    .default('')
    .meta({ description: "The previous page's `next_page_token`; leave out for the first page." }),
});

/** The envelope of every list: the items under their resource's plural name, and the next page's token. */
export function listEnvelope<S extends z.ZodType>(name: string, item: S, title: string) {
  return z
    .object({
      [name]: z.array(item),
      next_page_token: z.string().nullable().meta({ description: 'Pass as `page_token` for the next page; null on the last page.' }),
    })
    .meta({ title });
}

/** A list request's page, as the services take it. */
export const pageArgs = (query: { page_size: number; page_token: string }) => ({ pageSize: query.page_size, pageToken: query.page_token });

/** Answers one page of a list in the list envelope; a service's '' next_page_token is null here. */
export function sendPage(c: AnyApiRouteContext, name: string, items: unknown[], nextPageToken: string): void {
  sendJson(c.res, 200, { [name]: items, next_page_token: nextPageToken === '' ? null : nextPageToken });
}

/** Runs a list call, answering a page_token the service refuses as a 422 on the query. */
export async function listing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.InvalidArgument && err.rawMessage.startsWith('page_token:')) {
      const msg = err.rawMessage.slice('page_token:'.length).trim();
      throw new RequestValidationError([{ type: 'value_error', loc: ['query', 'page_token'], msg }]);
    }
    throw err;
  }
}
