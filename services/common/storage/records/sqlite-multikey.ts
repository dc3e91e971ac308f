// Multikey indexes for the embedded records store (sqlite.ts). MongoDB indexes an array field
// with one key per element (a "multikey" index), so "the array contains x" and `$in` over an
// array field are index lookups. An expression index on json_extract cannot do that: it holds the
// array's JSON text. So for an index spec field that holds arrays, the store keeps a side table
// with one row per (leading scalar fields of the spec, element, document id), and answers
// equality, `$in` and `$all` on that field from it instead of a json_each scan of every document.
//
// - Which side tables exist: every non-_id field of every declared index spec is registered in
//   `mindgate_multikey` with the spec's fields before it (its prefix). Its side table is built
//   (created, filled from the stored documents, and given its triggers, in one transaction) once
//   the field holds an array in the collection: when the spec is declared on a collection where
//   it already does, or when a write first stores an array there. A field that only ever holds
//   scalars keeps just its expression index.
// - Kept current by triggers on the collection's table (insert, update of the document, delete),
//   so every write of every connection — puts, compare-and-set, increments, takes, deleteMany,
//   the expiry sweep — changes the side table in the same statement as the document.
// - Keys are type-strict as the filter compiler is: a string or a number is stored as itself,
//   true and false as the blobs x'01' and x'00', which no string or number equals. A field that
//   holds a scalar gets one row (MongoDB's equality matches a scalar field equal to the value),
//   an array one row per distinct string, number or boolean element. Nulls, nested arrays and
//   objects get no row: a null query needs "missing" too, so it keeps the json_each form.
//   Prefix fields are keyed the same way (missing or null, an array, an object: other blobs).
// - A query uses a side table only when the filter also has an equality (not null) on every
//   prefix field, which then must not hold arrays; the longest usable prefix wins. The lookup is
//   a conjunct `_id IN (SELECT id FROM side …)`, and sqlite.ts makes it drive the query.

import { createHash } from 'node:crypto';
import type { SQLInputValue, StatementSync } from 'node:sqlite';

import type { IndexSpec, Scalar } from './interface.ts';
import { jsonPath, quoteIdent } from './sqlite-sql.ts';
import type { Clause, Operation } from './validate.ts';

export const MULTIKEY_TABLE = 'mindgate_multikey';
/** Side tables' names start with this (not with the collections' prefix: the sweep skips them). */
const SIDE_PREFIX = 'mk_';
/** Part of every side table's name: a change of its columns or keys gives new names. */
const SIDE_LAYOUT = 1;

export const MULTIKEY_TABLE_SQL = `CREATE TABLE IF NOT EXISTS ${MULTIKEY_TABLE} (
  collection TEXT NOT NULL, path TEXT NOT NULL, prefix TEXT NOT NULL, built INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (collection, path, prefix)
) WITHOUT ROWID`;

/** An index spec field that may hold arrays, with the spec's fields before it. */
export interface MultikeyField {
  path: string;
  prefix: string[];
}

/** A built side table (filled, with its triggers): queries may use it. */
export interface Multikey extends MultikeyField {
  table: string;
}

/** What the side tables need of the connection (the store's statement cache, and DDL). */
export interface MultikeyConnection {
  statement(sql: string): StatementSync;
  exec(sql: string): void;
}

type Key = string | number | boolean;

/** The candidate fields of a spec: every field but _id, its prefix cut before any _id. */
export function multikeyFields(spec: IndexSpec): MultikeyField[] {
  const fields: MultikeyField[] = [];
  spec.fields.forEach((path, i) => {
    if (path === '_id') return;
    const prefix = spec.fields.slice(0, i);
    const id = prefix.indexOf('_id');
    fields.push({ path, prefix: id === -1 ? prefix : prefix.slice(0, id) });
  });
  return fields;
}

function sideTableName(table: string, field: MultikeyField): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([SIDE_LAYOUT, field.path, field.prefix]))
    .digest('hex')
    .slice(0, 16);
  return `${SIDE_PREFIX}${table}__${hash}`;
}

/** Records the candidates (idempotent); nothing is built until a field holds arrays. */
export function registerMultikeyFields(conn: MultikeyConnection, collection: string, fields: MultikeyField[]): void {
  const insert = conn.statement(`INSERT OR IGNORE INTO ${MULTIKEY_TABLE} (collection, path, prefix) VALUES (?, ?, ?)`);
  for (const field of fields) insert.run(collection, field.path, JSON.stringify(field.prefix));
}

/**
 * Builds the side tables registered for `path` that are not built yet, and returns them. The
 * caller holds a write transaction, so the filling and the triggers see the same documents.
 */
export function buildMultikeys(conn: MultikeyConnection, collection: string, table: string, path: string): Multikey[] {
  const rows = conn
    .statement(`SELECT prefix FROM ${MULTIKEY_TABLE} WHERE collection = ? AND path = ? AND built = 0`)
    .all(collection, path) as Array<{ prefix: string }>;
  return rows.map((row) => {
    const field = { path, prefix: JSON.parse(row.prefix) as string[] };
    const multikey = { ...field, table: sideTableName(table, field) };
    buildSideTable(conn, table, multikey);
    conn
      .statement(`UPDATE ${MULTIKEY_TABLE} SET built = 1 WHERE collection = ? AND path = ? AND prefix = ?`)
      .run(collection, path, row.prefix);
    return multikey;
  });
}

/** Every built side table, by collection. */
export function loadMultikeys(conn: MultikeyConnection, tableOf: (collection: string) => string): Map<string, Multikey[]> {
  const rows = conn.statement(`SELECT collection, path, prefix FROM ${MULTIKEY_TABLE} WHERE built = 1`).all() as Array<{
    collection: string;
    path: string;
    prefix: string;
  }>;
  const out = new Map<string, Multikey[]>();
  for (const row of rows) {
    const field = { path: row.path, prefix: JSON.parse(row.prefix) as string[] };
    const list = out.get(row.collection) ?? [];
    list.push({ ...field, table: sideTableName(tableOf(row.collection), field) });
    out.set(row.collection, list);
  }
  return out;
}

/** A JSON value of a prefix field as a key: type-strict, and never NULL (a primary key column). */
function prefixKey(doc: string, path: string): string {
  const p = jsonPath(path);
  return `CASE json_type(${doc}, ${p}) WHEN 'true' THEN X'01' WHEN 'false' THEN X'00' WHEN 'array' THEN X'5B' WHEN 'object' THEN X'7B' ELSE coalesce(json_extract(${doc}, ${p}), X'') END`;
}

/** The key of a json_each row whose type is one of KEYED_TYPES. */
const ELEMENT_KEY = `CASE e.type WHEN 'true' THEN X'01' WHEN 'false' THEN X'00' ELSE e.value END`;
const KEYED_TYPES = `'text','integer','real','true','false'`;

function prefixColumns(multikey: Multikey): string[] {
  return multikey.prefix.map((_, i) => `k${i}`);
}

/**
 * The statement that adds the rows of the document `doc` (an SQL expression, with its id `id`)
 * read from `from`. json_each over a scalar yields the scalar itself, over an object its
 * members: those are left out, since no scalar equals an object.
 */
function insertRows(multikey: Multikey, doc: string, id: string, from = ''): string {
  const p = jsonPath(multikey.path);
  const columns = [...prefixColumns(multikey), 'v', 'id'];
  const values = [...multikey.prefix.map((field) => prefixKey(doc, field)), ELEMENT_KEY, id];
  return `INSERT OR IGNORE INTO ${quoteIdent(multikey.table)} (${columns.join(', ')})
    SELECT ${values.join(', ')} FROM ${from}json_each(${doc}, ${p}) AS e
    WHERE e.type IN (${KEYED_TYPES}) AND json_type(${doc}, ${p}) <> 'object'`;
}

function buildSideTable(conn: MultikeyConnection, table: string, multikey: Multikey): void {
  const side = quoteIdent(multikey.table);
  const records = quoteIdent(table);
  const keys = prefixColumns(multikey);
  const trigger = (event: string) => quoteIdent(`${multikey.table}__${event}`);
  conn.exec(
    `CREATE TABLE IF NOT EXISTS ${side} (
       ${keys.map((k) => `${k} ANY NOT NULL, `).join('')}v ANY NOT NULL, id TEXT NOT NULL,
       PRIMARY KEY (${[...keys, 'v', 'id'].join(', ')})
     ) STRICT, WITHOUT ROWID;
     CREATE INDEX IF NOT EXISTS ${quoteIdent(`${multikey.table}__id`)} ON ${side} (id);
     CREATE TRIGGER IF NOT EXISTS ${trigger('insert')} AFTER INSERT ON ${records} BEGIN
       ${insertRows(multikey, 'NEW.doc', 'NEW._id')};
     END;
     CREATE TRIGGER IF NOT EXISTS ${trigger('update')} AFTER UPDATE OF doc ON ${records} BEGIN
       DELETE FROM ${side} WHERE id = OLD._id;
       ${insertRows(multikey, 'NEW.doc', 'NEW._id')};
     END;
     CREATE TRIGGER IF NOT EXISTS ${trigger('delete')} AFTER DELETE ON ${records} BEGIN
       DELETE FROM ${side} WHERE id = OLD._id;
     END;`,
  );
  conn.exec(insertRows(multikey, 'r.doc', 'r._id', `${records} AS r, `));
}

/** A key as a bound parameter: booleans as the same blobs the side tables hold. */
function keyParam(value: Key): SQLInputValue {
  return typeof value === 'boolean' ? new Uint8Array([value ? 1 : 0]) : value;
}

/** The filter's non-null equalities on fields that hold no arrays: what a prefix can use. */
export function prefixEqualities(clauses: Clause[], isArrayPath: (path: string) => boolean): Map<string, Key> {
  const out = new Map<string, Key>();
  for (const clause of clauses) {
    if (clause.path === '_id' || isArrayPath(clause.path)) continue;
    for (const operation of clause.operations) {
      if (operation.op === 'eq' && operation.value !== null) out.set(clause.path, operation.value);
    }
  }
  return out;
}

function usable(candidates: readonly Multikey[], equalities: Map<string, Key>): Multikey | undefined {
  let best: Multikey | undefined;
  for (const candidate of candidates) {
    if (!candidate.prefix.every((field) => equalities.has(field))) continue;
    if (!best || candidate.prefix.length > best.prefix.length) best = candidate;
  }
  return best;
}

function lookup(multikey: Multikey, equalities: Map<string, Key>, values: Key[], params: SQLInputValue[]): string {
  const conditions = multikey.prefix.map((field, i) => {
    params.push(keyParam(equalities.get(field)!));
    return `k${i} = ?`;
  });
  params.push(...values.map(keyParam));
  conditions.push(values.length === 1 ? 'v = ?' : `v IN (${values.map(() => '?').join(',')})`);
  return `_id IN (SELECT id FROM ${quoteIdent(multikey.table)} WHERE ${conditions.join(' AND ')})`;
}

/**
 * The condition for an operation on a field that holds arrays, answered from a side table, or
 * undefined when none serves it (another operator, a null value, no usable prefix). The result
 * is always a top-level conjunct `_id IN (…)`, which the caller lets drive the query.
 */
export function multikeyCondition(
  operation: Operation,
  candidates: readonly Multikey[],
  equalities: Map<string, Key>,
  params: SQLInputValue[],
): string | undefined {
  let values: Scalar[];
  if (operation.op === 'eq') values = [operation.value];
  else if (operation.op === 'in' || operation.op === 'all') values = operation.values;
  else return undefined;
  if (values.length === 0 || values.includes(null)) return undefined;
  const multikey = usable(candidates, equalities);
  if (!multikey) return undefined;
  const keys = [...new Set(values as Key[])];
  if (operation.op !== 'all') return lookup(multikey, equalities, keys, params);
  return `(${keys.map((key) => lookup(multikey, equalities, [key], params)).join(' AND ')})`;
}
