// The zod → FastAPI/pydantic converter (edge/http/validation.ts) that every 422 of the gateway,
// and of the other surfaces that reuse it, goes through.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseJsonBody, queryToObject, RequestValidationError, validate } from '../../edge/http/validation.ts';

function detail(fn: () => unknown): unknown[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RequestValidationError);
    return (err as RequestValidationError).detail;
  }
  throw new Error('expected a RequestValidationError');
}

const Body = z.object({
  name: z.string().min(2).max(5),
  tags: z.array(z.string()).min(1).max(2),
  count: z.int().min(0).max(10).optional(),
  ratio: z.number().optional(),
  flag: z.boolean().optional(),
  kind: z.enum(['a', 'b', 'c']).optional(),
  fixed: z.literal('x').optional(),
  id: z
    .string()
    .regex(/^[a-z]+$/)
    .optional(),
  nested: z.object({ inner: z.string() }).optional(),
  map: z.record(z.string(), z.string()).optional(),
  note: z.string().nullable().optional(),
});

describe('zod issues as pydantic errors', () => {
  it('reports every error, in field order, with pydantic types, messages and ctx', () => {
    const input = {
      name: 'x',
      tags: [1],
      count: 'many',
      ratio: 'high',
      flag: 'maybe',
      kind: 'd',
      fixed: 'y',
      id: 'ABC',
      nested: 'no',
      map: [],
      note: 3,
    };
    expect(detail(() => validate(Body, input, 'body'))).toEqual([
      {
        type: 'string_too_short',
        loc: ['body', 'name'],
        msg: 'String should have at least 2 characters',
        input: 'x',
        ctx: { min_length: 2 },
      },
      { type: 'string_type', loc: ['body', 'tags', 0], msg: 'Input should be a valid string', input: 1 },
      {
        type: 'int_parsing',
        loc: ['body', 'count'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: 'many',
      },
      {
        type: 'float_parsing',
        loc: ['body', 'ratio'],
        msg: 'Input should be a valid number, unable to parse string as a number',
        input: 'high',
      },
      { type: 'bool_parsing', loc: ['body', 'flag'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'maybe' },
      { type: 'enum', loc: ['body', 'kind'], msg: "Input should be 'a', 'b' or 'c'", input: 'd', ctx: { expected: "'a', 'b' or 'c'" } },
      { type: 'literal_error', loc: ['body', 'fixed'], msg: "Input should be 'x'", input: 'y', ctx: { expected: "'x'" } },
      {
        type: 'string_pattern_mismatch',
        loc: ['body', 'id'],
        msg: "String should match pattern '^[a-z]+$'",
        input: 'ABC',
        ctx: { pattern: '^[a-z]+$' },
      },
      {
        type: 'model_attributes_type',
        loc: ['body', 'nested'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: 'no',
      },
      { type: 'dict_type', loc: ['body', 'map'], msg: 'Input should be a valid dictionary', input: [] },
      { type: 'string_type', loc: ['body', 'note'], msg: 'Input should be a valid string', input: 3 },
    ]);
  });

  it('reports missing fields with their container (body) or null (parameters) as input', () => {
    expect(detail(() => validate(Body, { nested: {} }, 'body'))).toEqual([
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { nested: {} } },
      { type: 'missing', loc: ['body', 'tags'], msg: 'Field required', input: { nested: {} } },
      { type: 'missing', loc: ['body', 'nested', 'inner'], msg: 'Field required', input: {} },
    ]);
    const Query = z.object({ q: z.string(), page: z.coerce.number().int().optional() });
    expect(detail(() => validate(Query, queryToObject(new URLSearchParams('x=1')), 'query'))).toEqual([
      { type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: null },
    ]);
  });

  it('reports a non-object body at ["body"], and number bounds with ctx', () => {
    expect(detail(() => validate(Body, 'text', 'body'))).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: 'text',
      },
    ]);
    expect(detail(() => validate(Body, { name: 'abc', tags: ['a'], count: 11 }, 'body'))).toEqual([
      { type: 'less_than_equal', loc: ['body', 'count'], msg: 'Input should be less than or equal to 10', input: 11, ctx: { le: 10 } },
    ]);
    expect(detail(() => validate(Body, { name: 'abc', tags: ['a'], count: 1.5 }, 'body'))).toEqual([
      {
        type: 'int_from_float',
        loc: ['body', 'count'],
        msg: 'Input should be a valid integer, got a number with a fractional part',
        input: 1.5,
      },
    ]);
    expect(detail(() => validate(Body, { name: 'abc', tags: ['a', 'b', 'c'] }, 'body'))).toEqual([
      {
        type: 'too_long',
        loc: ['body', 'tags'],
        msg: 'List should have at most 2 items after validation, not 3',
        input: ['a', 'b', 'c'],
        ctx: { field_type: 'List', max_length: 2, actual_length: 3 },
      },
    ]);
    expect(detail(() => validate(Body, { name: 'abc', tags: [] }, 'body'))).toEqual([
      {
        type: 'too_short',
        loc: ['body', 'tags'],
        msg: 'List should have at least 1 item after validation, not 0',
        input: [],
        ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
      },
    ]);
  });

  it('turns refinements into value_error', () => {
    const S = z.object({ a: z.string().refine((v) => v.startsWith('x'), 'must start with x') });
    expect(detail(() => validate(S, { a: 'y' }, 'body'))).toEqual([
      { type: 'value_error', loc: ['body', 'a'], msg: 'Value error, must start with x', input: 'y', ctx: { error: 'must start with x' } },
    ]);
  });

  it('returns the parsed value when valid', () => {
    expect(validate(Body, { name: 'abc', tags: ['t'], extra: 1 }, 'body')).toEqual({ name: 'abc', tags: ['t'] });
  });
});

describe('JSON bodies', () => {
  it.each([
    ['', [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]],
    ['  \n', [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]],
    [
      '{',
      [
        {
          type: 'json_invalid',
          loc: ['body', 1],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Expecting property name enclosed in double quotes' },
        },
      ],
    ],
    ['{"a": }', [{ type: 'json_invalid', loc: ['body', 6], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }]],
    ['{"a": 1} x', [{ type: 'json_invalid', loc: ['body', 9], msg: 'JSON decode error', input: {}, ctx: { error: 'Extra data' } }]],
    ['[1, 2', [{ type: 'json_invalid', loc: ['body', 5], msg: 'JSON decode error', input: {}, ctx: { error: "Expecting ',' delimiter" } }]],
    [
      '{"a" 1}',
      [{ type: 'json_invalid', loc: ['body', 5], msg: 'JSON decode error', input: {}, ctx: { error: "Expecting ':' delimiter" } }],
    ],
    [
      '{"a": "b',
      [{ type: 'json_invalid', loc: ['body', 6], msg: 'JSON decode error', input: {}, ctx: { error: 'Unterminated string starting at' } }],
    ],
    ['["\\q"]', [{ type: 'json_invalid', loc: ['body', 2], msg: 'JSON decode error', input: {}, ctx: { error: 'Invalid \\escape' } }]],
    [
      "{'a': 1}",
      [
        {
          type: 'json_invalid',
          loc: ['body', 1],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Expecting property name enclosed in double quotes' },
        },
      ],
    ],
    [
      '{"é": "ü", ',
      [
        {
          type: 'json_invalid',
          loc: ['body', 11],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Expecting property name enclosed in double quotes' },
        },
      ],
    ],
  ])('answers %j with the FastAPI error', (text, expected) => {
    expect(detail(() => parseJsonBody(Buffer.from(text)))).toEqual(expected);
  });

  it('parses valid JSON', () => {
    expect(parseJsonBody('{"a":[1,2]}')).toEqual({ a: [1, 2] });
  });
});
