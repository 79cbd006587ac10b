/**
 * In-process serialisation. Conditional writes already make concurrent edits safe across
 * processes; these locks keep one process's own concurrent calls (the SDK's toolRunner runs a
 * turn's tool calls at the same time) from storming the store with doomed conditional writes.
 *
 * Per user: a read/write lock over the whole tree (directory renames and deletes take it
 * exclusively; file edits take it shared), and a mutex per file path.
 */
import { KeyedMutex, ReadWriteLock } from '../util/rw-lock.js';

export class VaultLocks {
  private readonly trees = new Map<string, ReadWriteLock>();
  private readonly files = new KeyedMutex();

  /** Run `fn` holding the user's tree lock shared and the file's mutex. */
  async withFile<T>(uid: string, path: string, fn: () => Promise<T>): Promise<T> {
    const releaseTree = await this.tree(uid).acquire(false);
    try {
      return await this.files.run(`${uid}\u0000${path}`, fn);
    } finally {
      releaseTree();
      this.dropTreeIfIdle(uid);
    }
  }

  /** Run `fn` holding the user's tree lock exclusively (renames and deletes). */
  async withTree<T>(uid: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.tree(uid).acquire(true);
    try {
      return await fn();
    } finally {
      release();
      this.dropTreeIfIdle(uid);
    }
  }

  private tree(uid: string): ReadWriteLock {
    let lock = this.trees.get(uid);
    if (!lock) {
      lock = new ReadWriteLock();
      this.trees.set(uid, lock);
    }
    return lock;
  }

  private dropTreeIfIdle(uid: string): void {
    const lock = this.trees.get(uid);
    if (lock && lock.holders === 0) this.trees.delete(uid);
  }
}
