import type { CopyOptions, ListOptions, ListPage, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../src/store/port.js';

/**
 * Wraps a store to inject faults and delays: `failAt(n)` makes the n-th request from now on throw
 * (a crash at that step: the request has no effect), `delay` interleaves concurrent callers.
 */
export class FaultyStore implements ObjectStore {
  calls = 0;
  private failOn = -1;
  constructor(
    private readonly inner: ObjectStore,
    private readonly delayMs = 0,
  ) {}

  get kind(): string {
    return this.inner.kind;
  }

  /** True once the armed fault has fired. */
  fired = false;
  /** The request the armed fault hit (its kind, and whether it was conditional), once it fired. */
  firedOn: { op: 'get' | 'head' | 'put' | 'list' | 'copy' | 'delete'; conditional: boolean } | null = null;

  failAt(n: number): void {
    this.failOn = this.calls + n;
    this.fired = false;
    this.firedOn = null;
  }

  disarm(): void {
    this.failOn = -1;
  }

  private async step(op: NonNullable<FaultyStore['firedOn']>['op'], conditional = false): Promise<void> {
    this.calls += 1;
    const call = this.calls;
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.delayMs));
    if (call === this.failOn) {
      this.fired = true;
      this.firedOn = { op, conditional };
      throw new Error('injected crash');
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    await this.step('get');
    return this.inner.get(key);
  }
  async head(key: string): Promise<ObjectInfo | null> {
    await this.step('head');
    return this.inner.head(key);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    await this.step('put', options?.ifMatch !== undefined || options?.ifNoneMatch !== undefined);
    return this.inner.put(key, body, options);
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.step('list');
    return this.inner.list(prefix, options);
  }
  async copy(from: string, to: string, options?: CopyOptions): Promise<{ etag: string }> {
    await this.step('copy');
    return this.inner.copy(from, to, options);
  }
  async delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    await this.step('delete', options?.ifMatch !== undefined);
    return this.inner.delete(key, options);
  }
  async deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // A crash during a batch delete may leave any subset deleted: delete one by one.
    const failed: string[] = [];
    for (const key of keys) {
      await this.step('delete');
      await this.inner.delete(key);
    }
    return { failed };
  }
  async close(): Promise<void> {}
}
