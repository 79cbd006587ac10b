/**
 * Store telemetry: a span and a duration per store operation, and the backend requests it made.
 *
 * Requests are counted where the adapters already count them (store/accounting.ts calls
 * `storeRequestCounted` for every request, SDK retries included); an operation observed here
 * collects its own requests in an async-local tally and reports them with the operation's status
 * when it settles. Requests made outside an observed operation are reported with status 'unknown'.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CopyOptions, ListOptions, ListPage, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../store/port.js';
import { instruments, secondsSince, type Instruments } from './metrics.js';
import { ATTRS, boundedRequestType, SPANS, type StoreOperation, type StoreStatus } from './names.js';
import { activeTracer, codeOfError, inSpan } from './tracing.js';

type Tally = Map<string, number>;
const tallies = new AsyncLocalStorage<Tally>();

/** Called by store/accounting.ts for every request an adapter makes to its backend. */
export function storeRequestCounted(type: string, n: number): void {
  const m = instruments();
  if (!m) return;
  const tally = tallies.getStore();
  if (tally) tally.set(type, (tally.get(type) ?? 0) + n);
  else m.storeRequests.add(n, { [ATTRS.storeRequest]: boundedRequestType(type), [ATTRS.storeStatus]: 'unknown' });
}

/**
 * Runs `work` with its own request tally (metrics on only) and reports the requests it made with
 * the status `statusOf` gives its outcome.
 */
export async function withRequestTally<T>(work: () => Promise<T>, statusOf: (outcome: { ok: true; result: T } | { ok: false; error: unknown }) => string): Promise<T> {
  const m = instruments();
  if (!m) return work();
  const tally: Tally = new Map();
  let status = 'error';
  try {
    const result = await tallies.run(tally, work);
    status = statusOf({ ok: true, result });
    return result;
  } catch (error) {
    status = statusOf({ ok: false, error });
    throw error;
  } finally {
    reportRequests(m, tally, status);
  }
}

function reportRequests(m: Instruments, tally: Tally, status: string): void {
  for (const [type, n] of tally) m.storeRequests.add(n, { [ATTRS.storeRequest]: boundedRequestType(type), [ATTRS.storeStatus]: status });
}

export function storeStatusOfError(error: unknown): StoreStatus {
  const code = codeOfError(error);
  if (code === 'PRECONDITION_FAILED') return 'precondition_failed';
  if (code === 'STORE_UNAVAILABLE') return 'unavailable';
  return 'error';
}

const STORE_KIND = /^[a-z0-9_-]{1,16}$/;

/**
 * An ObjectStore that reports each operation (span `memvault.store.<operation>`, duration, requests
 * by status, lost conditional writes) and otherwise passes every call through unchanged. Keys,
 * bodies and metadata are never recorded.
 */
export class ObservedStore implements ObjectStore {
  private readonly kindAttribute: string;

  constructor(private readonly inner: ObjectStore) {
    this.kindAttribute = STORE_KIND.test(inner.kind) ? inner.kind : 'other';
  }

  get kind(): string {
    return this.inner.kind;
  }

  get maxKeyBytes(): number | undefined {
    return this.inner.maxKeyBytes;
  }

  get(key: string): Promise<StoredObject | null> {
    return this.observe('get', () => this.inner.get(key), (r) => (r === null ? 'not_found' : 'ok'));
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.observe('head', () => this.inner.head(key), (r) => (r === null ? 'not_found' : 'ok'));
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    return this.observe('put', () => this.inner.put(key, body, options));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.observe('list', () => this.inner.list(prefix, options));
  }

  copy(sourceKey: string, destinationKey: string, options?: CopyOptions): Promise<{ etag: string }> {
    return this.observe('copy', () => this.inner.copy(sourceKey, destinationKey, options));
  }

  delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    return this.observe('delete', () => this.inner.delete(key, options));
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    return this.observe('delete_many', () => this.inner.deleteMany(keys));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private observe<T>(operation: StoreOperation, work: () => Promise<T>, statusOf: (result: T) => StoreStatus = () => 'ok'): Promise<T> {
    const m = instruments();
    // Nothing registered: the call goes straight through.
    if (!m && !activeTracer()) return work();
    return this.observed(m, operation, work, statusOf);
  }

  private async observed<T>(m: Instruments | undefined, operation: StoreOperation, work: () => Promise<T>, statusOf: (result: T) => StoreStatus): Promise<T> {
    const tally: Tally | undefined = m ? new Map() : undefined;
    const started = performance.now();
    let status = 'error' as StoreStatus;
    try {
      return await inSpan(`${SPANS.storePrefix}${operation}`, { [ATTRS.storeOperation]: operation, [ATTRS.storeKind]: this.kindAttribute }, async (span) => {
        try {
          const result = await (tally ? tallies.run(tally, work) : work());
          status = statusOf(result);
          return result;
        } catch (error) {
          status = storeStatusOfError(error);
          throw error;
        } finally {
          span.setAttribute(ATTRS.storeStatus, status);
        }
      });
    } finally {
      if (m && tally) {
        reportRequests(m, tally, status);
        m.storeDuration.record(secondsSince(started), { [ATTRS.storeOperation]: operation, [ATTRS.storeStatus]: status });
        if (status === 'precondition_failed') m.writeConflicts.add(1, { [ATTRS.storeOperation]: operation });
      }
    }
  }
}

export function observeStore(store: ObjectStore): ObjectStore {
  return store instanceof ObservedStore ? store : new ObservedStore(store);
}
