/**
 * WAL checkpoints off the event loop. SQLite's own (wal_autocheckpoint) runs inside the COMMIT that
 * takes the WAL past 1,000 pages: the copy of those pages into the database file and two fsyncs, a
 * few milliseconds on the one thread every hundred or so commands (measured by bench/statements.ts).
 * Here a worker thread with its own connection to the file runs a PASSIVE checkpoint after every
 * CHECKPOINT_EVERY commits: it copies what no reader still needs and never takes the write lock, so
 * commands go on while it runs, on the other core.
 *
 * The connection's own checkpoint stays as the safety net, at SAFETY_NET_PAGES (a worker that lags
 * or a single huge transaction still bounds the WAL), and goes back to SQLite's default when the
 * worker fails: a checkpointer that cannot work never lets the WAL grow without end.
 */
import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';

/** Commits between two checkpoints (a 4 KiB edit writes six to ten pages: about SQLite's 1,000 pages). */
const CHECKPOINT_EVERY = 100;
/** The connection's own checkpoint while the worker runs: reached only when the worker lags far behind. */
const SAFETY_NET_PAGES = 10_000;
const SQLITE_DEFAULT_PAGES = 1_000;
/** Copies what no reader still needs; never waits for a lock, never takes the write lock. */
const CHECKPOINT_SQL = 'PRAGMA wal_checkpoint(PASSIVE)';

// CommonJS, evaluated in the worker (no file to resolve from sources or a build). Warnings are the
// main thread's business: node:sqlite's ExperimentalWarning (Node 22) is printed once, there.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
process.emitWarning = () => {};
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = ' + workerData.busyTimeoutMs);
const checkpoint = db.prepare(workerData.sql);
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    checkpoint.get();
    parentPort.postMessage('done');
  } catch (e) {
    // SQLITE_BUSY or SQLITE_LOCKED: another connection (another process's worker) checkpoints now.
    const code = typeof e?.errcode === 'number' ? e.errcode & 0xff : 0;
    parentPort.postMessage(code === 5 || code === 6 ? 'done' : 'failed');
  }
});
`;

export class Checkpointer {
  private worker: Worker | undefined;
  private exited: Promise<void> | undefined;
  private commits = 0;
  /** The checkpoint under way: resolves when the worker has answered (or failed). */
  private running: Promise<void> | undefined;
  private answered: (() => void) | undefined;
  private failed = false;

  constructor(
    private readonly db: DatabaseSync,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    /** Tests only: other code for the worker, or another statement in place of the checkpoint. */
    private readonly test: { source?: string; sql?: string } = {},
  ) {}

  /** Whether the connection checkpoints itself again (the worker failed). */
  get fellBack(): boolean {
    return this.failed;
  }

  /** Resolves when no checkpoint is under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Counts a commit; every CHECKPOINT_EVERY of them, asks the worker for a checkpoint unless one runs. */
  committed(): void {
    if (this.failed || ++this.commits < CHECKPOINT_EVERY || this.running) return;
    this.commits = 0;
    try {
      const worker = this.start();
      this.running = new Promise((resolve) => (this.answered = resolve));
      worker.postMessage('checkpoint');
    } catch {
      this.fail();
    }
  }

  /** Stops the worker, its connection closed first (so that the last connection, the caller's, checkpoints at close). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      worker.ref(); // until it has closed its connection: the caller awaits that
      worker.postMessage('close');
    }
    await this.exited; // a failed worker's too: terminated, it may still be stopping
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.test.source ?? WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, busyTimeoutMs: this.busyTimeoutMs, sql: this.test.sql ?? CHECKPOINT_SQL },
    });
    worker.unref(); // never what keeps a process alive
    worker.on('message', (message) => {
      if (message !== 'done') this.fail();
      this.answer();
    });
    worker.on('error', () => {
      this.fail();
      this.answer();
    });
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        if (this.worker === worker) {
          this.fail(); // it stopped without being asked
          this.answer();
        }
        resolve();
      }),
    );
    this.db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    this.worker = worker;
    return worker;
  }

  /** The worker cannot checkpoint: the connection checkpoints itself again, as SQLite does by default. */
  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    try {
      this.db.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
    } catch {
      // the connection is closing
    }
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate().catch(() => undefined);
  }

  private answer(): void {
    this.running = undefined;
    this.answered?.();
  }
}
