// Input checks shared by every records implementation. Both stores parse filters, options and
// documents here, so that they accept and refuse exactly the same inputs, and neither ever
// passes an operator it did not vet to its database (no `$where`, no `$regex`).

import { InvalidFilterError, InvalidRecordError } from './errors.ts';
import type { Condition, FindOptions, IndexSpec, PutOptions, RecordDoc, Scalar } from './interface.ts';

/** One comparison of a parsed filter. Scalars are already validated. */
export type Operation =
  | { op: 'eq'; value: Scalar }
  | { op: 'ne'; value: Scalar }
  | { op: 'in'; values: Scalar[] }
  | { op: 'all'; values: Scalar[] }
  | { op: 'gt' | 'gte' | 'lt' | 'lte'; value: number | string }
  | { op: 'exists'; value: boolean };

/** All operations of a clause must hold, and all clauses of a filter. */
export interface Clause {
  path: string;
  operations: Operation[];
}

export interface ParsedFindOptions {
  sort?: { field: string; direction: 'asc' | 'desc' };
  limit?: number;
  skip: number;
}

/** The field that the MongoDB store keeps beside `expiresAt` for its TTL index. */
export const HIDDEN_EXPIRY_FIELD = '_expiresAtDate';

const MAX_PATH_LENGTH = 256;
const MAX_ID_LENGTH = 1024;
const MAX_DEPTH = 64;
const MAX_LIST = 10_000;

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);

/** Collection names: case matters, and each maps to its own table or MongoDB collection. */
export function checkCollectionName(name: unknown): string {
  if (typeof name !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name)) {
    throw new InvalidFilterError(
      `collection name ${describe(name)} must start with a letter and hold at most 64 letters, digits, "_" or "-"`,
    );
  }
  return name;
}

/**
 * A field path: dot-separated names, each non-empty, not starting with "$", without quotes,
 * and not all digits (MongoDB would read those as array positions, the embedded store as
 * object keys, so neither is allowed). `_id` is only valid as the whole path.
 */
export function checkPath(path: unknown, what = 'field'): string {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_PATH_LENGTH) {
    throw new InvalidFilterError(`${what} ${describe(path)} must be a non-empty string of at most ${MAX_PATH_LENGTH} characters`);
  }
  const segments = path.split('.');
  for (const segment of segments) {
    if (segment.length === 0 || segment.startsWith('$') || /["\\\u0000-\u001f]/.test(segment) || /^\d+$/.test(segment)) {
      throw new InvalidFilterError(
        `${what} "${path}" is not a valid path: each dot-separated name must be non-empty, must not start with "$", be all digits, or hold quotes, backslashes or control characters`,
      );
    }
  }
  if (segments[0] === HIDDEN_EXPIRY_FIELD) throw new InvalidFilterError(`${what} "${path}" is reserved`);
  if (segments.length > 1 && segments[0] === '_id') {
    throw new InvalidFilterError(`${what} "${path}": _id is a string and has no fields`);
  }
  return path;
}

export function isScalar(value: unknown): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function checkScalar(value: unknown, where: string): Scalar {
  if (!isScalar(value)) {
    throw new InvalidFilterError(`${where}: expected a string, a finite number, a boolean or null, got ${describe(value)}`);
  }
  return value;
}

function checkScalarList(value: unknown, where: string): Scalar[] {
  if (!Array.isArray(value)) throw new InvalidFilterError(`${where}: expected an array, got ${describe(value)}`);
  if (value.length > MAX_LIST) throw new InvalidFilterError(`${where}: at most ${MAX_LIST} values`);
  return value.map((item, i) => checkScalar(item, `${where}[${i}]`));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function parseCondition(path: string, condition: unknown): Operation[] {
  if (isScalar(condition)) return [{ op: 'eq', value: condition }];
  if (!isPlainObject(condition)) {
    throw new InvalidFilterError(`filter on "${path}": expected a scalar or an operator object, got ${describe(condition)}`);
  }
  const keys = Object.keys(condition);
  if (keys.length === 0) throw new InvalidFilterError(`filter on "${path}": empty operator object`);
  const operations: Operation[] = [];
  for (const key of keys) {
    const value = condition[key];
    const where = `filter on "${path}" ${key}`;
    if (key === '$in' || key === '$all') {
      operations.push({ op: key === '$in' ? 'in' : 'all', values: checkScalarList(value, where) });
    } else if (key === '$ne') {
      operations.push({ op: 'ne', value: checkScalar(value, where) });
    } else if (RANGE_OPERATORS.has(key)) {
      if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
        throw new InvalidFilterError(`${where}: expected a string or a finite number, got ${describe(value)}`);
      }
      operations.push({ op: key.slice(1) as 'gt' | 'gte' | 'lt' | 'lte', value });
    } else if (key === '$exists') {
      if (typeof value !== 'boolean') throw new InvalidFilterError(`${where}: expected true or false, got ${describe(value)}`);
      operations.push({ op: 'exists', value });
    } else {
      throw new InvalidFilterError(
        `filter on "${path}": unsupported operator ${JSON.stringify(key)} (supported: $in, $ne, $gt, $gte, $lt, $lte, $all, $exists)`,
      );
    }
  }
  return operations;
}

export function parseFilter(filter: unknown): Clause[] {
  if (!isPlainObject(filter)) throw new InvalidFilterError(`filter must be a plain object, got ${describe(filter)}`);
  return Object.keys(filter).map((path) => {
    checkPath(path, 'filter field');
    return { path, operations: parseCondition(path, (filter as Record<string, Condition>)[path]) };
  });
}

/** `expect` of a compare-and-set: field equalities, with the filters' equality semantics. */
export function parseExpect(expect: PutOptions['expect']): Clause[] | null | undefined {
  if (expect === undefined || expect === null) return expect;
  if (!isPlainObject(expect)) throw new InvalidFilterError(`expect must be null or a plain object, got ${describe(expect)}`);
  return Object.keys(expect).map((path) => {
    checkPath(path, 'expect field');
    return { path, operations: [{ op: 'eq', value: checkScalar(expect[path], `expect "${path}"`) }] };
  });
}

export function parseFindOptions(options: FindOptions | undefined): ParsedFindOptions {
  if (options === undefined) return { skip: 0 };
  if (!isPlainObject(options)) throw new InvalidFilterError(`find options must be a plain object, got ${describe(options)}`);
  const parsed: ParsedFindOptions = { skip: 0 };
  if (options.sort !== undefined) {
    const { sort } = options;
    if (!isPlainObject(sort)) throw new InvalidFilterError(`sort must be { field, direction }, got ${describe(sort)}`);
    if (sort.direction !== 'asc' && sort.direction !== 'desc') {
      throw new InvalidFilterError(`sort direction must be "asc" or "desc", got ${describe(sort.direction)}`);
    }
    parsed.sort = { field: checkPath(sort.field, 'sort field'), direction: sort.direction };
  }
  if (options.limit !== undefined) parsed.limit = checkCount(options.limit, 'limit');
  if (options.skip !== undefined) parsed.skip = checkCount(options.skip, 'skip');
  return parsed;
}

function checkCount(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidFilterError(`${what} must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

export function checkIndexSpecs(indexes: unknown): IndexSpec[] {
  if (indexes === undefined) return [];
  if (!Array.isArray(indexes)) throw new InvalidFilterError(`indexes must be an array, got ${describe(indexes)}`);
  return indexes.map((spec, i) => {
    if (!isPlainObject(spec) || !Array.isArray(spec.fields) || spec.fields.length === 0 || spec.fields.length > 16) {
      throw new InvalidFilterError(`indexes[${i}] must be { fields: [1 to 16 field paths], unique? }`);
    }
    if (spec.unique !== undefined && typeof spec.unique !== 'boolean') {
      throw new InvalidFilterError(`indexes[${i}].unique must be a boolean`);
    }
    const fields = spec.fields.map((field) => checkPath(field, `indexes[${i}] field`));
    if (new Set(fields).size !== fields.length) throw new InvalidFilterError(`indexes[${i}] names a field twice`);
    return { fields, unique: spec.unique === true };
  });
}

export function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new InvalidRecordError(`_id must be a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${describe(id)}`);
  }
  return id;
}

export function checkIds(ids: unknown): string[] {
  if (!Array.isArray(ids)) throw new InvalidRecordError(`ids must be an array, got ${describe(ids)}`);
  return ids.map(checkId);
}

function checkExpiresAt(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidRecordError(`expiresAt must be epoch milliseconds (a finite number), got ${describe(value)}`);
  }
  return value;
}

/**
 * Checks that `doc` is plain JSON the store can round-trip unchanged: strings, finite numbers,
 * booleans, null, arrays and plain objects, with field names that filters can address. Returns
 * the dot paths (outside arrays) that hold arrays, which the embedded store needs to know.
 */
export function checkDoc(doc: unknown): { id: string; expiresAt: number | undefined; arrayPaths: string[] } {
  if (!isPlainObject(doc)) throw new InvalidRecordError(`a record must be a plain object, got ${describe(doc)}`);
  const id = checkId(doc._id);
  const expiresAt = checkExpiresAt(doc.expiresAt);
  if (HIDDEN_EXPIRY_FIELD in doc) throw new InvalidRecordError(`field "${HIDDEN_EXPIRY_FIELD}" is reserved`);
  const arrayPaths: string[] = [];
  checkValue(doc, '', 0, arrayPaths, true);
  return { id, expiresAt, arrayPaths };
}

function checkValue(value: unknown, path: string, depth: number, arrayPaths: string[] | null, top: boolean): void {
  if (depth > MAX_DEPTH) throw new InvalidRecordError(`record nests deeper than ${MAX_DEPTH} levels at "${path}"`);
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidRecordError(`field "${path}" is not a finite number`);
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        if (arrayPaths && path) arrayPaths.push(path);
        for (let i = 0; i < value.length; i++) checkValue(value[i], `${path}[${i}]`, depth + 1, null, false);
        return;
      }
      if (!isPlainObject(value)) {
        throw new InvalidRecordError(`field "${path}" holds a ${describe(value)}: records hold plain JSON values only`);
      }
      for (const key of Object.keys(value)) {
        if (key.length === 0 || key.startsWith('$') || key.includes('.') || key.includes('\u0000')) {
          throw new InvalidRecordError(
            `field name ${JSON.stringify(key)} under "${path || '(top)'}" is not allowed: names must be non-empty and must not start with "$" or contain "." or NUL`,
          );
        }
        const child = (value as Record<string, unknown>)[key];
        if (child === undefined) continue;
        if (top && key === '_id') continue;
        checkValue(child, path ? `${path}.${key}` : key, depth + 1, arrayPaths, false);
      }
      return;
    default:
      throw new InvalidRecordError(`field "${path}" holds a ${typeof value}: records hold plain JSON values only`);
  }
}

export interface ParsedIncrement {
  id: string;
  field: string;
  by: number;
  expiresAt: number | undefined;
  fields: Record<string, Scalar>;
}

export function parseIncrement(
  id: unknown,
  field: unknown,
  by: unknown,
  init: { expiresAt?: number; fields?: Record<string, Scalar> } | undefined,
): ParsedIncrement {
  checkId(id);
  checkPath(field, 'increment field');
  if (field === '_id' || field === 'expiresAt') throw new InvalidFilterError(`increment field cannot be ${field}`);
  if (typeof by !== 'number' || !Number.isFinite(by))
    throw new InvalidFilterError(`increment by must be a finite number, got ${describe(by)}`);
  if (init !== undefined && !isPlainObject(init)) throw new InvalidFilterError('increment init must be an object');
  const fields = init?.fields ?? {};
  if (!isPlainObject(fields)) throw new InvalidFilterError('increment init.fields must be a plain object');
  for (const key of Object.keys(fields)) {
    if (key === '_id' || key === 'expiresAt' || key === HIDDEN_EXPIRY_FIELD) {
      throw new InvalidFilterError(`increment init.fields cannot set ${key}`);
    }
    checkPath(key, 'increment init field');
    if (key.includes('.')) throw new InvalidFilterError(`increment init field "${key}" must be a top-level name`);
    checkScalar(fields[key], `increment init field "${key}"`);
  }
  return {
    id: id as string,
    field: field as string,
    by,
    expiresAt: checkExpiresAt(init?.expiresAt),
    fields: fields as Record<string, Scalar>,
  };
}

/** The document `increment` creates when none is live: `init.fields`, then field = by. */
export function newCounterDoc(parsed: ParsedIncrement): RecordDoc {
  const doc: RecordDoc = { _id: parsed.id, ...parsed.fields };
  setPath(doc, parsed.field, parsed.by);
  if (parsed.expiresAt !== undefined) doc.expiresAt = parsed.expiresAt;
  return doc;
}

export function getPath(doc: Record<string, unknown>, path: string): unknown {
  let current: unknown = doc;
  for (const segment of path.split('.')) {
    if (!isPlainObject(current)) return undefined;
    current = current[segment];
  }
  return current;
}

/** Sets a dot path, creating objects on the way; throws if a parent holds a non-object. */
export function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.split('.');
  let current: Record<string, unknown> = doc;
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    const next = current[segment];
    if (next === undefined) {
      const created: Record<string, unknown> = {};
      current[segment] = created;
      current = created;
    } else if (isPlainObject(next)) {
      current = next;
    } else {
      throw new InvalidRecordError(`cannot set "${path}": "${segments.slice(0, i + 1).join('.')}" is not an object`);
    }
  }
  current[segments[segments.length - 1]!] = value;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}
