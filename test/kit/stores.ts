import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FENCE_METADATA } from '../../src/store/fence.js';
import { versionsPrefixOf } from '../../src/store/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import {
  listAll,
  type CopyOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from '../../src/store/port.js';

/** The requests a store wrapper sees ('deleteExactly': a fence where the store offers it). */
export type StoreOp = 'get' | 'head' | 'put' | 'list' | 'copy' | 'delete' | 'deleteExactly';

export interface StoreWrapperOptions {
  /**
   * Offer `deleteExactly` when the inner store does (the memory and file stores): the vault then
   * fences by the conditional delete. Off by default: a wrapper stands for a store like S3, which
   * fences with a marker (src/store/fence.ts).
   */
  deleteExactly?: boolean;
  /**
   * Pass the inner store's transactions through (the SQLite store): the vault then runs a command
   * as one transaction, as on the real store. Off by default: a wrapper stands for a store like S3,
   * and the vault then runs the protocol its steps were written for.
   */
  transactions?: boolean;
}

/**
 * The one store wrapper of the tests: every request goes to `inner`, after `step(op, key, conditional)`,
 * which subclasses override to record, delay, gate or fail requests (RecordingStore, FaultyStore,
 * HookedStore). `maxKeyBytes` is not passed through unless a subclass says so.
 */
export class StoreWrapper implements ObjectStore {
  readonly deleteExactly?: (key: string, ifMatch: string) => Promise<void>;
  // Declared, not a field: a subclass may define its own transaction() (a field would hide it).
  declare readonly transaction?: <T>(fn: () => Promise<T>) => Promise<T>;

  constructor(
    readonly inner: ObjectStore = new MemoryStore(),
    options: StoreWrapperOptions = {},
  ) {
    if (options.deleteExactly && inner.deleteExactly)
      this.deleteExactly = async (key, ifMatch) => {
        await this.step('deleteExactly', key, true);
        return inner.deleteExactly!(key, ifMatch);
      };
    if (options.transactions && inner.transaction) this.transaction = (fn) => inner.transaction!(fn);
  }

  get kind(): string {
    return this.inner.kind;
  }
  get atomicConditionalDelete(): boolean | undefined {
    return this.inner.atomicConditionalDelete;
  }

  /** Runs before each request; may throw (the request then has no effect) or act on `inner`. */
  protected step(_op: StoreOp, _key: string, _conditional: boolean): Promise<void> | void {}

  async get(key: string): Promise<StoredObject | null> {
    await this.step('get', key, false);
    return this.inner.get(key);
  }
  async head(key: string): Promise<ObjectInfo | null> {
    await this.step('head', key, false);
    return this.inner.head(key);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    await this.step('put', key, options?.ifMatch !== undefined || options?.ifNoneMatch !== undefined);
    return this.inner.put(key, body, options);
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.step('list', prefix, false);
    return this.inner.list(prefix, options);
  }
  async copy(from: string, to: string, options?: CopyOptions): Promise<{ etag: string }> {
    await this.step('copy', to, false);
    return this.inner.copy(from, to, options);
  }
  async delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    await this.step('delete', key, options?.ifMatch !== undefined);
    return this.inner.delete(key, options);
  }
  deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    return this.inner.deleteMany(keys);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A store that remembers every key (or prefix) it was asked about (get, head, put, list, delete). */
export class RecordingStore extends StoreWrapper {
  readonly touched: string[] = [];
  protected override step(op: StoreOp, key: string): void {
    if (op !== 'copy') this.touched.push(key);
  }
}

/**
 * Injects faults and delays: `failAt(n)` makes the n-th request from now on throw (a crash at that
 * step: the request has no effect), `delay` interleaves concurrent callers.
 */
/** A kept version's key (src/store/layout.ts): `u/{uid}/v/{names}/@` and 16 digits. */
const VERSION_KEY = /^u\/[^/]+\/v\/.+\/@\d{16}$/;

/** Whether a key is a kept version's (file history, docs/versions.md), not a file's, marker's or record's. */
export function isKeptVersionKey(key: string): boolean {
  return VERSION_KEY.test(key);
}

/** The prefix of the kept versions of the file at `key` (`u/{uid}/v/{names}/@`), or null when it is no user file's key. */
function versionsPrefixOfKey(key: string): string | null {
  const uid = /^u\/([^/]+)\//.exec(key)?.[1];
  if (uid === undefined || isKeptVersionKey(key)) return null;
  try {
    return versionsPrefixOf(uid, key);
  } catch {
    return null;
  }
}

export class FaultyStore extends StoreWrapper {
  calls = 0;
  private failOn = -1;
  /** True once the armed fault has fired. */
  fired = false;
  /** The request the armed fault hit (its kind, and whether it was conditional), once it fired. */
  firedOn: { op: StoreOp; conditional: boolean } | null = null;
  /**
   * Whether that request belonged to a fence marker's clean-up: a conditional DELETE, or on a store
   * without atomic conditional deletes the reaping PUT and the DELETE after it (src/store/fence.ts).
   */
  firedInClearing = false;
  /**
   * Whether that request wrote or deleted a kept version (a version key `…/v/…/@<16 digits>`: the
   * version a write keeps after it, a tombstone after a fence), or listed one file's versions (the
   * newest number a write numbered by the clock looks up after it landed). The command has taken
   * effect by then; a version that could not be kept is left out of the history, and a write that
   * could not look keeps its number (docs/versions.md).
   */
  firedInHistory = false;
  /** Whether the fault hit a request whose failure a command absorbs: a marker's clean-up or a history write. */
  get firedAbsorbably(): boolean {
    return this.firedInClearing || this.firedInHistory;
  }
  private readonly reaped = new Set<string>();
  private clearing = false;

  constructor(
    inner: ObjectStore,
    private readonly delayMs = 0,
    options: StoreWrapperOptions = {},
  ) {
    super(inner, options);
  }

  /** The versions prefixes of the files written since `failAt`: a LIST of one is a write's look at its newest number. */
  private readonly written = new Set<string>();

  failAt(n: number): void {
    this.written.clear();
    this.failOn = this.calls + n;
    this.fired = false;
    this.firedOn = null;
    this.firedInClearing = false;
    this.firedInHistory = false;
  }

  disarm(): void {
    this.failOn = -1;
  }

  protected override async step(op: StoreOp, key: string, conditional: boolean): Promise<void> {
    this.calls += 1;
    const call = this.calls;
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.delayMs));
    if (call === this.failOn) {
      this.fired = true;
      this.firedOn = { op, conditional };
      this.firedInClearing = this.clearing || (op === 'delete' && conditional);
      this.firedInHistory =
        ((op === 'put' || op === 'delete' || op === 'deleteExactly') && isKeptVersionKey(key)) ||
        (op === 'list' && this.written.has(key));
      throw new Error('injected crash');
    }
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    this.clearing = options?.metadata?.[FENCE_METADATA] === 'reaping';
    if (this.clearing) this.reaped.add(key);
    else this.reaped.delete(key);
    const result = await super.put(key, body, options);
    const versions = versionsPrefixOfKey(key);
    if (versions !== null) this.written.add(versions);
    return result;
  }

  override async delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    this.clearing = this.reaped.delete(key);
    return super.delete(key, options);
  }

  override async deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    // A crash during a batch delete may leave any subset deleted: delete one by one.
    const failed: string[] = [];
    for (const key of keys) {
      await this.step('delete', key, false);
      await this.inner.delete(key);
    }
    return { failed };
  }

  /** The inner store stays open: a crash test reopens a vault on it. */
  override async close(): Promise<void> {}
}

/**
 * A store wrapper that runs a hook before the n-th PUT or DELETE (counted from `arm`), and can make
 * that request fail. Requests of the file history (history is on by default) are not counted: the
 * plans name the n-th request of the rename's own protocol (journal, copies, fences).
 */
export class HookedStore extends StoreWrapper {
  private puts = 0;
  private deletes = 0;
  private plan: { on: 'put' | 'delete'; nth: number; fail: boolean; hook?: () => Promise<void> } | undefined;
  fired = false;
  get maxKeyBytes(): number | undefined {
    return this.inner.maxKeyBytes;
  }
  arm(on: 'put' | 'delete', nth: number, options: { fail?: boolean; hook?: () => Promise<void> } = {}): void {
    this.puts = 0;
    this.deletes = 0;
    this.fired = false;
    this.plan = { on, nth, fail: options.fail ?? true, ...(options.hook ? { hook: options.hook } : {}) };
  }
  disarm(): void {
    this.plan = undefined;
  }
  protected override async step(op: StoreOp, key: string): Promise<void> {
    // A fence by deleteExactly (when the wrapper offers it) counts as a DELETE.
    const kind = op === 'deleteExactly' ? 'delete' : op;
    if (kind !== 'put' && kind !== 'delete') return;
    if (isKeptVersionKey(key)) return;
    const n = kind === 'put' ? ++this.puts : ++this.deletes;
    const plan = this.plan;
    if (!plan || plan.on !== kind || plan.nth !== n) return;
    this.plan = undefined;
    this.fired = true;
    await plan.hook?.();
    if (plan.fail) throw new Error('injected failure');
  }
}

/** Every object's key and version: equal snapshots mean the store was not changed at all. */
export async function snapshot(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const o of listAll(store, '')) out.set(o.key, o.etag);
  return out;
}

/**
 * Everything a memory store holds as one searchable text: each key, its metadata, its tags and its
 * body (as UTF-8: an ASCII value stays findable among ciphertext). The leak tests assert that no
 * planted name, content or PII value appears anywhere in it.
 */
export async function storedText(store: MemoryStore): Promise<string> {
  const parts: string[] = [];
  for (const key of store.keys()) {
    const object = await store.get(key);
    parts.push(key, JSON.stringify(object?.metadata ?? {}), JSON.stringify(store.tagsOf(key) ?? {}));
    if (object) parts.push(Buffer.from(object.body).toString('utf8'));
  }
  return parts.join('\n');
}

/**
 * Fresh SQLite stores, each its own database file in one temp directory per suite (removed by the
 * returned `cleanup`): for the suites that run on every store (tool, tree integrity, history).
 */
export function sqliteStores(label: string): { make: () => Promise<ObjectStore>; cleanup: () => Promise<void> } {
  let dir: string | undefined;
  let n = 0;
  return {
    make: async () => {
      dir ??= await mkdtemp(join(tmpdir(), `memvault-${label}-`));
      return SqliteStore.open(join(dir, `store-${(n += 1)}.db`));
    },
    cleanup: async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
