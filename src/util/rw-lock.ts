/**
 * In-process locks: the one read/write lock and the one mutex. Both are FIFO: a waiting writer
 * blocks later readers, so exclusive work (a directory rename, a usage refresh) is not starved by a
 * stream of shared work.
 */
export type Release = () => void;

export class ReadWriteLock {
  private readers = 0;
  private writer = false;
  private readonly queue: Array<{ exclusive: boolean; grant: () => void }> = [];
  /** Callers holding or waiting for the lock. */
  holders = 0;

  /** Nobody holds or waits for the lock (it may be dropped from a map of locks). */
  get idle(): boolean {
    return this.holders === 0;
  }

  acquire(exclusive: boolean): Promise<Release> {
    this.holders += 1;
    return new Promise<Release>((resolve) => {
      this.queue.push({ exclusive, grant: () => resolve(once(() => this.release(exclusive))) });
      this.pump();
    });
  }

  private release(exclusive: boolean): void {
    this.holders -= 1;
    if (exclusive) this.writer = false;
    else this.readers -= 1;
    this.pump();
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const head = this.queue[0]!;
      if (head.exclusive && this.readers > 0) return;
      this.queue.shift();
      if (head.exclusive) this.writer = true;
      else this.readers += 1;
      head.grant();
      if (head.exclusive) return;
    }
  }
}

/** A mutex: `acquire` resolves once every earlier holder released. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** Callers holding or waiting for the mutex. */
  holders = 0;

  async acquire(): Promise<Release> {
    this.holders += 1;
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    await previous;
    return once(() => {
      this.holders -= 1;
      release();
    });
  }
}

/** A mutex per key, dropped when nobody holds or waits for it (the map stays as small as the work). */
export class KeyedMutex {
  private readonly mutexes = new Map<string, Mutex>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let mutex = this.mutexes.get(key);
    if (!mutex) {
      mutex = new Mutex();
      this.mutexes.set(key, mutex);
    }
    const release = await mutex.acquire();
    try {
      return await fn();
    } finally {
      release();
      if (mutex.holders === 0) this.mutexes.delete(key);
    }
  }

  /** Keys with a holder or a waiter (tests, diagnostics). */
  get size(): number {
    return this.mutexes.size;
  }
}

/** A release that may be called twice without releasing someone else's hold. */
function once(release: () => void): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release();
  };
}
