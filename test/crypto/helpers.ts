import { randomBytes } from 'node:crypto';
import { MemvaultError, type ErrorCode } from '../../src/errors.js';
import {
  createEncryptedCodecProvider,
  type EncryptedCodecOptions,
  type EncryptedCodecProvider,
} from '../../src/crypto/codec.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import type { KeyProvider } from '../../src/crypto/key-provider.js';
import type { ObjectStore, PutOptions } from '../../src/store/port.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';
import { MemoryStore } from '../../src/store/memory.js';

export function newMasterKey(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

export async function localProvider(masterKey: Uint8Array = newMasterKey()): Promise<KeyProvider> {
  return createLocalKeyProvider(masterKey);
}

export async function newVault(
  options: Partial<EncryptedCodecOptions> = {},
): Promise<{ store: ObjectStore; provider: EncryptedCodecProvider; keyProvider: KeyProvider }> {
  const store = options.store ?? new MemoryStore();
  const keyProvider = options.keyProvider ?? (await localProvider());
  const provider = await createEncryptedCodecProvider({ ...options, store, keyProvider });
  return { store, provider, keyProvider };
}

/** Run fn and return the MemvaultError it throws (fails the test if it returns or throws something else). */
export async function caught(fn: () => unknown): Promise<MemvaultError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof MemvaultError) return e;
    throw new Error(`expected a MemvaultError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected a MemvaultError, nothing was thrown');
}

export function caughtSync(fn: () => unknown): MemvaultError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MemvaultError) return e;
    throw new Error(`expected a MemvaultError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected a MemvaultError, nothing was thrown');
}

export function expectCode(e: MemvaultError, code: ErrorCode): void {
  if (e.code !== code) throw new Error(`expected ${code}, got ${e.code}: ${e.message}`);
}

/**
 * A store wrapper for fault injection: `beforePut` runs before each put and may throw or act on
 * the inner store (a concurrent writer).
 */
export class HookedStore extends StoreWrapper {
  beforePut: ((key: string, options: PutOptions | undefined) => Promise<void> | void) | undefined;
  beforeGet: ((key: string) => Promise<void> | void) | undefined;
  readonly puts: Array<{ key: string; options: PutOptions | undefined }> = [];
  /** Keys of puts the inner store refused (lost conditions). */
  readonly failedPuts: string[] = [];

  constructor(override readonly inner: MemoryStore = new MemoryStore()) {
    super(inner);
  }

  override get kind(): string {
    return 'hooked';
  }

  protected override async step(op: StoreOp, key: string): Promise<void> {
    if (op === 'get') await this.beforeGet?.(key);
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions) {
    this.puts.push({ key, options });
    await this.beforePut?.(key, options);
    try {
      return await this.inner.put(key, body, options);
    } catch (e) {
      this.failedPuts.push(key);
      throw e;
    }
  }
}

/** Resolves once `count` callers are waiting: forces interleavings without timers. */
export function barrier(count: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return () => {
    waiting += 1;
    if (waiting >= count) release();
    return released;
  };
}
