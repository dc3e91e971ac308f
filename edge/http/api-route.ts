// A route of any JSON API declared once: method and path, zod schemas for its path and query
// parameters, its documented responses and, optionally, its deprecation. `mountApiRoutes`
// registers the declarations on a Router (validating input with the very schemas that
// openapi.ts turns into the OpenAPI document), so documentation and behaviour cannot drift.
import * as z from 'zod';
import { applyDeprecation, describeDeprecation, isRemoved, type Deprecation } from './deprecation.ts';
import { sendProblem } from './respond.ts';
import type { Method, RouteContext, Router } from './router.ts';

/** A JSON Schema (as OpenAPI 3.1 uses it), for content that no zod schema describes. */
export type JsonSchema = Record<string, unknown>;

export interface HeaderSpec {
  description: string;
  schema: JsonSchema;
}

export interface ResponseSpec {
  description: string;
  /** Media type → schema (zod, or JSON Schema for non-JSON bodies). */
  content?: Record<string, z.ZodType | JsonSchema>;
  headers?: Record<string, HeaderSpec>;
}

export type AnyZodObject = z.ZodObject<z.ZodRawShape>;

export interface ApiRouteInput<P extends AnyZodObject, Q extends AnyZodObject> {
  params: z.output<P>;
  query: z.output<Q>;
}

export interface ApiRouteContext<P extends AnyZodObject, Q extends AnyZodObject> extends RouteContext {
  input: ApiRouteInput<P, Q>;
}

export interface ApiRoute<P extends AnyZodObject = AnyZodObject, Q extends AnyZodObject = AnyZodObject> {
  method: Method;
  /** Router pattern with `:name` parameters, e.g. `/api/v1/blog/posts/:slug`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  params?: P;
  query?: Q;
  /**
   * Documented responses by status code (`'200'`, `'404'`...); a string names a shared response
   * of the document (see OpenApiOptions.responses).
   */
  responses: Record<string, ResponseSpec | string>;
  deprecation?: Deprecation;
  /** OpenAPI specification extensions (`x-…`) of the operation. */
  extensions?: Record<`x-${string}`, unknown>;
  handler: (ctx: ApiRouteContext<P, Q>) => void | Promise<void>;
}

// A list of routes mixes parameter schemas; a handler's parameter is contravariant, so no type but
// `any` admits every route's handler. These two names keep that `any` in one place.
// biome-ignore lint/suspicious/noExplicitAny: the existential route type, see above
export type AnyApiRoute = ApiRoute<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: the context of an AnyApiRoute
export type AnyApiRouteContext = ApiRouteContext<any, any>;

/** A route without path or query parameters. */
export type NoParams = z.ZodObject<Record<never, never>>;

/** Identity function that lets TypeScript infer the handler's input types from the schemas. */
export function defineApiRoute<P extends AnyZodObject = NoParams, Q extends AnyZodObject = NoParams>(
  route: ApiRoute<P, Q>,
): ApiRoute<P, Q> {
  return route;
}

/** One invalid parameter, in the shape of RFC 9457's `invalid-params` example. */
export interface InvalidParam {
  in: 'path' | 'query';
  name: string;
  reason: string;
}

export interface MountOptions<R extends AnyApiRoute> {
  /** Answers a request whose parameters do not validate (a surface picks 400 or 422, its body). */
  onInvalid: (ctx: RouteContext, invalid: InvalidParam[], route: R) => void | Promise<void>;
  /**
   * Runs around every handler (rate limiting, common headers); call `next` to go on. Runs
   * before validation, so malformed requests are counted and decorated like the others.
   */
  around?: (route: R, ctx: RouteContext, next: () => Promise<void>) => Promise<void>;
  /** Base URL that relative successor links of deprecations are resolved against. */
  baseUrl?: string;
  now?: () => number;
}

/** Names of the fields of `schema` that accept several values (arrays). */
function arrayFields(schema: AnyZodObject | undefined): Set<string> {
  const names = new Set<string>();
  if (!schema) return names;
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { type?: unknown }>;
  };
  for (const [name, prop] of Object.entries(json.properties ?? {})) {
    if (prop.type === 'array') names.add(name);
  }
  return names;
}

function issuesToInvalid(where: 'path' | 'query', error: z.ZodError): InvalidParam[] {
  return error.issues.map((issue) => ({
    in: where,
    name: issue.path.length > 0 ? issue.path.map(String).join('.') : '(all)',
    reason: issue.message,
  }));
}

/** URLSearchParams as an object: repeated keys become arrays. */
function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of query) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

function mountOne<R extends AnyApiRoute>(router: Router, route: R, options: MountOptions<R>): void {
  const multi = arrayFields(route.query);
  const declared = new Set(Object.keys(route.query?.shape ?? {}));
  const now = options.now ?? Date.now;

  const run = async (ctx: RouteContext): Promise<void> => {
    if (route.deprecation && isRemoved(route.deprecation, now())) {
      sendProblem(ctx.res, {
        title: 'Gone',
        status: 410,
        detail: `This operation was removed on ${route.deprecation.sunsetAt.toUTCString()}. ${describeDeprecation(route.deprecation)}`,
        instance: ctx.path,
      });
      return;
    }
    const invalid: InvalidParam[] = [];
    const raw = queryObject(ctx.query);
    for (const [name, value] of Object.entries(raw)) {
      if (declared.has(name) && Array.isArray(value) && !multi.has(name)) {
        invalid.push({ in: 'query', name, reason: 'must be given at most once' });
      }
      // A repeatable parameter given once is still a list of one.
      if (multi.has(name) && !Array.isArray(value)) raw[name] = [value];
    }
    let params: Record<string, unknown> = {};
    let query: Record<string, unknown> = {};
    if (route.params) {
      const parsed = route.params.safeParse(ctx.params);
      if (parsed.success) params = parsed.data;
      else invalid.push(...issuesToInvalid('path', parsed.error));
    }
    if (route.query && invalid.length === 0) {
      const parsed = route.query.safeParse(raw);
      if (parsed.success) query = parsed.data;
      else invalid.push(...issuesToInvalid('query', parsed.error));
    }
    if (invalid.length > 0) {
      await options.onInvalid(ctx, invalid, route);
      return;
    }
    const routeCtx = ctx as ApiRouteContext<AnyZodObject, AnyZodObject>;
    routeCtx.input = { params, query } as ApiRouteInput<AnyZodObject, AnyZodObject>;
    await route.handler(routeCtx);
  };

  router.on(route.method, route.path, async (ctx) => {
    if (route.deprecation) applyDeprecation(ctx.res, route.deprecation, options.baseUrl);
    if (options.around) await options.around(route, ctx, () => run(ctx));
    else await run(ctx);
  });
}

/** Registers each declared route on `router`, in order. */
export function mountApiRoutes<R extends AnyApiRoute>(router: Router, routes: readonly R[], options: MountOptions<R>): void {
  for (const route of routes) mountOne(router, route, options);
}

interface IntegerParamOptions {
  min: number;
  max: number;
  description?: string;
}

function integerSchema(options: IntegerParamOptions) {
  const message = `must be an integer from ${options.min} to ${options.max}`;
  const schema = z.coerce
    .number({ error: message })
    .int({ error: message })
    .min(options.min, { error: message })
    .max(options.max, { error: message });
  return options.description ? schema.meta({ description: options.description }) : schema;
}

/** Zod schema of an integer query parameter with a default, and messages a caller can act on. */
export function integerParam(options: IntegerParamOptions & { default: number }) {
  return integerSchema(options).default(options.default);
}

/** The same, for an optional parameter without a default. */
export function optionalIntegerParam(options: IntegerParamOptions) {
  return integerSchema(options).optional();
}
