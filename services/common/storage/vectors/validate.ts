// Input checks shared by every vector store, so that the embedded store and Qdrant reject the
// same inputs with the same messages (the contract suite runs against both).

import type { PayloadValue, VectorFilter, VectorPoint, VectorSearchOptions } from './interface.ts';

/** Input a vector store cannot accept. Callers map it to an invalid-argument error. */
export class VectorInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorInputError';
  }
}

/** The most matches one search returns. */
export const MAX_SEARCH_LIMIT = 1000;

// Payload keys become Qdrant key paths (`payload.<key>`), where dots, brackets and quotes have
// meaning; restricting keys to a plain alphabet keeps both stores' filters identical.
const PAYLOAD_KEY = /^[A-Za-z0-9_-]{1,64}$/;

export function checkOrganizationId(organizationId: unknown): string {
  if (typeof organizationId !== 'string' || organizationId.length === 0) {
    throw new VectorInputError('organizationId must be a non-empty string');
  }
  return organizationId;
}

function checkPointId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new VectorInputError('point id must be a non-empty string');
  }
  return id;
}

/**
 * Copies `vector` into a new L2-normalised Float32Array. Cosine similarity of unit vectors is
 * their dot product, which is what both stores compute. A zero vector has no direction, so it
 * is rejected rather than given an arbitrary score.
 */
export function normaliseVector(vector: unknown, dimensions: number, what: string): Float32Array {
  if (!(vector instanceof Float32Array) && !Array.isArray(vector)) {
    throw new VectorInputError(`${what} must be a Float32Array or an array of numbers`);
  }
  if (vector.length !== dimensions) {
    throw new VectorInputError(`${what} has ${vector.length} dimensions; this store holds ${dimensions}-dimensional vectors`);
  }
  const out = new Float32Array(dimensions);
  let sum = 0;
  for (let i = 0; i < dimensions; i++) {
    const x = vector[i];
    if (typeof x !== 'number') throw new VectorInputError(`${what} holds a non-number at index ${i}`);
    if (!Number.isFinite(x)) throw new VectorInputError(`${what} holds a non-finite value (${x}) at index ${i}`);
    out[i] = x;
    sum += x * x;
  }
  if (sum === 0) throw new VectorInputError(`${what} is the zero vector, which has no direction`);
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < dimensions; i++) out[i] *= scale;
  return out;
}

function checkValue(value: unknown, where: string): PayloadValue {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new VectorInputError(`${where} must be a finite number`);
    // JSON has no -0: normalise it so a payload reads the same before and after persistence.
    return value === 0 ? 0 : value;
  }
  if (Array.isArray(value)) {
    if (!value.every((item) => typeof item === 'string')) {
      throw new VectorInputError(`${where} must be an array of strings`);
    }
    return [...value];
  }
  throw new VectorInputError(`${where} must be a string, a number, a boolean or an array of strings`);
}

function checkFields(fields: unknown, what: string): Record<string, PayloadValue> {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new VectorInputError(`${what} must be an object`);
  }
  const out: Record<string, PayloadValue> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (!PAYLOAD_KEY.test(key) || key === '__proto__') {
      throw new VectorInputError(`${what} key "${key.slice(0, 80)}" must match ${PAYLOAD_KEY.source}`);
    }
    out[key] = checkValue(value, `${what}.${key}`);
  }
  return out;
}

export interface CheckedPoint {
  id: string;
  organizationId: string;
  /** L2-normalised. */
  vector: Float32Array;
  payload: Record<string, PayloadValue>;
}

/** Checks a whole batch before anything is written, so a bad point leaves the store unchanged. */
export function checkPoints(points: unknown, dimensions: number): CheckedPoint[] {
  if (!Array.isArray(points)) throw new VectorInputError('points must be an array');
  return points.map((point: VectorPoint, index) => {
    if (point === null || typeof point !== 'object') {
      throw new VectorInputError(`points[${index}] must be an object`);
    }
    const id = checkPointId(point.id);
    return {
      id,
      organizationId: checkOrganizationId(point.organizationId),
      vector: normaliseVector(point.vector, dimensions, `vector of point "${id.slice(0, 80)}"`),
      payload: checkFields(point.payload === undefined ? {} : point.payload, 'payload'),
    };
  });
}

export function checkIds(ids: unknown): string[] {
  if (!Array.isArray(ids)) throw new VectorInputError('ids must be an array');
  return ids.map(checkPointId);
}

export function checkFilter(filter: unknown): VectorFilter | undefined {
  if (filter === undefined) return undefined;
  return checkFields(filter, 'filter');
}

export function checkSearchOptions(options: unknown): { limit: number; filter?: VectorFilter } {
  if (options === null || typeof options !== 'object') {
    throw new VectorInputError('search options must be an object');
  }
  const { limit, filter } = options as VectorSearchOptions;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new VectorInputError(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  return { limit, filter: checkFilter(filter) };
}

function contains(field: PayloadValue | undefined, value: string | number | boolean): boolean {
  if (field === undefined) return false;
  if (Array.isArray(field)) return typeof value === 'string' && field.includes(value);
  return field === value;
}

/**
 * The filter semantics both stores implement (Qdrant's `match` on a field that may hold an
 * array): a scalar condition matches a field equal to it or an array field holding it; an array
 * condition matches when every one of its values is matched that way. Types are compared
 * strictly: the string "1" never matches the number 1.
 */
export function matchesFilter(payload: Record<string, PayloadValue>, filter: VectorFilter): boolean {
  for (const key in filter) {
    const condition = filter[key];
    const field = Object.hasOwn(payload, key) ? payload[key] : undefined;
    if (Array.isArray(condition)) {
      for (const value of condition) if (!contains(field, value)) return false;
    } else if (!contains(field, condition)) {
      return false;
    }
  }
  return true;
}

export function copyPayload(payload: Record<string, PayloadValue>): Record<string, PayloadValue> {
  const out: Record<string, PayloadValue> = {};
  for (const key in payload) {
    const value = payload[key];
    out[key] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

export function checkScanOptions(options: unknown): { after?: string; limit: number } {
  if (options === null || typeof options !== 'object') throw new VectorInputError('scan options must be an object');
  const { after, limit } = options as { after?: unknown; limit?: unknown };
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_SEARCH_LIMIT) {
    throw new VectorInputError(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  if (after !== undefined && (typeof after !== 'string' || after === '')) {
    throw new VectorInputError('after must be the `next` of a previous page');
  }
  return { after: after as string | undefined, limit: limit as number };
}
