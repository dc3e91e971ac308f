// One process per embedded vector file. Each process keeps its own in-memory matrices loaded
// from SQLite and never learns of rows another process adds, so a second process on the same
// file would serve stale search results without any sign. A lock file beside the database names
// the holder's PID; a second process is refused with that PID, and a lock left by a process that
// died (kill -9, a crash) is taken over. Several replicas need MongoDB and Qdrant instead.
//
// Stale detection is `kill(pid, 0)`: ESRCH means no such process. A lock naming this very
// process (PID reuse after a container restart, or a second store opened in one process) is
// ours. An unrelated process that happens to reuse the dead holder's PID keeps the lock until
// the file is removed; the error says which file.

import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/** Thrown when another live process holds the file; the message is one line for the operator. */
export class VectorFileLockedError extends Error {
  readonly lockPath: string;
  readonly holderPid: number;

  constructor(lockPath: string, holderPid: number) {
    super(
      `the embedded vector store ${lockPath.replace(/\.lock$/, '')} is in use by process ${holderPid} ` +
        `(lock file ${lockPath}): stop that process, or run replicas with MONGODB_URL and QDRANT_URL`,
    );
    this.name = 'VectorFileLockedError';
    this.lockPath = lockPath;
    this.holderPid = holderPid;
  }
}

/** Lock paths this process holds, with how many stores opened each. */
const held = new Map<string, number>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function tryCreate(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx', 0o600);
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Takes the lock for this process; returns the release function. */
export function acquireProcessLock(lockPath: string): () => void {
  const count = held.get(lockPath);
  if (count === undefined) {
    // Two rounds: the second follows the removal of a stale lock (or a holder that just left).
    let acquired = false;
    for (let round = 0; round < 2 && !acquired; round++) {
      if (tryCreate(lockPath)) {
        acquired = true;
        break;
      }
      const holder = readHolder(lockPath);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
        throw new VectorFileLockedError(lockPath, holder);
      }
      // Stale, empty (a holder that died between create and write), or ours from before.
      if (holder === process.pid) {
        acquired = true;
        break;
      }
      try {
        unlinkSync(lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    if (!acquired) throw new VectorFileLockedError(lockPath, readHolder(lockPath) ?? 0);
  }
  held.set(lockPath, (count ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (held.get(lockPath) ?? 1) - 1;
    if (left > 0) {
      held.set(lockPath, left);
      return;
    }
    held.delete(lockPath);
    if (readHolder(lockPath) === process.pid) {
      try {
        unlinkSync(lockPath);
      } catch {
        // Already gone: nothing to release.
      }
    }
  };
}
