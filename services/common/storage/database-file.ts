// The embedded stores' SQLite files are checked before they are opened for use: a file that is not
// a database, or whose pages fail SQLite's quick check (a torn copy, a disk fault, a file edited
// by hand), stops the start with one line naming the file, instead of failing on some later
// request, or at start with SQLite's bare "file is not a database".
//
// `PRAGMA quick_check` reads every page once (it skips the index-versus-table cross-check of
// `integrity_check`, which costs much more); its cost is in docs/operations.md.
import fs from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

/** A database file that cannot be used. The message names the file and what to do. */
export class DatabaseFileError extends Error {
  readonly file: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}; restore it from a backup, or move it away to start with an empty one`);
    this.name = 'DatabaseFileError';
    this.file = file;
  }
}

/** Lines of quick_check's report kept in the error: the first says where the damage is. */
const REPORTED_LINES = 2;

/** Checks `file` with PRAGMA quick_check when it exists and is not empty; throws DatabaseFileError. */
export function checkDatabaseFile(file: string): void {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (size === 0) return;
  let db: DatabaseSync | undefined;
  let report: string[];
  try {
    db = new DatabaseSync(file);
    db.exec('PRAGMA busy_timeout = 5000');
    report = (db.prepare('PRAGMA quick_check').all() as { quick_check: string }[]).map((row) => row.quick_check);
  } catch (err) {
    const message = (err as Error).message;
    if (/not a database/.test(message)) throw new DatabaseFileError(file, 'is not a SQLite database');
    // The check itself met a page it cannot parse.
    if (/malformed|corrupt/i.test(message)) throw new DatabaseFileError(file, `fails its integrity check (${message})`);
    throw new DatabaseFileError(file, `cannot be read (${message})`);
  } finally {
    db?.close();
  }
  if (report.length === 1 && report[0] === 'ok') return;
  const shown = report.slice(0, REPORTED_LINES).join('; ');
  throw new DatabaseFileError(
    file,
    `fails its integrity check (PRAGMA quick_check: ${shown}${report.length > REPORTED_LINES ? '; ...' : ''})`,
  );
}
