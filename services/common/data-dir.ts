// DATA_DIR holds the records database (the authorization server's keys, sessions, every memory),
// the vector store and the generated secrets: it is private to the service user. The folder is
// 0700 and every file in it 0600, whatever the umask of the shell that started the process, and
// a folder left with looser modes by an earlier version is repaired at start.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from './log.ts';
import { StartRefusedError, systemReason } from './start-refusal.ts';

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

/** A data directory that cannot be used, as one line naming it and the setting. */
function refuse(dir: string, problem: string, cause?: unknown): StartRefusedError {
  return new StartRefusedError(`DATA_DIR: ${dir} ${problem}`, undefined, { cause });
}

/** Creates `dir` (0700) when absent; refuses a path that is a file, or lies under one. */
function createDataDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw refuse(dir, 'is not a directory (a file is in the way)', err);
    throw refuse(dir, `cannot be created or reached (${systemReason(err)})`, err);
  }
  if (!fs.statSync(dir).isDirectory()) throw refuse(dir, 'is not a directory (a file is in the way)');
}

/**
 * Proves the folder writable by creating and removing a file in it: access(2) says yes to root on
 * any mode, and a read-only mount only shows when a write is tried.
 */
function checkWritable(dir: string): void {
  const probe = path.join(dir, `.write-check-${process.pid}`);
  try {
    fs.writeFileSync(probe, '', { mode: PRIVATE_FILE_MODE });
    fs.rmSync(probe);
  } catch (err) {
    throw refuse(dir, `is not writable by this process (user ${process.getuid?.() ?? '?'}): ${systemReason(err)}`, err);
  }
}

/**
 * Creates `dir` (0700) when absent and `create` is set (then checks that it is writable), and
 * repairs the folder and everything under it, at any depth: folders to 0700, files to 0600.
 * Symbolic links are neither changed nor followed (their targets are not ours to judge), nor are
 * sockets and other special files. Each change is logged as a warning with the path and the
 * modes before and after. A folder that cannot be used stops the start with one line naming it
 * (StartRefusedError).
 */
export function preparePrivateDataDir(dir: string, logger: Logger, options: { create: boolean } = { create: true }): void {
  if (options.create) {
    createDataDir(dir);
    // The embedded stores write here; with MongoDB and Qdrant it may be a read-only mount.
    checkWritable(dir);
  } else if (!fs.existsSync(dir)) return;
  else if (!fs.statSync(dir).isDirectory()) throw refuse(dir, 'is not a directory (a file is in the way)');
  const changed = (file: string, change: { from: string; to: string } | undefined) => {
    if (change)
      logger.warn({ path: file, ...change }, `${file} was readable by other users: mode changed from ${change.from} to ${change.to}`);
  };
  try {
    // DATA_DIR itself may be a symbolic link to the folder the operator chose: that one is followed.
    changed(dir, restrict(dir, fs.statSync(dir), PRIVATE_DIR_MODE));
    repairEntries(dir, changed);
  } catch (err) {
    const at = (err as NodeJS.ErrnoException).path ?? dir;
    throw refuse(dir, `cannot be made private: ${at}: ${systemReason(err)} (is it owned by another user?)`, err);
  }
}

/**
 * Repairs everything under `dir`, at any depth, without following symbolic links. Each folder is
 * made private before its entries are read, so no other user can swap an entry for a symbolic
 * link between the lstat that judges it and the chmod that repairs it.
 */
function repairEntries(dir: string, changed: (file: string, change: { from: string; to: string } | undefined) => void): void {
  const folders = [dir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    for (const name of fs.readdirSync(folder)) {
      const file = path.join(folder, name);
      const stat = fs.lstatSync(file);
      if (stat.isDirectory()) {
        changed(file, restrict(file, stat, PRIVATE_DIR_MODE));
        folders.push(file);
      } else if (stat.isFile()) changed(file, restrict(file, stat, PRIVATE_FILE_MODE));
    }
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
