/**
 * The walks of a migration: two stores' listings side by side in key order (both list in S3's
 * UTF-8 byte order), so that comparing a whole store with another costs one pass over each and
 * holds one page of each in memory, whatever their size.
 */
import { compareKeys } from '../store/memory.js';
import { listAll, type ObjectInfo, type ObjectStore } from '../store/port.js';
import { readTagsOf } from '../vault/files/capabilities.js';

/** One key of either listing: present at the source, at the destination, or both. */
export interface PairedKey {
  key: string;
  source?: ObjectInfo;
  destination?: ObjectInfo;
}

/** Keys under `prefix` of both stores, in order; `only` keeps one key exactly (a user's key record). */
export async function* pairedListing(
  from: ObjectStore,
  to: ObjectStore,
  prefix: string,
  only?: string,
): AsyncGenerator<PairedKey> {
  const a = listAll(from, prefix);
  const b = listAll(to, prefix);
  let x = await a.next();
  let y = await b.next();
  for (;;) {
    const source = x.done ? undefined : x.value;
    const destination = y.done ? undefined : y.value;
    if (!source && !destination) return;
    const order = !source ? 1 : !destination ? -1 : compareKeys(source.key, destination.key);
    const pair: PairedKey =
      order < 0
        ? { key: source!.key, source: source! }
        : order > 0
          ? { key: destination!.key, destination: destination! }
          : { key: source!.key, source: source!, destination: destination! };
    if (order <= 0) x = await a.next();
    if (order >= 0) y = await b.next();
    if (only === undefined || pair.key === only) yield pair;
  }
}

/** An object as a migration carries it: bytes, metadata and tags (its ETag and time are the store's own). */
export interface Carried {
  body: Uint8Array;
  metadata: Record<string, string>;
  tags: Record<string, string>;
}

/** The object at `key` as carried, or null when it is gone. */
export async function readCarried(store: ObjectStore, key: string): Promise<Carried | null> {
  const object = await store.get(key);
  if (!object) return null;
  return { body: object.body, metadata: object.metadata, tags: await readTagsOf(store, key) };
}

/** Whether two carried objects are the same: bytes, metadata and tags. */
export function sameCarried(a: Carried, b: Carried): boolean {
  return (
    Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength).equals(b.body) &&
    sameRecord(a.metadata, b.metadata) &&
    sameRecord(a.tags, b.tags)
  );
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
