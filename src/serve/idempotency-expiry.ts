/**
 * Expired idempotency records go away (src/serve/idempotency.ts): each new record a user's request
 * creates looks at up to SCANNED_PER_CLAIM of that user's records, from a random point of their
 * prefix round to it (one or two LISTs), and deletes up to DROPPED_PER_CLAIM of them that expired.
 * So the work per request is bounded whatever the prefix holds, and the prefix stays near the
 * number of live records: while more than one record in SCANNED_PER_CLAIM has expired, a new record
 * removes more than the one it adds, on average.
 *
 * A record expired when its store time (LastModified: its last write) is older than the TTL plus a
 * minute for the clocks of the instances and the store: never before its key may be taken over.
 * Each delete is conditional on the ETag listed; where the store does not decide that itself
 * (Ceph RGW: `atomicConditionalDelete` false), a HEAD right before it checks it. Only there, a
 * take-over of that very key by a reuse after its 24 hours that lands between the HEAD and the
 * DELETE loses its new record (a retry of the reuse would run it again).
 */
import { randomBytes } from 'node:crypto';
import { PreconditionFailedError, type ObjectInfo, type ObjectStore } from '../store/port.js';

export const SCANNED_PER_CLAIM = 16;
export const DROPPED_PER_CLAIM = 4;
const CLOCK_SKEW_MS = 60_000;

/** Deletes up to DROPPED_PER_CLAIM records under `prefix` whose last write is older than `ttlMs` (plus skew). */
export async function dropExpiredRecords(
  store: ObjectStore,
  prefix: string,
  ttlMs: number,
  now: number,
): Promise<number> {
  const expired = (await sample(store, prefix))
    .filter((o) => now - o.lastModified.getTime() >= ttlMs + CLOCK_SKEW_MS)
    .slice(0, DROPPED_PER_CLAIM);
  let dropped = 0;
  for (const object of expired) if (await dropIfUnchanged(store, object)) dropped += 1;
  return dropped;
}

/** Up to SCANNED_PER_CLAIM keys from a random point, wrapping round to the start of the prefix. */
async function sample(store: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const from = prefix + randomBytes(32).toString('hex');
  const after = await store.list(prefix, { startAfter: from, maxKeys: SCANNED_PER_CLAIM });
  const left = SCANNED_PER_CLAIM - after.objects.length;
  if (left === 0) return after.objects;
  const before = await store.list(prefix, { maxKeys: left });
  return [...after.objects, ...before.objects.filter((o) => o.key <= from)];
}

async function dropIfUnchanged(store: ObjectStore, object: ObjectInfo): Promise<boolean> {
  try {
    if (!store.atomicConditionalDelete && (await store.head(object.key))?.etag !== object.etag) return false;
    await store.delete(object.key, { ifMatch: object.etag });
    return true;
  } catch (error) {
    if (error instanceof PreconditionFailedError) return false; // rewritten since the listing (taken over)
    throw error;
  }
}
