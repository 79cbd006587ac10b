import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hasErrno } from '../util/errno.js';

/**
 * Locking for the shared mode: an exclusive lock between processes on one host around each append
 * to one audit file (FILE.lock).
 */
const LOCK_STALE_MS = 10_000;
const LOCK_TIMEOUT_MS = 20_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Create the lock file with O_EXCL (holding our pid), unlink it to release. A lock whose holder is
 * gone (no such pid) or that is older than 10 s (a record takes microseconds) is broken. The append
 * it guards is synchronous, so the wait is too: it sleeps in 1 ms steps without spinning the CPU.
 */
export function acquireFileLock(lockPath: string): () => void {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      return () => {
        try {
          unlinkSync(lockPath);
        } catch {
          // already broken as stale by another process
        }
      };
    } catch (error) {
      if (!hasErrno(error, 'EEXIST')) throw error;
    }
    if (lockIsStale(lockPath)) {
      try {
        unlinkSync(lockPath);
      } catch {
        // someone else broke it first
      }
      continue;
    }
    if (Date.now() > deadline) throw new Error('audit: timed out waiting for the audit file lock');
    Atomics.wait(sleeper, 0, 0, 1);
  }
}

/** Runs `fn` holding the file's lock (FILE.lock). */
export function withFileLock<T>(file: string, fn: () => T): T {
  const release = acquireFileLock(`${file}.lock`);
  try {
    return fn();
  } finally {
    release();
  }
}

function lockIsStale(lockPath: string): boolean {
  try {
    const age = Date.now() - statSync(lockPath).mtimeMs;
    if (age > LOCK_STALE_MS) return true;
    const pid = Number(readFileSync(lockPath, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return age > 1000; // being written, or garbage
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return hasErrno(e, 'ESRCH');
    }
  } catch {
    return false; // gone already: retry the create
  }
}
