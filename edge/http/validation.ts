// Request validation with zod, answered in FastAPI's shape: a 422 whose body is an
// HTTPValidationError, `{"detail": [ValidationError, ...]}`, each item as pydantic v2 reports it
// (`type`, `loc`, `msg`, `input`, and `ctx` where the type has one). The same zod schemas feed
// the OpenAPI documents (z.toJSONSchema), so what is documented is what is enforced.
import type { ServerResponse } from 'node:http';
import { z } from 'zod';

/** Where a value came from: the first member of every `loc`. */
export type ValidationSource = 'body' | 'query' | 'path' | 'header' | 'cookie';

/** One pydantic-style validation error (the ValidationError schema). */
export interface ValidationErrorItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** Thrown by the helpers below; surfaces answer it with `sendValidationError` (422). */
export class RequestValidationError extends Error {
  readonly detail: ValidationErrorItem[];
  constructor(detail: ValidationErrorItem[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
    this.name = 'RequestValidationError';
    this.detail = detail;
  }
}

export function isRequestValidationError(err: unknown): err is RequestValidationError {
  return err instanceof RequestValidationError;
}

/** The ValidationError and HTTPValidationError schemas, for OpenAPI components. */
export const ValidationErrorSchema = z
  .object({
    loc: z.array(z.union([z.string(), z.int()])),
    msg: z.string(),
    type: z.string(),
    input: z.unknown().optional(),
    ctx: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ title: 'ValidationError' });

export const HTTPValidationErrorSchema = z
  .object({ detail: z.array(ValidationErrorSchema).optional() })
  .meta({ title: 'HTTPValidationError' });

export function sendValidationError(res: ServerResponse, err: RequestValidationError, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify({ detail: err.detail });
  res.writeHead(422, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(res.req?.method === 'HEAD' ? undefined : payload);
}

/**
 * Validates `data` taken from `source` and returns the parsed value, or throws a
 * RequestValidationError listing every problem, in field order.
 */
export function validate<S extends z.ZodType>(schema: S, data: unknown, source: ValidationSource): z.output<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw new RequestValidationError(zodIssuesToDetail(result.error.issues, { schema, data, source }));
}

/**
 * Parses a JSON request body. An empty body is FastAPI's `missing` at `["body"]`; a syntax error
 * is `json_invalid` at `["body", <character offset>]` with Python's message in `ctx.error`.
 */
export function parseJsonBody(raw: Buffer | string): unknown {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (text.trim() === '') {
    throw new RequestValidationError([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const { offset, error } = describeJsonError(text, (err as Error).message);
    throw new RequestValidationError([
      { type: 'json_invalid', loc: ['body', offset], msg: 'JSON decode error', input: {}, ctx: { error } },
    ]);
  }
}

/**
 * Query parameters as an object of strings. Like FastAPI for a scalar parameter, the last
 * occurrence of a repeated name wins.
 */
export function queryToObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) out[k] = v;
  return out;
}

// --- zod issues → pydantic errors --------------------------------------------------------------

interface ConvertOptions {
  schema: z.ZodType;
  data: unknown;
  source: ValidationSource;
}

type AnySchema = z.core.$ZodType;

/** Converts zod issues (from `schema` validating `data`) to pydantic ValidationError items. */
export function zodIssuesToDetail(issues: readonly z.core.$ZodIssue[], options: ConvertOptions): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  for (const issue of issues) out.push(...convertIssue(issue, options));
  return out;
}

function convertIssue(issue: z.core.$ZodIssue, { schema, data, source }: ConvertOptions): ValidationErrorItem[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const loc: (string | number)[] = [source, ...path];
  const present = valueAt(data, path);
  const leaf = schemaAt(schema, path);
  const input = present.found ? present.value : undefined;

  if (issue.code === 'invalid_type') {
    if (!present.found) {
      // pydantic reports the missing field with its container as input (null for parameters).
      const parent = path.length > 0 ? valueAt(data, path.slice(0, -1)) : { found: false, value: undefined };
      return [{ type: 'missing', loc, msg: 'Field required', input: source === 'body' && parent.found ? parent.value : null }];
    }
    return [typeError(issue.expected, leaf, loc, input, source, path.length === 0)];
  }
  if (issue.code === 'too_small') {
    const min = Number(issue.minimum);
    if (issue.origin === 'array' || issue.origin === 'set') {
      const actual = Array.isArray(input) ? input.length : 0;
      return [
        {
          type: 'too_short',
          loc,
          msg: `List should have at least ${min} item${min === 1 ? '' : 's'} after validation, not ${actual}`,
          input,
          ctx: { field_type: 'List', min_length: min, actual_length: actual },
        },
      ];
    }
    if (issue.origin === 'string') {
      return [
        {
          type: 'string_too_short',
          loc,
          msg: `String should have at least ${min} character${min === 1 ? '' : 's'}`,
          input,
          ctx: { min_length: min },
        },
      ];
    }
    const type = issue.inclusive ? 'greater_than_equal' : 'greater_than';
    const key = issue.inclusive ? 'ge' : 'gt';
    return [{ type, loc, msg: `Input should be greater than${issue.inclusive ? ' or equal to' : ''} ${min}`, input, ctx: { [key]: min } }];
  }
  if (issue.code === 'too_big') {
    const max = Number(issue.maximum);
    if (issue.origin === 'array' || issue.origin === 'set') {
      const actual = Array.isArray(input) ? input.length : 0;
      return [
        {
          type: 'too_long',
          loc,
          msg: `List should have at most ${max} item${max === 1 ? '' : 's'} after validation, not ${actual}`,
          input,
          ctx: { field_type: 'List', max_length: max, actual_length: actual },
        },
      ];
    }
    if (issue.origin === 'string') {
      return [
        {
          type: 'string_too_long',
          loc,
          msg: `String should have at most ${max} character${max === 1 ? '' : 's'}`,
          input,
          ctx: { max_length: max },
        },
      ];
    }
    const type = issue.inclusive ? 'less_than_equal' : 'less_than';
    const key = issue.inclusive ? 'le' : 'lt';
    return [{ type, loc, msg: `Input should be less than${issue.inclusive ? ' or equal to' : ''} ${max}`, input, ctx: { [key]: max } }];
  }
  if (issue.code === 'invalid_format' && issue.format === 'regex' && 'pattern' in issue) {
    const pattern = String((issue as { pattern?: string }).pattern ?? '').replace(/^\/(.*)\/[a-z]*$/s, '$1');
    return [{ type: 'string_pattern_mismatch', loc, msg: `String should match pattern '${pattern}'`, input, ctx: { pattern } }];
  }
  if (issue.code === 'invalid_value') {
    const values = issue.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
    const expected = values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
    const literal = leaf?._zod.def.type === 'literal';
    return [{ type: literal ? 'literal_error' : 'enum', loc, msg: `Input should be ${expected}`, input, ctx: { expected } }];
  }
  if (issue.code === 'invalid_union') {
    // Report the first alternative's problems, as a pydantic union of one model would.
    const first = issue.errors[0];
    if (first && first.length > 0) {
      return first.flatMap((inner) =>
        convertIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, { schema, data, source }),
      );
    }
  }
  // custom refinements and anything else: pydantic's value_error.
  return [{ type: 'value_error', loc, msg: `Value error, ${issue.message}`, input, ctx: { error: issue.message } }];
}

function typeError(
  expected: string,
  leaf: AnySchema | undefined,
  loc: (string | number)[],
  input: unknown,
  source: ValidationSource,
  isRoot: boolean,
): ValidationErrorItem {
  const fromString = typeof input === 'string';
  switch (expected) {
    case 'string':
      return { type: 'string_type', loc, msg: 'Input should be a valid string', input };
    case 'array':
    case 'tuple':
    case 'set':
      return { type: 'list_type', loc, msg: 'Input should be a valid list', input };
    case 'object':
      if (leaf?._zod.def.type === 'record') return { type: 'dict_type', loc, msg: 'Input should be a valid dictionary', input };
      return {
        type: 'model_attributes_type',
        loc: isRoot && source === 'body' ? ['body'] : loc,
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input,
      };
    case 'record':
    case 'map':
      return { type: 'dict_type', loc, msg: 'Input should be a valid dictionary', input };
    case 'boolean':
      return fromString
        ? { type: 'bool_parsing', loc, msg: 'Input should be a valid boolean, unable to interpret input', input }
        : { type: 'bool_type', loc, msg: 'Input should be a valid boolean', input };
    case 'int':
    case 'number':
    case 'bigint': {
      const integer = expected === 'int' || isIntegerSchema(leaf);
      if (integer) {
        if (fromString)
          return { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input };
        if (typeof input === 'number' && Number.isFinite(input)) {
          return { type: 'int_from_float', loc, msg: 'Input should be a valid integer, got a number with a fractional part', input };
        }
        return { type: 'int_type', loc, msg: 'Input should be a valid integer', input };
      }
      return fromString
        ? { type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input }
        : { type: 'float_type', loc, msg: 'Input should be a valid number', input };
    }
    case 'null':
      return { type: 'none_required', loc, msg: 'Input should be None', input };
    default:
      return { type: 'value_error', loc, msg: `Value error, expected ${expected}`, input, ctx: { error: `expected ${expected}` } };
  }
}

function isIntegerSchema(schema: AnySchema | undefined): boolean {
  if (!schema) return false;
  const def = schema._zod.def as { type: string; format?: string; checks?: { _zod: { def: { format?: string } } }[] };
  if (def.format === 'safeint' || def.format === 'int32' || def.format === 'uint32') return true;
  return (def.checks ?? []).some((c) => c._zod.def.format === 'safeint');
}

/** The schema that validates the value at `path`, looking through optional/nullable wrappers. */
function schemaAt(schema: AnySchema, path: (string | number)[]): AnySchema | undefined {
  let current: AnySchema | undefined = unwrap(schema);
  for (const key of path) {
    if (!current) return undefined;
    const def = current._zod.def as unknown as Record<string, unknown> & { type: string };
    if (def.type === 'object') {
      current = unwrap((def.shape as Record<string, AnySchema>)[String(key)]);
    } else if (def.type === 'array') {
      current = unwrap(def.element as AnySchema);
    } else if (def.type === 'record') {
      current = unwrap(def.valueType as AnySchema);
    } else {
      return undefined;
    }
  }
  return current;
}

function unwrap(schema: AnySchema | undefined): AnySchema | undefined {
  let s = schema;
  for (let i = 0; s && i < 8; i++) {
    const def = s._zod.def as unknown as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (
      def.type === 'optional' ||
      def.type === 'nullable' ||
      def.type === 'default' ||
      def.type === 'readonly' ||
      def.type === 'prefault' ||
      def.type === 'catch'
    ) {
      s = def.innerType;
    } else if (def.type === 'pipe') {
      s = def.in;
    } else {
      break;
    }
  }
  return s;
}

function valueAt(data: unknown, path: (string | number)[]): { found: boolean; value: unknown } {
  let current: unknown = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) {
      return { found: false, value: undefined };
    }
    current = (current as Record<string | number, unknown>)[key];
  }
  return { found: current !== undefined, value: current };
}

// --- JSON syntax errors, as Python's json module words them ------------------------------------

/**
 * Where and why `text` is not JSON, as Python's json.loads would say it (FastAPI reports that
 * offset and message). V8's messages do not always carry a position, so this scans the text
 * itself; it runs only after JSON.parse failed.
 */
function describeJsonError(text: string, _v8Message: string): { offset: number; error: string } {
  const found = locateJsonError(text);
  // Python counts code points; JavaScript strings count UTF-16 units.
  return { offset: [...text.slice(0, found.at)].length, error: found.error };
}

interface JsonFault {
  at: number;
  error: string;
}

class Fault extends Error {
  readonly fault: JsonFault;
  constructor(at: number, error: string) {
    super(error);
    this.fault = { at, error };
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

function locateJsonError(text: string): JsonFault {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const string = () => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) throw new Fault(start, 'Unterminated string starting at');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) throw new Fault(i, 'Invalid control character at');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === undefined) throw new Fault(start, 'Unterminated string starting at');
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Fault(i + 1, 'Invalid \\uXXXX escape');
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e)) throw new Fault(i, 'Invalid \\escape');
        i += 2;
        continue;
      }
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return string();
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fault(i, 'Expecting property name enclosed in double quotes');
        string();
        ws();
        if (text[i] !== ':') throw new Fault(i, "Expecting ':' delimiter");
        i++;
        value();
        ws();
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] !== ',') throw new Fault(i, "Expecting ',' delimiter");
        i++;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ']') {
          i++;
          return;
        }
        if (text[i] !== ',') throw new Fault(i, "Expecting ',' delimiter");
        i++;
      }
    }
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m && m.index === i) {
      i += m[0].length;
      return;
    }
    throw new Fault(i, 'Expecting value');
  };
  try {
    value();
    ws();
    if (i < text.length) return { at: i, error: 'Extra data' };
  } catch (err) {
    if (err instanceof Fault) return err.fault;
    throw err;
  }
  // Valid by this grammar but refused by JSON.parse (it should not happen): point at the end.
  return { at: text.length, error: 'Expecting value' };
}
