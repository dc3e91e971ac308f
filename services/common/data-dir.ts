// DATA_DIR holds the records database (the authorization server's keys, sessions, every memory),
// the vector store and the generated secrets: it is private to the service user. The folder is
// 0700 and every file in it 0600, whatever the umask of the shell that started the process, and
// a folder left with looser modes by an earlier version is repaired at start.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from './log.ts';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Makes every file and folder this process creates private to its user (umask 077). Called first
 * thing in each process entry point, before any store or secret file is opened, so that files
 * created by libraries (SQLite's -wal and -shm, the mail outbox) are private too.
 */
export function usePrivateFileModes(): void {
  process.umask(0o077);
}

const octal = (mode: number) => (mode & 0o777).toString(8);

/** Sets `mode` on `file` when its permission bits differ; returns the change made, if any. */
function restrict(file: string, stat: fs.Stats, mode: number): { from: string; to: string } | undefined {
  if ((stat.mode & 0o777 & ~mode) === 0) return undefined;
  fs.chmodSync(file, mode);
  return { from: octal(stat.mode), to: octal(mode) };
}

/**
 * Creates `dir` (0700) when absent and `create` is set, and repairs the folder and every entry
 * directly in it: folders to 0700, files to 0600; symbolic links are left alone (their targets
 * are not ours to judge). Each change is logged as a warning with the path and the modes before
 * and after.
 */
export function preparePrivateDataDir(dir: string, logger: Logger, options: { create: boolean } = { create: true }): void {
  if (options.create) fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  else if (!fs.existsSync(dir)) return;
  const changed = (file: string, change: { from: string; to: string } | undefined) => {
    if (change)
      logger.warn({ path: file, ...change }, `${file} was readable by other users: mode changed from ${change.from} to ${change.to}`);
  };
  changed(dir, restrict(dir, fs.statSync(dir), PRIVATE_DIR_MODE));
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    const stat = fs.lstatSync(file);
    if (stat.isDirectory()) changed(file, restrict(file, stat, PRIVATE_DIR_MODE));
    else if (stat.isFile()) changed(file, restrict(file, stat, PRIVATE_FILE_MODE));
  }
}

/**
 * Creates `file` empty with mode 0600 when absent (its folder 0700), and tightens an existing
 * one. SQLite gives a database's -wal and -shm files the mode of the database file, so creating
 * the database file 0600 before SQLite opens it keeps all three private under any umask.
 */
export function ensurePrivateFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, PRIVATE_FILE_MODE);
  try {
    const stat = fs.fstatSync(fd);
    if ((stat.mode & 0o777 & ~PRIVATE_FILE_MODE) !== 0) fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}
