/**
 * Store telemetry: a span and a duration per store operation, and the backend requests it made.
 *
 * Requests are counted where the adapters already count them (store/accounting.ts calls
 * `storeRequestCounted` for every request, SDK retries included); an operation observed here
 * collects its own requests in an async-local tally and reports them with the operation's status
 * when it settles. Requests made outside an observed operation are reported with status 'unknown'.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
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
export async function withRequestTally<T>(
  work: () => Promise<T>,
  statusOf: (outcome: { ok: true; result: T } | { ok: false; error: unknown }) => string,
): Promise<T> {
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
  for (const [type, n] of tally)
    m.storeRequests.add(n, { [ATTRS.storeRequest]: boundedRequestType(type), [ATTRS.storeStatus]: status });
}

export function storeStatusOfError(error: unknown): StoreStatus {
  const code = codeOfError(error);
  if (code === 'PRECONDITION_FAILED') return 'precondition_failed';
  if (code === 'STORE_UNAVAILABLE') return 'unavailable';
  return 'error';
}

/**
 * Runs one store operation observed: a span `memvault.store.<operation>`, its duration, the requests
 * it made by status and lost conditional writes. `storeKind` is the adapter's kind (bounded here).
 * With nothing registered the call goes straight through. The ObjectStore decorator that calls this
 * is store/observed.ts (telemetry is a leaf: it knows no store types).
 */
export function observeStoreOperation<T>(
  storeKind: string,
  operation: StoreOperation,
  work: () => Promise<T>,
  statusOf: (result: T) => StoreStatus = () => 'ok',
): Promise<T> {
  const m = instruments();
  if (!m && !activeTracer()) return work();
  return observed(m, boundedStoreKind(storeKind), operation, work, statusOf);
}

const STORE_KIND = /^[a-z0-9_-]{1,16}$/;

function boundedStoreKind(kind: string): string {
  return STORE_KIND.test(kind) ? kind : 'other';
}

async function observed<T>(
  m: Instruments | undefined,
  kindAttribute: string,
  operation: StoreOperation,
  work: () => Promise<T>,
  statusOf: (result: T) => StoreStatus,
): Promise<T> {
  const tally: Tally | undefined = m ? new Map() : undefined;
  const started = performance.now();
  let status = 'error' as StoreStatus;
  try {
    return await inSpan(
      `${SPANS.storePrefix}${operation}`,
      { [ATTRS.storeOperation]: operation, [ATTRS.storeKind]: kindAttribute },
      async (span) => {
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
      },
    );
  } finally {
    if (m && tally) {
      reportRequests(m, tally, status);
      m.storeDuration.record(secondsSince(started), { [ATTRS.storeOperation]: operation, [ATTRS.storeStatus]: status });
      if (status === 'precondition_failed') m.writeConflicts.add(1, { [ATTRS.storeOperation]: operation });
    }
  }
}
