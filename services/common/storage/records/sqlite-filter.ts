// Filters of the embedded records store (sqlite.ts) compiled to SQL: a WHERE fragment over
// json_extract/json_type/json_each with its parameters. Only paths that ever held an array get the
// json_each branch ("the array contains"), so that equality on scalar fields stays a comparison an
// expression index serves; on those, equality, `$in` and `$all` are answered from a multikey side
// table when one serves the filter (sqlite-multikey.ts).
import type { SQLInputValue } from 'node:sqlite';
import type { Scalar } from './interface.ts';
import { multikeyCondition, prefixEqualities, type Multikey } from './sqlite-multikey.ts';
import { jsonPath } from './sqlite-sql.ts';
import type { Clause, Operation } from './validate.ts';

export function x(path: string): string {
  return `json_extract(doc, ${jsonPath(path)})`;
}

function t(path: string): string {
  return `json_type(doc, ${jsonPath(path)})`;
}

export interface Compiled {
  sql: string;
  params: SQLInputValue[];
  /**
   * A conjunct `_id IN (SELECT id FROM <side table> …)` is in `sql`: the query must be driven by
   * it (INDEXED BY the primary key). Without statistics the planner would rather walk a scalar
   * expression index, such as the tenant's, and test every document of the tenant against it.
   */
  multikey: boolean;
}

type TypeClass = 'text' | 'number' | 'true' | 'false' | 'null';

function typeClass(value: Scalar): TypeClass {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return 'number';
  return value ? 'true' : 'false';
}

/** The json_type condition for a class, on an expression that yields a json type name. */
function typeIs(typeExpr: string, cls: 'text' | 'number'): string {
  return cls === 'text' ? `${typeExpr} = 'text'` : `${typeExpr} IN ('integer','real')`;
}

/** What the compiler knows of a collection's fields. */
export interface FieldInfo {
  /** Whether the path ever held an array in this collection. */
  isArrayPath(path: string): boolean;
  /** The built side tables (sqlite-multikey.ts) of an array path. */
  multikeys(path: string): readonly Multikey[];
}

/**
 * Compiles parsed clauses to a WHERE fragment. Only on paths that ever held an array is the
 * json_each branch ("the array contains") added, so that equality on scalar fields stays a plain
 * comparison an expression index can serve; and on those, equality, `$in` and `$all` are
 * answered from a side table when one serves the filter.
 */
export function compileClauses(clauses: Clause[], info: FieldInfo): Compiled {
  const parts: string[] = [];
  const params: SQLInputValue[] = [];
  let multikey = false;
  const equalities = prefixEqualities(clauses, (path) => info.isArrayPath(path));
  for (const clause of clauses) {
    const arrays = clause.path !== '_id' && info.isArrayPath(clause.path);
    for (const operation of clause.operations) {
      const served = arrays ? multikeyCondition(operation, info.multikeys(clause.path), equalities, params) : undefined;
      multikey ||= served !== undefined;
      const part =
        served ??
        (clause.path === '_id' ? compileIdOperation(operation, params) : compileOperation(clause.path, operation, arrays, params));
      parts.push(part);
    }
  }
  return { sql: parts.length ? parts.join(' AND ') : '1', params, multikey };
}

export function compileIdOperation(operation: Operation, params: SQLInputValue[]): string {
  const strings = (values: Scalar[]) => values.filter((v): v is string => typeof v === 'string');
  switch (operation.op) {
    case 'eq':
      if (typeof operation.value !== 'string') return '0';
      params.push(operation.value);
      return '_id = ?';
    case 'ne':
      if (typeof operation.value !== 'string') return '1';
      params.push(operation.value);
      return '_id <> ?';
    case 'in': {
      const values = strings(operation.values);
      if (values.length === 0) return '0';
      params.push(...values);
      return `_id IN (${values.map(() => '?').join(',')})`;
    }
    case 'all': {
      const values = strings(operation.values);
      if (values.length === 0 || values.length !== operation.values.length || new Set(values).size !== 1) return '0';
      params.push(values[0]!);
      return '_id = ?';
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof operation.value !== 'string') return '0';
      params.push(operation.value);
      return `_id ${RANGE_SQL[operation.op]} ?`;
    case 'exists':
      return operation.value ? '1' : '0';
  }
}

const RANGE_SQL = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * Whether `json_extract(doc, path) = value` alone could match a value of another JSON type, so
 * that a json_type test must be added. json_extract yields arrays and objects as their JSON
 * text (which starts with "[" or "{") and booleans as 1 and 0; apart from those, SQLite never
 * finds a number equal to a string. Leaving the test out where it is not needed lets an
 * expression index answer a query without reading the documents (a covering index).
 */
function needsTypeTest(value: string | number): boolean {
  return typeof value === 'string' ? value.startsWith('[') || value.startsWith('{') : value === 0 || value === 1;
}

/** Equality of the scalar at `path` (not through arrays), with MongoDB's type strictness. */
function scalarEquals(path: string, value: Scalar, params: SQLInputValue[]): string {
  switch (typeClass(value)) {
    case 'null':
      // json_extract yields SQL NULL for a JSON null and for a missing field alike.
      return `${x(path)} IS NULL`;
    case 'text':
    case 'number': {
      const cls = typeClass(value) as 'text' | 'number';
      params.push(value as string | number);
      return needsTypeTest(value as string | number) ? `(${x(path)} = ? AND ${typeIs(t(path), cls)})` : `${x(path)} = ?`;
    }
    case 'true':
      return `(${x(path)} = 1 AND ${t(path)} = 'true')`;
    case 'false':
      return `(${x(path)} = 0 AND ${t(path)} = 'false')`;
  }
}

/** Equality of a json_each row (columns `type`, `value`) with a scalar. */
function elementEquals(value: Scalar, params: SQLInputValue[]): string {
  switch (typeClass(value)) {
    case 'null':
      return `e.type = 'null'`;
    case 'text':
      params.push(value as string);
      return `(e.type = 'text' AND e.value = ?)`;
    case 'number':
      params.push(value as number);
      return `(e.type IN ('integer','real') AND e.value = ?)`;
    case 'true':
      return `e.type = 'true'`;
    case 'false':
      return `e.type = 'false'`;
  }
}

function arrayAny(path: string, elementCondition: string): string {
  return `(${t(path)} = 'array' AND EXISTS (SELECT 1 FROM json_each(doc, ${jsonPath(path)}) AS e WHERE ${elementCondition}))`;
}

function equals(path: string, value: Scalar, arrays: boolean, params: SQLInputValue[]): string {
  const scalar = scalarEquals(path, value, params);
  if (!arrays) return scalar;
  return `(${scalar} OR ${arrayAny(path, elementEquals(value, params))})`;
}

/** Scalars of one class in one IN list, so that the comparison stays indexable. */
function inList(path: string, values: Scalar[], arrays: boolean, params: SQLInputValue[]): string {
  if (values.length === 0) return '0';
  const scalarParts: string[] = [];
  const elementParts: string[] = [];
  const texts = [...new Set(values.filter((v): v is string => typeof v === 'string'))];
  const numbers = [...new Set(values.filter((v): v is number => typeof v === 'number'))];
  const others = [...new Set(values.filter((v) => v === null || typeof v === 'boolean'))];
  const scalarParams: SQLInputValue[] = [];
  const elementParams: SQLInputValue[] = [];
  for (const [cls, list] of [
    ['text', texts],
    ['number', numbers],
  ] as const) {
    if (list.length === 0) continue;
    const marks = list.map(() => '?').join(',');
    scalarParts.push(list.some(needsTypeTest) ? `(${x(path)} IN (${marks}) AND ${typeIs(t(path), cls)})` : `${x(path)} IN (${marks})`);
    scalarParams.push(...list);
    elementParts.push(`(${typeIs('e.type', cls)} AND e.value IN (${marks}))`);
    elementParams.push(...list);
  }
  for (const value of others) {
    scalarParts.push(scalarEquals(path, value, scalarParams));
    elementParts.push(elementEquals(value, elementParams));
  }
  params.push(...scalarParams);
  const scalar = scalarParts.length === 1 ? scalarParts[0]! : `(${scalarParts.join(' OR ')})`;
  if (!arrays) return scalar;
  params.push(...elementParams);
  return `(${scalar} OR ${arrayAny(path, elementParts.join(' OR '))})`;
}

function compileOperation(path: string, operation: Operation, arrays: boolean, params: SQLInputValue[]): string {
  switch (operation.op) {
    case 'eq':
      return equals(path, operation.value, arrays, params);
    case 'ne':
      // MongoDB's $ne also matches documents without the field, and arrays without the value.
      return `NOT COALESCE(${equals(path, operation.value, arrays, params)}, 0)`;
    case 'in':
      return inList(path, operation.values, arrays, params);
    case 'all':
      if (operation.values.length === 0) return '0';
      return `(${[...new Set(operation.values)].map((value) => equals(path, value, arrays, params)).join(' AND ')})`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const cls = typeof operation.value === 'string' ? 'text' : 'number';
      const sqlOp = RANGE_SQL[operation.op];
      params.push(operation.value);
      const scalar = `(${x(path)} ${sqlOp} ? AND ${typeIs(t(path), cls)})`;
      if (!arrays) return scalar;
      params.push(operation.value);
      return `(${scalar} OR ${arrayAny(path, `${typeIs('e.type', cls)} AND e.value ${sqlOp} ?`)})`;
    }
    case 'exists':
      return operation.value ? `${t(path)} IS NOT NULL` : `${t(path)} IS NULL`;
  }
}
