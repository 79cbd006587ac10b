// The shared mode's lock (FILE.lock): a token per holder, so a release or a stale-lock break removes
// only the lock it expects, never one another process has taken since.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireFileLock } from '../../src/audit/file-lock.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function lockPath(): { dir: string; lock: string } {
  const temp = tempDir();
  cleanup = temp.cleanup;
  return { dir: temp.dir, lock: join(temp.dir, 'audit.jsonl.lock') };
}

function age(lock: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  utimesSync(lock, then, then);
}

describe('audit file lock', () => {
  it('holds a token of its own and leaves nothing behind on release', () => {
    const { dir, lock } = lockPath();
    const release = acquireFileLock(lock);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}:[0-9a-f]{16}$`));
    release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a holder whose lock was broken as stale does not remove the next holder's lock on release", () => {
    const { dir, lock } = lockPath();
    const releaseA = acquireFileLock(lock);
    const tokenA = readFileSync(lock, 'utf8');
    age(lock, 60_000); // A is slow: its lock is past the 10 s staleness bound
    const releaseB = acquireFileLock(lock); // B breaks it and holds FILE.lock
    const tokenB = readFileSync(lock, 'utf8');
    expect(tokenB).not.toBe(tokenA);
    releaseA();
    expect(existsSync(lock), "A's release removed B's lock").toBe(true);
    expect(readFileSync(lock, 'utf8')).toBe(tokenB);
    releaseB();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('breaks a lock whose process is gone', () => {
    const { lock } = lockPath();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lock, `${gone}:0000000000000000`);
    const release = acquireFileLock(lock);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}:`));
    release();
  });

  it('breaks an old lock in the format without token (a pid only)', () => {
    const { lock } = lockPath();
    writeFileSync(lock, String(process.pid));
    age(lock, 60_000);
    const release = acquireFileLock(lock);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}:`));
    release();
    expect(existsSync(lock)).toBe(false);
  });
});
