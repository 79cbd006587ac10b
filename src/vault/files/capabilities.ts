/**
 * The optional capabilities of an ObjectStore (src/store/port.ts), each detected in one place with
 * its fallback, the way Go's io/fs detects an optional interface (`fs.ReadFile` uses ReadFileFS when
 * the file system has it, else Open and Read). The vault calls these helpers and never branches on a
 * store's members itself.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { MemvaultError } from '../../errors.js';
import { MARKER_BODY, markerMetadata, reap } from '../../store/fence.js';
import { MAX_STORE_KEY_BYTES } from '../../store/layout.js';
import { PreconditionFailedError, type ObjectStore, type PreparedCreate } from '../../store/port.js';

/** `maxKeyBytes`: the longest key the store accepts; S3's limit for a store that states none. */
export function maxKeyBytesOf(store: ObjectStore): number {
  return store.maxKeyBytes ?? MAX_STORE_KEY_BYTES;
}

/**
 * `atomicConditionalDelete`: delete exactly the version `etag` of `key`. A conditional DELETE where
 * the store decides it atomically; else (src/store/fence.ts) the version is replaced `If-Match` by a
 * reaping marker of its own ETag, then that is deleted. A write that landed first makes the PUT fail
 * (PreconditionFailedError, as a conditional delete would; a missing key is no error); one that
 * comes later meets the reaping marker, which a create waits out (createReplacingAbsent) and an edit
 * cannot match. One PUT instead of the HEAD.
 */
export async function deleteVersion(store: ObjectStore, key: string, etag: string): Promise<void> {
  if (store.atomicConditionalDelete === true) {
    await store.delete(key, { ifMatch: etag });
    return;
  }
  try {
    await reap(
      {
        replaceIfMatch: async (body, ifMatch, metadata) => void (await store.put(key, body, { ifMatch, metadata })),
        deleteUnconditionally: () => store.delete(key),
      },
      etag,
    );
  } catch (error) {
    if (error instanceof PreconditionFailedError && (await store.head(key)) === null) return;
    throw error;
  }
}

/**
 * `deleteExactly`: take exactly the version `ifMatch` of `key` out of use in one step the store
 * enforces (PreconditionFailedError when it changed or is gone). A store that decides a conditional
 * delete itself, with an answer that cannot be lost: the delete is the fence (one durable step), and
 * there is nothing to clean up. Else a fence marker put `If-Match`: it already takes the file out of
 * use, and its clean-up (returned, never rejects) is best effort: a marker left behind is no file to
 * anyone (a create replaces it, the sweeper removes it once idle past the TTL).
 */
export async function fenceVersion(
  store: ObjectStore,
  key: string,
  ifMatch: string,
  reason: 'moved' | 'deleted',
  op: string,
): Promise<{ cleanUp: Promise<void> }> {
  if (store.deleteExactly) {
    await store.deleteExactly(key, ifMatch);
    return { cleanUp: Promise.resolve() };
  }
  const { etag } = await store.put(key, MARKER_BODY, { ifMatch, metadata: markerMetadata(reason, op) });
  return { cleanUp: deleteVersion(store, key, etag).catch(() => undefined) };
}

/**
 * `prepareCreate`: a create-only PUT's first part, prepared where the store offers it (the file
 * store writes and fsyncs its temp file now), else undefined: the caller then publishes with a plain
 * create-only PUT. A failed preparation is awaited by whoever publishes or drops it.
 */
export function prepareCreateOf(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  options: { metadata?: Record<string, string>; tags?: Record<string, string> },
): Promise<PreparedCreate> | undefined {
  const prepared = store.prepareCreate?.(key, body, options);
  prepared?.catch(() => undefined);
  return prepared;
}

/** Drop a prepared create that will not be published (best effort: a crash leaves a temp file a listing removes). */
export async function dropPrepared(prepared: Promise<PreparedCreate> | undefined): Promise<void> {
  await prepared
    ?.then(
      (p) => p.discard(),
      () => undefined,
    )
    .catch(() => undefined);
}

/**
 * `readTags`: an object's tags, where the store can tell them (every adapter of memvault's own); a
 * store that cannot (a host's adapter without it) is CONFIG, so that nothing carried between stores
 * loses its tags unseen (an S3 lifecycle rule expires by them).
 */
export async function readTagsOf(store: ObjectStore, key: string): Promise<Record<string, string>> {
  if (!store.readTags)
    throw new MemvaultError('CONFIG', `memvault: the ${store.kind} store cannot report its objects' tags.`);
  return (await store.readTags(key)) ?? {};
}

/**
 * `transaction`: where the store runs a whole operation as one transaction, the directory operations
 * that use it (src/vault/tree/transactional.ts) and a write's or a fence's steps (StoreUserFiles);
 * else undefined, and the journalled protocols run.
 */
export function transactionOf(store: ObjectStore): (<T>(fn: () => Promise<T>) => Promise<T>) | undefined {
  if (!store.transaction) return undefined;
  return <T>(fn: () => Promise<T>): Promise<T> => store.transaction!(() => insideTransaction.run(true, fn));
}

/** Set while the vault runs steps as one store transaction (transactionOf). */
const insideTransaction = new AsyncLocalStorage<true>();

/** Whether the current async context runs inside a store transaction the vault opened. */
export function inStoreTransaction(): boolean {
  return insideTransaction.getStore() === true;
}

/**
 * Runs a file's write or fence (the object, its version or tombstone, the name check and a
 * take-back) as one transaction where the store has them: one commit, one fsync, seen whole or not
 * at all. A step that throws rolls every step back (a failed command changes nothing), except an
 * error whose steps repair the file (`keep`: a put-back found by a version's write puts the newest
 * kept version back, which must stay): those commit, then the error is thrown. Elsewhere `fn` runs
 * as it is.
 */
export function inOneTransaction<T>(
  transaction: ReturnType<typeof transactionOf>,
  fn: () => Promise<T>,
  keep: (error: unknown) => boolean,
): Promise<T> {
  if (!transaction) return fn();
  return transaction(async () => {
    try {
      return { value: await fn() };
    } catch (error) {
      if (keep(error)) return { error };
      throw error;
    }
  }).then((outcome) => {
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  });
}
