/**
 * On a store with transactions (SQLite), every command that changes the tree is one commit: the
 * file, its kept version or tombstone and the name checks land together (one fsync with
 * durability=full). A wrapper counts commits as SQLite makes them: one per outermost transaction,
 * one per write outside any.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { isKeptVersionKey, snapshot, StoreWrapper, type StoreOp } from '../kit/stores.js';
import { callTool } from '../kit/vault.js';

class CommitCountingStore extends StoreWrapper {
  commits = 0;
  private readonly inTransaction = new AsyncLocalStorage<true>();
  constructor(inner: ObjectStore) {
    super(inner, { deleteExactly: true });
  }
  override readonly transaction = <T>(fn: () => Promise<T>): Promise<T> => {
    if (this.inTransaction.getStore()) return fn();
    this.commits += 1;
    return this.inner.transaction!(() => this.inTransaction.run(true, fn));
  };
  protected override step(op: StoreOp): void {
    const writes = op === 'put' || op === 'delete' || op === 'deleteExactly' || op === 'copy';
    if (writes && !this.inTransaction.getStore()) this.commits += 1;
  }
  override deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    if (keys.length > 0 && !this.inTransaction.getStore()) this.commits += 1;
    return super.deleteMany(keys);
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function keptVersions(store: ObjectStore): Promise<number> {
  let n = 0;
  for await (const o of listAll(store, 'u/')) if (isKeptVersionKey(o.key)) n += 1;
  return n;
}

describe('sqlite: one commit per command', () => {
  it('create, overwrite, str_replace, insert, rename and delete of files and directories: one commit each, history kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-commands-'));
    dirs.push(dir);
    const store = new CommitCountingStore(await SqliteStore.open(join(dir, 'store.db')));
    const vault = await createVault({ store, encryption: { masterKey: randomBytes(32).toString('base64') } });
    try {
      // The user's first command also stores the user's key: its own commit, once.
      expect((await callTool(vault, 'u1', { command: 'create', path: '/memories/z.md', file_text: 'z' })).isError).toBe(
        false,
      );
      const steps: [Record<string, unknown>, number][] = [
        [{ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' }, 1],
        [{ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\nthree\n' }, 1],
        [{ command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'TWO' }, 1],
        [{ command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'inserted' }, 1],
        [{ command: 'create', path: '/memories/d/b.md', file_text: 'b' }, 1],
        [{ command: 'create', path: '/memories/d/c.md', file_text: 'c' }, 1],
        [{ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/e.md' }, 2], // a tombstone, a version
        [{ command: 'rename', old_path: '/memories/d', new_path: '/memories/f' }, 4],
        [{ command: 'delete', path: '/memories/e.md' }, 1],
        [{ command: 'delete', path: '/memories/f' }, 2],
      ];
      for (const [input, newVersions] of steps) {
        const [commits, before] = [store.commits, await keptVersions(store)];
        const result = await callTool(vault, 'u1', input);
        expect(result.isError, JSON.stringify(result.content)).toBe(false);
        expect(store.commits - commits, JSON.stringify(input)).toBe(1);
        expect((await keptVersions(store)) - before, JSON.stringify(input)).toBe(newVersions);
      }
      // A refused command changes nothing.
      const before = await snapshot(store);
      const below = await callTool(vault, 'u1', { command: 'create', path: '/memories/d2/x.md/i.md', file_text: 'x' });
      expect(below.isError).toBe(false);
      const refused = await callTool(vault, 'u1', { command: 'create', path: '/memories/d2/x.md', file_text: 'x' });
      expect(refused.isError).toBe(true);
      expect((await snapshot(store)).size).toBe(before.size + 2); // the one file and its version
    } finally {
      await vault.close();
    }
  });
});
