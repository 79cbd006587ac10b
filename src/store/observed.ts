import { observeStoreOperation } from '../telemetry/store.js';
import type { CopyOptions, ListOptions, ListPage, ObjectInfo, ObjectStore, PutOptions, StoredObject } from './port.js';

/**
 * An ObjectStore that reports each operation (span `memvault.store.<operation>`, duration, requests
 * by status, lost conditional writes) and otherwise passes every call through unchanged. Keys,
 * bodies and metadata are never recorded.
 */
export class ObservedStore implements ObjectStore {
  /** Offered exactly when the inner store offers it (callers choose their fence by its presence). */
  readonly deleteExactly?: (key: string, ifMatch: string) => Promise<void>;
  /** Likewise; the commit is observed as the PUT it is. */
  readonly prepareCreate?: ObjectStore['prepareCreate'];
  /** Likewise (the vault runs a command's writes in one); the requests inside it are observed one by one. */
  readonly transaction?: ObjectStore['transaction'];
  /** Likewise (a quota's usage without a listing); observed as the LIST it is counted as. */
  readonly summarize?: ObjectStore['summarize'];

  constructor(private readonly inner: ObjectStore) {
    if (inner.prepareCreate)
      this.prepareCreate = async (key, body, options) => {
        const prepared = await inner.prepareCreate!(key, body, options);
        return {
          commit: () => observeStoreOperation(inner.kind, 'put', () => prepared.commit()),
          discard: () => prepared.discard(),
        };
      };
    if (inner.summarize)
      this.summarize = (prefix, options) =>
        observeStoreOperation(inner.kind, 'list', () => inner.summarize!(prefix, options));
    if (inner.transaction) this.transaction = <T>(fn: () => Promise<T>) => inner.transaction!(fn);
    if (inner.deleteExactly)
      this.deleteExactly = (key, ifMatch) =>
        observeStoreOperation(inner.kind, 'delete', () => inner.deleteExactly!(key, ifMatch));
  }

  get kind(): string {
    return this.inner.kind;
  }

  get atomicConditionalDelete(): boolean | undefined {
    return this.inner.atomicConditionalDelete;
  }
  get maxKeyBytes(): number | undefined {
    return this.inner.maxKeyBytes;
  }

  get(key: string): Promise<StoredObject | null> {
    return observeStoreOperation(
      this.inner.kind,
      'get',
      () => this.inner.get(key),
      (r) => (r === null ? 'not_found' : 'ok'),
    );
  }

  head(key: string): Promise<ObjectInfo | null> {
    return observeStoreOperation(
      this.inner.kind,
      'head',
      () => this.inner.head(key),
      (r) => (r === null ? 'not_found' : 'ok'),
    );
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    return observeStoreOperation(this.inner.kind, 'put', () => this.inner.put(key, body, options));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return observeStoreOperation(this.inner.kind, 'list', () => this.inner.list(prefix, options));
  }

  copy(sourceKey: string, destinationKey: string, options?: CopyOptions): Promise<{ etag: string }> {
    return observeStoreOperation(this.inner.kind, 'copy', () => this.inner.copy(sourceKey, destinationKey, options));
  }

  delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    return observeStoreOperation(this.inner.kind, 'delete', () => this.inner.delete(key, options));
  }

  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    return observeStoreOperation(this.inner.kind, 'delete_many', () => this.inner.deleteMany(keys));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export function observeStore(store: ObjectStore): ObjectStore {
  return store instanceof ObservedStore ? store : new ObservedStore(store);
}
