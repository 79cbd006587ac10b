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
