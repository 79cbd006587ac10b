import { AsyncLocalStorage } from 'node:async_hooks';
import { storeRequestCounted } from '../telemetry/store.js';

/**
 * Request accounting. Each command runs inside `withRequestCounter(counter, fn)`; every adapter
 * reports each request it makes to its backend with `countRequest(type)` (the S3 adapter does it
 * from a middleware on the client's stack, so SDK retries count too). Async-local storage ties a
 * request to its command even when many commands share one client concurrently.
 *
 * Types: GET, HEAD, PUT, LIST, COPY, DELETE, DELETE_MANY (S3 names: GetObject, HeadObject,
 * PutObject, ListObjectsV2, CopyObject, DeleteObject, DeleteObjects).
 */
export type RequestCounter = Record<string, number>;

const scope = new AsyncLocalStorage<RequestCounter[]>();

export function withRequestCounter<T>(counter: RequestCounter, fn: () => Promise<T>): Promise<T> {
  // Nested scopes (a command inside a CLI run) count into every enclosing counter.
  const outer = scope.getStore() ?? [];
  return scope.run([...outer, counter], fn);
}

export function countRequest(type: string, n = 1): void {
  storeRequestCounted(type, n);
  const counters = scope.getStore();
  if (!counters) return;
  for (const counter of counters) counter[type] = (counter[type] ?? 0) + n;
}

/** Per-command counters that every layer adds to; the audit record and metrics read them. */
export interface CommandStats {
  /** Plaintext bytes the user's files returned (vault/store-user-files.ts). */
  bytesRead: number;
  /** Plaintext bytes written to the user's files. */
  bytesWritten: number;
  /** Store requests by type (GET, PUT, HEAD, LIST, COPY, DELETE, ...). */
  requests: RequestCounter;
}

const commandScope = new AsyncLocalStorage<CommandStats>();

/**
 * Runs one command with its stats: requests made inside count into `stats.requests` (and every
 * enclosing counter), plaintext bytes into the innermost command's byte counts. Like the request
 * counts, the byte counts follow the command through async-local storage, so the layers that see
 * the bytes (the vault) need no handle on the pipeline's context.
 */
export function withCommandStats<T>(stats: CommandStats, fn: () => Promise<T>): Promise<T> {
  return commandScope.run(stats, () => withRequestCounter(stats.requests, fn));
}

export function countBytesRead(n: number): void {
  const stats = commandScope.getStore();
  if (stats) stats.bytesRead += n;
}

export function countBytesWritten(n: number): void {
  const stats = commandScope.getStore();
  if (stats) stats.bytesWritten += n;
}
