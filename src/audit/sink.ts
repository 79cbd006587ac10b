/**
 * The appenders: where encoded lines (line.ts) go, unchanged. `LineSink` is a SonicBoom on a file
 * descriptor (the audit file, or standard output); `appendLineSync` is the shared mode's append
 * (open, write, close, under the caller's lock).
 */
import { closeSync, fstatSync, fsyncSync, openSync, writeSync } from 'node:fs';
import sonicBoom, { type SonicBoom } from 'sonic-boom';

// sonic-boom is CommonJS (module.exports = the class, which also carries itself as `.SonicBoom`);
// node's ESM loader gives the default import only, so the class is taken from there.
const { SonicBoom: SonicBoomClass } = sonicBoom;

export interface SinkOptions {
  /**
   * true: each line is written with a blocking write(2) before `write` returns. false: lines are
   * gathered until 4 KiB are pending (one write(2) per ~10 records instead of one thread-pool write
   * each) and whatever is pending is flushed every second, so at most about a second of records
   * (or 4 KiB) is at risk in a crash.
   */
  sync: boolean;
  /** fsync(2) after every write. */
  fsync: boolean;
}

const ASYNC_BUFFERING = { minLength: 4096, periodicFlush: 1000 };

/**
 * Buffering sinks still open. A process that exits without closing its writer (a host's normal
 * exit, process.exit) must not lose what is buffered: one 'exit' listener for the process writes
 * every open sink's buffer synchronously (what pino did for its destinations). A sink leaves the set
 * when it ends, so rotations do not pile up listeners or keep old sinks reachable.
 */
const openBufferingSinks = new Set<SonicBoom>();
let exitFlushInstalled = false;

function flushAtExit(boom: SonicBoom): void {
  openBufferingSinks.add(boom);
  if (exitFlushInstalled) return;
  exitFlushInstalled = true;
  process.once('exit', () => {
    for (const open of openBufferingSinks) {
      try {
        open.flushSync();
      } catch {
        // exiting: nothing left to report the failure to; verify shows the missing tail
      }
    }
  });
}

export class LineSink {
  private readonly boom: SonicBoom;

  /**
   * `onError` hears of every write failure; in sync mode it is called before `write` returns (the
   * caller checks its own failure flag right after writing).
   */
  constructor(fd: number, options: SinkOptions, onError: (error: Error) => void) {
    this.boom = new SonicBoomClass({
      fd,
      sync: options.sync,
      fsync: options.fsync,
      ...(options.sync ? {} : ASYNC_BUFFERING),
    });
    this.boom.on('error', (error: unknown) => onError(asError(error)));
    if (!options.sync) flushAtExit(this.boom);
  }

  write(line: string): void {
    this.boom.write(line);
  }

  /** Resolves once every line written so far has reached the descriptor. */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.boom.flush((error?: Error) => (error ? reject(error) : resolve()));
    });
  }

  /** Writes what is pending, then closes the descriptor (standard output stays open). */
  end(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.boom.once('close', () => {
        openBufferingSinks.delete(this.boom);
        resolve();
      });
      this.boom.once('error', reject);
      this.boom.end();
    });
  }
}

/** The audit file as a sink: opened here so it is created synchronously and owner-only. */
export function openFileSink(file: string, options: SinkOptions, onError: (error: Error) => void): LineSink {
  return new LineSink(openSync(file, 'a', 0o600), options, onError);
}

export function stdoutSink(options: Pick<SinkOptions, 'sync'>, onError: (error: Error) => void): LineSink {
  return new LineSink(1, { sync: options.sync, fsync: false }, onError);
}

/**
 * Appends one line to a file that several processes append to (the caller holds the file's lock):
 * the whole line, fsynced if asked. Returns the file as this append left it, so the writer can tell
 * later whether another process wrote since.
 */
export function appendLineSync(file: string, line: string, fsync: boolean): { ino: number; size: number } {
  const bytes = Buffer.from(line, 'utf8');
  const fd = openSync(file, 'a', 0o600);
  try {
    for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
    if (fsync) fsyncSync(fd);
    const after = fstatSync(fd);
    return { ino: after.ino, size: after.size };
  } finally {
    closeSync(fd);
  }
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
