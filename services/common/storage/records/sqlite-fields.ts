// What the embedded records store (sqlite.ts) knows of each collection's fields, kept in the file
// so that every connection shares it: which dot paths ever held an array (only those get the
// json_each branch of a filter), and which multikey side tables are built (sqlite-multikey.ts).
// Both only grow, so a cached "yes" stays true; a "no" is re-read when another connection has
// written (PRAGMA data_version).

import type { IndexSpec } from './interface.ts';
import {
  buildMultikeys,
  loadMultikeys,
  MULTIKEY_TABLE_SQL,
  multikeyFields,
  registerMultikeyFields,
  type Multikey,
  type MultikeyConnection,
  type MultikeyField,
} from './sqlite-multikey.ts';
import { tableName } from './sqlite-sql.ts';

const ARRAY_PATHS_TABLE = 'mindgate_array_paths';

/** The tables this module keeps, created when a connection opens. */
export const FIELD_TABLES_SQL = `CREATE TABLE IF NOT EXISTS ${ARRAY_PATHS_TABLE} (
  collection TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (collection, path)
) WITHOUT ROWID;
${MULTIKEY_TABLE_SQL};`;

export interface FieldsConnection extends MultikeyConnection {
  /** Runs `work` in a write transaction (BEGIN IMMEDIATE). */
  transaction<T>(work: () => T): T;
}

function fieldKey(collection: string, field: MultikeyField): string {
  return JSON.stringify([collection, field.path, field.prefix]);
}

export class CollectionFields {
  private readonly conn: FieldsConnection;
  private readonly arrayPaths = new Map<string, Set<string>>();
  private multikeyTables = new Map<string, Multikey[]>();
  // Index spec fields this connection has registered as multikey candidates.
  private readonly registered = new Set<string>();
  private knownDataVersion = -1;

  constructor(conn: FieldsConnection) {
    this.conn = conn;
  }

  /** Re-reads what other connections may have added since the last call. */
  refresh(): void {
    const row = this.conn.statement('PRAGMA data_version').get() as { data_version: number };
    if (row.data_version === this.knownDataVersion) return;
    this.knownDataVersion = row.data_version;
    this.arrayPaths.clear();
    for (const r of this.conn.statement(`SELECT collection, path FROM ${ARRAY_PATHS_TABLE}`).all() as Array<{
      collection: string;
      path: string;
    }>) {
      let set = this.arrayPaths.get(r.collection);
      if (!set) this.arrayPaths.set(r.collection, (set = new Set()));
      set.add(r.path);
    }
    this.multikeyTables = loadMultikeys(this.conn, tableName);
  }

  /**
   * Notes the paths that hold arrays in a document about to be written. The first array at a
   * path builds the side tables registered for it, before the document is written.
   */
  noteArrayPaths(collection: string, paths: string[]): void {
    const known = this.arrayPaths.get(collection);
    const fresh = paths.filter((path) => !known?.has(path));
    if (fresh.length === 0) return;
    const built = this.conn.transaction(() =>
      fresh.flatMap((path) => {
        this.conn.statement(`INSERT OR IGNORE INTO ${ARRAY_PATHS_TABLE} (collection, path) VALUES (?, ?)`).run(collection, path);
        return buildMultikeys(this.conn, collection, tableName(collection), path);
      }),
    );
    // Only after the commit: a rolled-back build must not be queried.
    const set = known ?? new Set<string>();
    for (const path of fresh) set.add(path);
    this.arrayPaths.set(collection, set);
    this.addMultikeys(collection, built);
  }

  /** Registers the fields of index specs as multikey candidates, building those that hold arrays. */
  registerIndexSpecs(collection: string, specs: IndexSpec[]): void {
    const fields = specs.flatMap(multikeyFields).filter((field) => !this.registered.has(fieldKey(collection, field)));
    if (fields.length === 0) return;
    const built = this.conn.transaction(() => {
      registerMultikeyFields(this.conn, collection, fields);
      const arrays = this.conn.statement(`SELECT path FROM ${ARRAY_PATHS_TABLE} WHERE collection = ?`).all(collection) as Array<{
        path: string;
      }>;
      const paths = new Set(fields.map((field) => field.path));
      return arrays
        .filter((row) => paths.has(row.path))
        .flatMap((row) => buildMultikeys(this.conn, collection, tableName(collection), row.path));
    });
    for (const field of fields) this.registered.add(fieldKey(collection, field));
    this.addMultikeys(collection, built);
  }

  private addMultikeys(collection: string, built: Multikey[]): void {
    if (built.length === 0) return;
    this.multikeyTables.set(collection, [...(this.multikeyTables.get(collection) ?? []), ...built]);
  }

  isArray(collection: string, path: string): boolean {
    return this.arrayPaths.get(collection)?.has(path) === true;
  }

  /** The built side tables of a path. */
  multikeys(collection: string, path: string): Multikey[] {
    return this.multikeyTables.get(collection)?.filter((multikey) => multikey.path === path) ?? [];
  }
}
