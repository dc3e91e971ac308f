// Cursor pagination over a records collection, the one way every list RPC pages: documents in
// order of a numeric field (ties broken by `_id`, as FindOptions promise), a page at a time. The
// page token is opaque to callers: it holds the last document's sort value and id, and the
// listing's scope (the organization, say), so a token replayed on another listing is refused
// instead of silently starting somewhere else. Tokens are not secret: the filter, which holds the
// tenant, is always applied, so a forged token can only move within the caller's own list.
import { Code, ConnectError } from '@connectrpc/connect';
import type { Filter, RecordCollection, RecordDoc } from './interface.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export interface PageRequest {
  /** 1-100; 0 means DEFAULT_PAGE_SIZE. */
  pageSize: number;
  /** The previous page's nextPageToken, or '' for the first page. */
  pageToken: string;
}

export interface PageOptions {
  /** Numeric field the list is ordered by (a creation time, usually). */
  field: string;
  /** Ascending (the default) or descending on `field`; ties are always in id order. */
  direction?: 'asc' | 'desc';
  /** Only documents whose `field` is in [gte, lt). */
  range?: { gte?: number; lt?: number };
  /** What the listing is of; a token issued for another scope is refused. */
  scope: string;
  /** Largest page a caller may ask for (MAX_PAGE_SIZE unless said). */
  maxPageSize?: number;
}

export interface Page<T> {
  items: T[];
  /** '' on the last page. */
  nextPageToken: string;
}

interface Cursor {
  /** Scope. */
  s: string;
  /** Sort value of the last document on the previous page. */
  v: number;
  /** Its id. */
  i: string;
}

function invalidToken(): never {
  throw new ConnectError('page_token: is not a token of this listing; start again without it', Code.InvalidArgument);
}

function decode(token: string, scope: string): Cursor | undefined {
  if (token === '') return undefined;
  if (token.length > 2_048 || !/^[A-Za-z0-9_-]+$/.test(token)) invalidToken();
  let cursor: Cursor;
  try {
    cursor = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Cursor;
  } catch {
    invalidToken();
  }
  const valid =
    typeof cursor === 'object' &&
    cursor !== null &&
    cursor.s === scope &&
    typeof cursor.v === 'number' &&
    Number.isFinite(cursor.v) &&
    typeof cursor.i === 'string';
  return valid ? cursor : invalidToken();
}

function encode(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function pageSizeOf(requested: number, max = MAX_PAGE_SIZE): number {
  if (!Number.isInteger(requested) || requested < 0 || requested > max) {
    throw new ConnectError(`page_size: must be from 1 to ${max} (0 for ${DEFAULT_PAGE_SIZE})`, Code.InvalidArgument);
  }
  return requested === 0 ? DEFAULT_PAGE_SIZE : requested;
}

/** The condition on the sort field: the caller's range, narrowed to what follows the cursor. */
function fieldCondition(options: PageOptions, cursor: Cursor | undefined): Record<string, number> | undefined {
  const condition: Record<string, number> = {};
  if (options.range?.gte !== undefined) condition.$gte = options.range.gte;
  if (options.range?.lt !== undefined) condition.$lt = options.range.lt;
  if (cursor && options.direction === 'desc') condition.$lte = cursor.v;
  if (cursor && options.direction !== 'desc') condition.$gte = Math.max(cursor.v, condition.$gte ?? cursor.v);
  return Object.keys(condition).length > 0 ? condition : undefined;
}

/** One page of the documents matching `filter`, ordered by `options.field` then `_id`. */
export async function findPage<T extends RecordDoc>(
  collection: RecordCollection<T>,
  filter: Filter,
  request: PageRequest,
  options: PageOptions,
): Promise<Page<T>> {
  const size = pageSizeOf(request.pageSize, options.maxPageSize);
  const cursor = decode(request.pageToken, options.scope);
  const sort = { field: options.field, direction: options.direction ?? 'asc' };
  const condition = fieldCondition(options, cursor);
  const where = (condition ? { ...filter, [options.field]: condition } : filter) as Filter;
  const items: T[] = [];
  let skip = 0;
  // Documents sharing the cursor's sort value and sorting at or before its id (ties are in id
  // order in both directions) were on earlier pages: fetch past them. Ties are rare (one
  // millisecond), so this loops once in practice.
  for (;;) {
    const batch = await collection.find(where, { sort, skip, limit: size + 1 });
    for (const doc of batch) {
      if (cursor && doc[options.field] === cursor.v && doc._id <= cursor.i) continue;
      items.push(doc);
    }
    if (items.length > size || batch.length < size + 1) break;
    skip += batch.length;
  }
  const page = items.slice(0, size);
  if (items.length <= size) return { items: page, nextPageToken: '' };
  const last = page[page.length - 1];
  return { items: page, nextPageToken: encode({ s: options.scope, v: last[options.field] as number, i: last._id }) };
}

/**
 * One page of a list already read whole and sorted by (`position(item).v`, `position(item).i`),
 * with the same tokens as findPage: for listings the records port cannot order (a grouping, say).
 */
export function pageOf<T>(
  sorted: readonly T[],
  position: (item: T) => { v: number; i: string },
  request: PageRequest,
  options: Pick<PageOptions, 'scope' | 'maxPageSize'>,
): Page<T> {
  const size = pageSizeOf(request.pageSize, options.maxPageSize);
  const cursor = decode(request.pageToken, options.scope);
  const after = (item: T) => {
    if (!cursor) return true;
    const { v, i } = position(item);
    return v > cursor.v || (v === cursor.v && i > cursor.i);
  };
  const rest = sorted.filter(after);
  const page = rest.slice(0, size);
  if (rest.length <= size) return { items: page, nextPageToken: '' };
  const last = position(page[page.length - 1]);
  return { items: page, nextPageToken: encode({ s: options.scope, v: last.v, i: last.i }) };
}
