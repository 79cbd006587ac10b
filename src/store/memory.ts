import { randomBytes } from 'node:crypto';
import { countRequest } from './accounting.js';
import {
  PreconditionFailedError,
  type CopyOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './port.js';

interface Entry {
  body: Uint8Array;
  etag: string;
  lastModified: Date;
  metadata: Record<string, string>;
  tags: Record<string, string>;
}

/**
 * Compare keys as S3 does: by their UTF-8 bytes. That is JS string order up to the first code unit
 * that differs, unless one of the two is a surrogate (an astral character, whose UTF-8 sorts after
 * every BMP character); only then are the UTF-8 bytes compared.
 */
export function compareKeys(a: string, b: string): number {
  const common = Math.min(a.length, b.length);
  let i = 0;
  while (i < common && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === common) return a.length - b.length;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x < 0xd800 && y < 0xd800) return x - y;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * In-process object store for tests and benchmarks. Same semantics as the others (the contract
 * suite checks it); every call copies bodies so that callers cannot alias stored bytes.
 * `now` is injectable so that expiry tests can control the clock.
 */
export class MemoryStore implements ObjectStore {
  readonly kind = 'memory';
  readonly atomicConditionalDelete = true;
  private readonly objects = new Map<string, Entry>();
  /**
   * Every key, in S3's order, kept sorted as keys come and go (a binary search and a splice), so
   * that a LIST costs a search and its page, not a sort of the whole store: this store stands in for
   * a server, and a benchmark's CPU per command must not be its sorting (a user's history listing
   * runs every few writes). In place, so that views of the store (Object.create) share it.
   */
  private readonly sorted: string[] = [];
  /** Held in an object, so that a view of the store (Object.create, as tests wrap it) counts on with it. */
  private readonly versions = { issued: 0 };
  /** Random per store, so that two stores never hand out one ETag (the counter restarts with each). */
  private readonly etagPrefix = randomBytes(8).toString('hex');

  constructor(private readonly now: () => Date = () => new Date()) {}

  async get(key: string): Promise<StoredObject | null> {
    countRequest('GET');
    const entry = this.objects.get(key);
    if (!entry) return null;
    return {
      key,
      size: entry.body.byteLength,
      etag: entry.etag,
      lastModified: entry.lastModified,
      body: entry.body.slice(),
      metadata: { ...entry.metadata },
    };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    countRequest('HEAD');
    const entry = this.objects.get(key);
    return entry ? { key, size: entry.body.byteLength, etag: entry.etag, lastModified: entry.lastModified } : null;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    countRequest('PUT');
    this.checkConditions(key, options.ifMatch, options.ifNoneMatch);
    const entry = this.entry(body.slice(), options.metadata ?? {}, options.tags ?? {});
    this.index(key);
    this.objects.set(key, entry);
    return { etag: entry.etag };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    countRequest('LIST');
    const maxKeys = Math.min(Math.max(options.maxKeys ?? 1000, 1), 1000);
    const after = options.continuationToken ?? options.startAfter;
    // Keys that share a prefix are contiguous in byte order: start at the first one (or past
    // `after`), take one more than a page to know whether another follows.
    let i = this.lowerBound(prefix);
    if (after !== undefined && compareKeys(after, prefix) >= 0) {
      i = this.lowerBound(after);
      if (this.sorted[i] === after) i++;
    }
    const page: string[] = [];
    for (; i < this.sorted.length && page.length <= maxKeys; i++) {
      const key = this.sorted[i]!;
      if (!key.startsWith(prefix)) break;
      page.push(key);
    }
    const more = page.length > maxKeys;
    if (more) page.pop();
    const objects = page.map((key) => {
      const e = this.objects.get(key)!;
      return { key, size: e.body.byteLength, etag: e.etag, lastModified: e.lastModified };
    });
    const last = page[page.length - 1];
    return more && last !== undefined ? { objects, continuationToken: last } : { objects };
  }

  /** Where `key` is, or would go, in the sorted keys. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.sorted[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** A key about to be stored joins the sorted keys (once). */
  private index(key: string): void {
    if (this.objects.has(key)) return;
    this.sorted.splice(this.lowerBound(key), 0, key);
  }

  /** A key about to be deleted leaves them. */
  private unindex(key: string): void {
    if (!this.objects.has(key)) return;
    const i = this.lowerBound(key);
    if (this.sorted[i] === key) this.sorted.splice(i, 1);
  }

  async copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    countRequest('COPY');
    const source = this.objects.get(sourceKey);
    if (!source) throw new Error('copy source does not exist');
    if (options.ifSourceMatch !== undefined && source.etag !== options.ifSourceMatch)
      throw new PreconditionFailedError(sourceKey);
    this.checkConditions(destinationKey, undefined, options.ifNoneMatch);
    const entry = this.entry(source.body.slice(), options.metadata ?? { ...source.metadata }, { ...source.tags });
    this.index(destinationKey);
    this.objects.set(destinationKey, entry);
    return { etag: entry.etag };
  }

  async delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    countRequest('DELETE');
    const entry = this.objects.get(key);
    if (options.ifMatch !== undefined && entry && entry.etag !== options.ifMatch)
      throw new PreconditionFailedError(key);
    this.unindex(key);
    this.objects.delete(key);
  }

  async deleteExactly(key: string, ifMatch: string): Promise<void> {
    countRequest('DELETE');
    if (this.objects.get(key)?.etag !== ifMatch) throw new PreconditionFailedError(key);
    this.unindex(key);
    this.objects.delete(key);
  }

  async deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // One DeleteObjects request carries at most 1,000 keys; an empty batch needs no request.
    if (keys.length > 0) countRequest('DELETE_MANY', Math.ceil(keys.length / 1000));
    for (const key of keys) {
      this.unindex(key);
      this.objects.delete(key);
    }
    return { failed: [] };
  }

  async close(): Promise<void> {}

  /** Tags of an object (tests of TTL classes read them). */
  tagsOf(key: string): Record<string, string> | undefined {
    const entry = this.objects.get(key);
    return entry ? { ...entry.tags } : undefined;
  }

  async readTags(key: string): Promise<Record<string, string> | undefined> {
    countRequest('HEAD');
    return this.tagsOf(key);
  }

  /** Every stored key (tests that scan raw storage use it). */
  keys(): string[] {
    return this.sorted.slice();
  }

  private checkConditions(key: string, ifMatch: string | undefined, ifNoneMatch: '*' | undefined): void {
    const current = this.objects.get(key);
    if (ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
    if (ifMatch !== undefined && (!current || current.etag !== ifMatch)) throw new PreconditionFailedError(key);
  }

  private entry(body: Uint8Array, metadata: Record<string, string>, tags: Record<string, string>): Entry {
    // A version counter in the ETag keeps rewrites of identical bytes distinguishable, as a
    // conditional writer needs (S3's MD5 ETag would not change; callers must not rely on either).
    // No hash of the body: this store stands in for a server, and its CPU is not memvault's.
    const version = ++this.versions.issued;
    return {
      body,
      etag: `${this.etagPrefix}${version.toString(16).padStart(8, '0')}`,
      lastModified: this.now(),
      metadata,
      tags,
    };
  }
}
