/**
 * In-process serialisation. Conditional writes already make concurrent edits safe across
 * processes; these locks keep one process's own concurrent calls (the SDK's toolRunner runs a
 * turn's tool calls at the same time) from storming the store with doomed conditional writes.
 *
 * Per user: a read/write lock over the whole tree (directory renames and deletes take it
 * exclusively; file edits take it shared), and a mutex per file path.
 */
type Release = () => void;

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  holders = 0;
  async acquire(): Promise<Release> {
    this.holders += 1;
    let release!: Release;
    const next = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    return () => {
      this.holders -= 1;
      release();
    };
  }
}

class ReadWriteLock {
  private readers = 0;
  private writer = false;
  private queue: Array<{ write: boolean; grant: () => void }> = [];
  holders = 0;

  acquire(write: boolean): Promise<Release> {
    this.holders += 1;
    return new Promise<Release>((resolve) => {
      this.queue.push({ write, grant: () => resolve(() => this.release(write)) });
      this.pump();
    });
  }

  private release(write: boolean): void {
    this.holders -= 1;
    if (write) this.writer = false;
    else this.readers -= 1;
    this.pump();
  }

  // FIFO: a waiting writer blocks later readers, so renames are not starved by a stream of edits.
  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const head = this.queue[0]!;
      if (head.write) {
        if (this.readers > 0) return;
        this.queue.shift();
        this.writer = true;
        head.grant();
        return;
      }
      this.queue.shift();
      this.readers += 1;
      head.grant();
    }
  }
}

export class VaultLocks {
  private readonly trees = new Map<string, ReadWriteLock>();
  private readonly files = new Map<string, Mutex>();

  /** Run `fn` holding the user's tree lock shared and the file's mutex. */
  async withFile<T>(uid: string, path: string, fn: () => Promise<T>): Promise<T> {
    const releaseTree = await this.tree(uid).acquire(false);
    const key = `${uid}\u0000${path}`;
    let mutex = this.files.get(key);
    if (!mutex) {
      mutex = new Mutex();
      this.files.set(key, mutex);
    }
    const releaseFile = await mutex.acquire();
    try {
      return await fn();
    } finally {
      releaseFile();
      if (mutex.holders === 0) this.files.delete(key);
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
