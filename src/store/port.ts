/**
 * The object-store port. Every adapter (memory, file, s3) implements exactly this, and the contract
 * suite in test/store/contract.ts holds each of them to the same behaviour.
 *
 * Semantics are S3's: flat keys, strong read-after-write consistency, ETags as opaque version tokens,
 * conditional writes (`ifMatch`, `ifNoneMatch: '*'`) that fail with `PreconditionFailedError`.
 * Keys are at most 1,024 bytes of UTF-8 and never start with '/'.
 */
export interface ObjectInfo {
  key: string;
  /** Stored size in bytes (of the object body as stored, i.e. ciphertext when encrypted). */
  size: number;
  /** Opaque version token, without quotes. */
  etag: string;
  lastModified: Date;
}

export interface StoredObject extends ObjectInfo {
  body: Uint8Array;
  metadata: Record<string, string>;
}

export interface PutOptions {
  /** Write only if the current object has this ETag (optimistic concurrency). */
  ifMatch?: string;
  /** '*' = write only if no object exists at the key (create-once). */
  ifNoneMatch?: '*';
  metadata?: Record<string, string>;
  tags?: Record<string, string>;
}

export interface CopyOptions {
  /** '*' = copy only if nothing exists at the destination. */
  ifNoneMatch?: '*';
  /** Copy only if the source still has this ETag. */
  ifSourceMatch?: string;
  /** Replace the metadata instead of copying it (S3 MetadataDirective REPLACE). */
  metadata?: Record<string, string>;
}

export interface ListPage {
  objects: ObjectInfo[];
  /** Present when more keys follow; pass it back as `continuationToken`. */
  continuationToken?: string;
}

export interface ListOptions {
  continuationToken?: string;
  /** Page size; adapters cap it at 1,000 (S3's maximum). */
  maxKeys?: number;
  /** List keys strictly after this one (S3 StartAfter). */
  startAfter?: string;
}

/** What `ObjectStore.summarize` counts of the objects under a prefix. */
export interface SummaryOptions {
  /** Only objects last modified after this instant (later than it, not at it). */
  modifiedAfter?: Date;
  /** Leave out objects of these sizes (markers whose size tells them apart). */
  exceptSizes?: readonly number[];
  /** Taken off each object's size in `bytes` (a codec's seal overhead: `bytes` is then plaintext). */
  overhead?: number;
  /** The least an object counts in `bytes`, after the overhead is taken off (default 0). */
  floor?: number;
}

export interface ObjectSummary {
  objects: number;
  bytes: number;
}

export interface ObjectStore {
  /** A short name for logs and errors: 'memory', 'file', 's3'. Never a host path or credentials. */
  readonly kind: string;
  /** Longest key (UTF-8 bytes) the store accepts, when lower than S3's 1,024 (e.g. an S3 prefix takes its share). */
  readonly maxKeyBytes?: number;
  get(key: string): Promise<StoredObject | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Returns the new ETag. Throws PreconditionFailedError when a condition fails. */
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }>;
  /** Keys in lexicographic (UTF-8 byte) order, starting with `prefix`. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  copy(sourceKey: string, destinationKey: string, options?: CopyOptions): Promise<{ etag: string }>;
  /**
   * True when the store itself decides `delete(key, { ifMatch })` atomically, so a write landing
   * just before the delete makes it fail (the file and memory stores; S3 in 'native' mode, AWS).
   * Absent or false: the condition is checked first or ignored (Ceph RGW 16), so a write can land
   * between the check and the DELETE and be deleted with it; callers then never rest a decision on
   * a DELETE (a fence marker is cleared in two phases: src/store/fence.ts).
   */
  readonly atomicConditionalDelete?: boolean;
  /** Deleting a missing key is not an error (S3 semantics). With ifMatch, deletes only that version. */
  delete(key: string, options?: { ifMatch?: string }): Promise<void>;
  /**
   * Delete `key` only while it holds the version `ifMatch`, decided by the store in one step, and
   * fail with PreconditionFailedError when it holds another version or nothing (as a PUT `If-Match`
   * does), so the caller knows that this call, and no one else, took that version away. Offered
   * only where that answer is final: the store decides it itself and never retries a request whose
   * answer was lost (the file and memory stores). There a file is fenced by this one durable step
   * instead of a marker's PUT and its clean-up (src/vault/store-user-files.ts, `fence`). S3 does not
   * offer it: RGW 16 ignores DELETE conditions, and on AWS an SDK retry of a DELETE that landed meets
   * no object, which would read as "someone else took it" (a rename would then take its copy back).
   */
  deleteExactly?(key: string, ifMatch: string): Promise<void>;
  /**
   * A create-only PUT (`If-None-Match: *`) in two steps, for a write that must not land before
   * another one does but whose bytes are known already (a file's version, which follows the file's
   * own write, and a tombstone, which follows the file's fence: src/vault/store-user-files.ts). `prepareCreate` does the part that publishes nothing
   * (the file store: the object's temp file, written and fsync'd), beside the write it must follow;
   * `commit` then publishes it as `put` with `ifNoneMatch: '*'` would (PreconditionFailedError when
   * the key is taken; counted as that PUT), `discard` drops it. One neither committed nor discarded
   * (a crash) leaves at most a temp file, which a later listing removes. Offered only where a PUT has
   * such a part worth moving (not S3, not the memory store).
   */
  prepareCreate?(
    key: string,
    body: Uint8Array,
    options?: { metadata?: Record<string, string>; tags?: Record<string, string> },
  ): Promise<PreparedCreate>;
  /**
   * The tags stored with an object (undefined when there is none), for a migration that carries
   * objects between stores as they are (src/lifecycle/migrate.ts). Counted as a HEAD where it is a
   * request (S3 GetObjectTagging).
   */
  readTags?(key: string): Promise<Record<string, string> | undefined>;
  /**
   * Runs `fn` as one transaction: every request `fn` makes (in its async context) lands together
   * when it resolves, or none does (it throws, the process dies), and no other reader or writer sees
   * a part of it. Offered only where the store guarantees that (the SQLite store); the vault then
   * runs a directory rename or delete in one (src/vault/tree/transactional.ts). Nested calls join.
   */
  transaction?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * How many objects lie under `prefix` and what they hold, as a listing of them would count (the
   * options leave some out), summed by the store itself: no row per object reaches the caller. A
   * quota's usage this way costs a fraction of a listing (src/vault/files/objects.ts, `summedUsage`).
   * Offered only where the store sums in place (the SQLite store); callers of other stores list.
   * Counted as one LIST.
   */
  summarize?(prefix: string, options?: SummaryOptions): Promise<ObjectSummary>;
  /** Batch delete (S3 DeleteObjects, up to 1,000 keys); returns the keys that failed. */
  deleteMany(keys: string[]): Promise<{ failed: string[] }>;
  close(): Promise<void>;
}

/** A create-only PUT prepared by `ObjectStore.prepareCreate`: published by `commit`, or dropped. */
export interface PreparedCreate {
  commit(): Promise<{ etag: string }>;
  discard(): Promise<void>;
}

/** A conditional write or copy lost: someone else wrote first. Callers re-read and retry. */
export class PreconditionFailedError extends Error {
  readonly code = 'PRECONDITION_FAILED' as const;
  constructor(key: string) {
    // Keys may be derived from user paths; keep them out of the message (it may reach logs).
    super('precondition failed');
    this.name = 'PreconditionFailedError';
    void key;
  }
}

/** Iterate every object under a prefix, page by page (one LIST request per 1,000 keys). */
export async function* listAll(
  store: ObjectStore,
  prefix: string,
  pageSize = 1000,
  startAfter?: string,
): AsyncGenerator<ObjectInfo> {
  for await (const objects of listPages(store, prefix, pageSize, startAfter)) yield* objects;
}

/** listAll a page at a time: for a caller that handles many objects, one await per LIST, not per object. */
export async function* listPages(
  store: ObjectStore,
  prefix: string,
  pageSize = 1000,
  startAfter?: string,
): AsyncGenerator<ObjectInfo[]> {
  let continuationToken: string | undefined;
  do {
    const from = continuationToken ? { continuationToken } : startAfter !== undefined ? { startAfter } : {};
    const page = await store.list(prefix, { maxKeys: pageSize, ...from });
    yield page.objects;
    continuationToken = page.continuationToken;
  } while (continuationToken);
}
