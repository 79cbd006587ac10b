/**
 * Graceful shutdown: once stopping, every new request is answered 503 (a problem, with
 * Connection: close) while the ones already running finish; Fastify's close() then waits for them.
 */
import { ProblemError } from './problems.js';

export class Draining {
  private stopping = false;

  get closing(): boolean {
    return this.stopping;
  }

  start(): void {
    this.stopping = true;
  }

  /** Called first for every request: refuses it once stopping. */
  enter(): void {
    if (this.stopping)
      throw new ProblemError('shutting-down', 'The service is shutting down; retry on another instance.', {
        connection: 'close',
        'retry-after': '1',
      });
  }
}

/** Stops the server on SIGTERM and SIGINT (once), for the CLI; answers a function that removes the handlers. */
export function closeOnSignals(close: () => Promise<void>, onDone: (error?: unknown) => void): () => void {
  let started = false;
  const handler = () => {
    if (started) return;
    started = true;
    close().then(
      () => onDone(),
      (error: unknown) => onDone(error),
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
