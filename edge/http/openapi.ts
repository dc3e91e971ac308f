// Builds an OpenAPI 3.1 document from route declarations (api-route.ts). Schemas come from the
// same zod objects that validate requests (z.toJSONSchema, JSON Schema 2020-12, the dialect of
// OpenAPI 3.1); deprecations come from the same declaration that sets the response headers.
import * as z from 'zod';
import type { AnyApiRoute, HeaderSpec, JsonSchema, ResponseSpec } from './api-route.ts';
import { describeDeprecation } from './deprecation.ts';

export interface OpenApiOptions {
  info: { title: string; version: string; description?: string; [key: string]: unknown };
  servers?: Array<{ url: string; description?: string }>;
  tags?: Array<{ name: string; description?: string }>;
  /** Named schemas: every occurrence of one of these objects becomes a `$ref` to it. */
  schemas?: Record<string, z.ZodType>;
  /** Shared responses that routes name by key (for example `Problem404`). */
  responses?: Record<string, ResponseSpec>;
  /** Headers every response of every operation carries (documented as shared components). */
  commonHeaders?: Record<string, HeaderSpec>;
  /** Responses added to every operation that does not declare the status itself. */
  commonResponses?: Record<string, string>;
  externalDocs?: { url: string; description?: string };
}

type Doc = Record<string, unknown>;

const isZod = (value: unknown): value is z.ZodType => typeof value === 'object' && value !== null && '_zod' in value;

function pascal(text: string): string {
  return text.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _sep, ch: string) => ch.toUpperCase());
}

/** `/api/v1/blog/posts/:slug` → `/api/v1/blog/posts/{slug}`. */
export function toOpenApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*([A-Za-z0-9_]+)/g, '{$1}');
}

function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

const DEPRECATION_HEADERS: Record<string, HeaderSpec> = {
  Deprecation: {
    description: 'When the operation was deprecated (RFC 9745): `@` followed by Unix seconds.',
    schema: { type: 'string', pattern: '^@-?[0-9]+$' },
  },
  Sunset: {
    description: 'When the operation will be removed (RFC 8594), an HTTP date.',
    schema: { type: 'string' },
  },
  Link: {
    description: 'The successor (`rel="successor-version"`) and the deprecation notice (`rel="deprecation"`).',
    schema: { type: 'string' },
  },
};

export function buildOpenApiDocument(routes: readonly AnyApiRoute[], options: OpenApiOptions): Doc {
  const schemas = new NamedSchemas();
  for (const [id, schema] of Object.entries(options.schemas ?? {})) schemas.register(schema, id);
  const headerRefs = Object.fromEntries(
    Object.keys(options.commonHeaders ?? {}).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );

  const sharedResponses: Doc = {};
  for (const [name, spec] of Object.entries(options.responses ?? {})) {
    sharedResponses[name] = renderResponse(schemas, spec, name, headerRefs);
  }

  const paths: Record<string, Doc> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route, schemas, headerRefs, options.commonResponses ?? {});
  }

  const components: Doc = { schemas: schemas.components() };
  if (Object.keys(sharedResponses).length > 0) components.responses = sharedResponses;
  if (options.commonHeaders) components.headers = options.commonHeaders;

  return {
    openapi: '3.1.0',
    info: options.info,
    ...(options.servers ? { servers: options.servers } : {}),
    ...(options.tags ? { tags: options.tags } : {}),
    paths,
    components,
    ...(options.externalDocs ? { externalDocs: options.externalDocs } : {}),
  };
}

/**
 * Every schema of the document, in one registry so that nested occurrences of named schemas
 * become refs; a schema met first without a name gets one from where it was met.
 */
class NamedSchemas {
  private readonly registry = z.registry<{ id: string }>();
  private readonly named = new Map<z.ZodType, string>();

  register(schema: z.ZodType, id: string): string {
    const existing = this.named.get(schema);
    if (existing) return existing;
    let unique = id;
    for (let n = 2; [...this.named.values()].includes(unique); n++) unique = `${id}${n}`;
    this.named.set(schema, unique);
    this.registry.add(schema, { id: unique });
    return unique;
  }

  /** A zod schema as a `$ref` to its component (named `fallbackId` if it has no name yet); JSON Schema as it is. */
  ref(schema: z.ZodType | JsonSchema, fallbackId: string): JsonSchema {
    return isZod(schema) ? { $ref: `#/components/schemas/${this.register(schema, fallbackId)}` } : schema;
  }

  /** `components.schemas`: every registered schema as JSON Schema. */
  components(): Record<string, JsonSchema> {
    const generated = z.toJSONSchema(this.registry, {
      target: 'draft-2020-12',
      io: 'output',
      unrepresentable: 'any',
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, JsonSchema> };
    return Object.fromEntries(Object.entries(generated.schemas).map(([id, s]) => [id, strip(s)]));
  }
}

function renderResponse(schemas: NamedSchemas, spec: ResponseSpec, idBase: string, extraHeaders: Record<string, unknown>): Doc {
  const out: Doc = { description: spec.description };
  const headers = { ...extraHeaders, ...(spec.headers ?? {}) };
  if (Object.keys(headers).length > 0) out.headers = headers;
  if (spec.content) {
    out.content = Object.fromEntries(
      Object.entries(spec.content).map(([mediaType, schema]) => [mediaType, { schema: schemas.ref(schema, idBase) }]),
    );
  }
  return out;
}

/** The operation object of one route. */
function operationOf(
  route: AnyApiRoute,
  schemas: NamedSchemas,
  headerRefs: Record<string, unknown>,
  commonResponses: Record<string, string>,
): Doc {
  const parameters = parametersOf(route);
  const extra = route.deprecation ? { ...headerRefs, ...DEPRECATION_HEADERS } : headerRefs;
  const responses: Doc = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] =
      typeof spec === 'string'
        ? { $ref: `#/components/responses/${spec}` }
        : renderResponse(schemas, spec, `${pascal(route.operationId)}${status === '200' ? '' : status}Response`, extra);
  }
  for (const [status, name] of Object.entries(commonResponses)) {
    if (!(status in responses)) responses[status] = { $ref: `#/components/responses/${name}` };
  }

  let description = route.description;
  if (route.deprecation) description = [description, describeDeprecation(route.deprecation)].filter(Boolean).join('\n\n');
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(description ? { description } : {}),
    ...(route.tags ? { tags: route.tags } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
    ...(route.deprecation ? { deprecated: true, 'x-sunset': route.deprecation.sunsetAt.toISOString().slice(0, 10) } : {}),
    ...(route.extensions ?? {}),
  };
}

/** The route's path and query parameters, from the zod schemas that validate them. */
function parametersOf(route: AnyApiRoute): Doc[] {
  const parameters: Doc[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description, ...propSchema } = prop;
      parameters.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema: propSchema,
      });
    }
  }
  return parameters;
}
