/**
 * Expired idempotency records go away (src/serve/idempotency.ts): each new record a user's request
 * creates looks at up to SCANNED_PER_CLAIM of that user's records (all of them, or as many from a
 * random point of their prefix: one or two LISTs) and deletes up to DROPPED_PER_CLAIM that expired.
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

/**
 * Deletes up to DROPPED_PER_CLAIM records under `prefix` whose last write is older than `ttlMs`
 * (plus skew). `point`: where in a prefix of more than one page the look starts (random; a test's own).
 */
export async function dropExpiredRecords(
  store: ObjectStore,
  prefix: string,
  ttlMs: number,
  now: number,
  point: () => string = () => randomBytes(32).toString('hex'),
): Promise<number> {
  const expired = (await sample(store, prefix, point))
    .filter((o) => now - o.lastModified.getTime() >= ttlMs + CLOCK_SKEW_MS)
    .slice(0, DROPPED_PER_CLAIM);
  let dropped = 0;
  for (const object of expired) if (await dropIfUnchanged(store, object)) dropped += 1;
  return dropped;
}

/**
 * The whole prefix when it fits one page of SCANNED_PER_CLAIM (one LIST); else that many keys from
 * a random point, wrapping round to the first page (two LISTs), so that every record has its turn.
 */
async function sample(store: ObjectStore, prefix: string, point: () => string): Promise<ObjectInfo[]> {
  const first = await store.list(prefix, { maxKeys: SCANNED_PER_CLAIM });
  if (!first.continuationToken) return first.objects;
  const from = prefix + point();
  const after = await store.list(prefix, { startAfter: from, maxKeys: SCANNED_PER_CLAIM });
  const wrapped = first.objects.filter((o) => o.key <= from);
  return [...after.objects, ...wrapped].slice(0, SCANNED_PER_CLAIM);
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
