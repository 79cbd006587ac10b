import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hasErrno } from '../util/errno.js';

/**
 * Locking for the shared mode: an exclusive lock between processes on one host around each append
 * to one audit file (FILE.lock).
 */
const LOCK_STALE_MS = 10_000;
const LOCK_TIMEOUT_MS = 20_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Create the lock file with O_EXCL, holding a token of its own (pid:random); remove it to release.
 * A lock whose holder is gone (no such pid) or that is older than 10 s (a record takes microseconds)
 * is broken. Release and breaking remove the file only while it holds the token they expect: a
 * holder whose lock was broken as stale must not remove the next holder's lock on release (a third
 * process would enter beside the second). The append it guards is synchronous, so the wait is too:
 * it sleeps in 1 ms steps without spinning the CPU.
 */
export function acquireFileLock(lockPath: string): () => void {
  const token = `${process.pid}:${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      return () => removeLockIfHeld(lockPath, token);
    } catch (error) {
      if (!hasErrno(error, 'EEXIST')) throw error;
    }
    const stale = staleLockToken(lockPath);
    if (stale !== undefined) {
      removeLockIfHeld(lockPath, stale);
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

/**
 * Removes the lock file if it holds `token`. Reading and then unlinking would leave a window in
 * which another process replaces the file (breaking it as stale) and loses its lock to our unlink.
 * So the file is first renamed to a name of our own (atomic: whatever we moved, nobody else holds it
 * under that name), checked there, and put back with link(2) (which never replaces a newer lock) if
 * it was not the expected one. The first read skips all that when the lock is plainly not ours.
 */
function removeLockIfHeld(lockPath: string, token: string): void {
  if (readOrUndefined(lockPath) !== token) return;
  const aside = `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}.release`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return; // gone already: broken by another process
  }
  try {
    if (readOrUndefined(aside) !== token) {
      try {
        linkSync(aside, lockPath);
      } catch {
        // a newer lock took the name in between; it stands, and the one moved aside was broken anyway
      }
    }
  } finally {
    try {
      unlinkSync(aside);
    } catch {
      // nothing left to remove
    }
  }
}

/** The token of a lock that may be broken (its holder is gone, or it is too old); undefined if it stands. */
function staleLockToken(lockPath: string): string | undefined {
  try {
    // Token first, then age: if the file is replaced in between, the age is the newer lock's (young),
    // and removal compares the token, so a fresh lock is never taken for the stale one read before.
    const token = readFileSync(lockPath, 'utf8');
    const age = Date.now() - statSync(lockPath).mtimeMs;
    if (age > LOCK_STALE_MS) return token;
    const pid = Number(token.split(':')[0]);
    if (!Number.isInteger(pid) || pid <= 0) return age > 1000 ? token : undefined; // being written, or garbage
    try {
      process.kill(pid, 0);
      return undefined;
    } catch (e) {
      return hasErrno(e, 'ESRCH') ? token : undefined;
    }
  } catch {
    return undefined; // gone already: retry the create
  }
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
