import { createExpiryService, type ExpiryService } from '../../src/expiry/access.js';
import type { ExpiryOptions } from '../../src/expiry/config.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import type { ObjectStore } from '../../src/store/port.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import { StoreUserFiles } from '../../src/vault/store-user-files.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ManualClock } from './clock.js';

const codecs = createPlainCodecProvider();

/** One user's files as the vault sees them, with idle expiry on. */
export async function filesOf(store: ObjectStore, expiry: ExpiryService, userId: string): Promise<StoreUserFiles> {
  const codec = await codecs.forUser(userId);
  return new StoreUserFiles(store, codec, await expiry.forUser(userId, codec));
}

/** Idle expiry on `store` at the clock's time: 30 days unless `options` say otherwise. */
export function expiryFor(store: ObjectStore, clock: ManualClock, options: Partial<ExpiryOptions> = {}): ExpiryService {
  return createExpiryService(store, { ttlDays: 30, now: clock.now, ...options });
}

/** Runs `fn` with a request counter of its own and returns what it sent. */
export async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; requests: RequestCounter }> {
  const requests: RequestCounter = {};
  const result = await withRequestCounter(requests, fn);
  return { result, requests };
}

/**
 * The usual idle-expiry setup: a manual clock, a MemoryStore on it, expiry (30 days unless
 * `options` say otherwise) and one user's files (default 'alice').
 */
export async function expirySetup(
  options: Partial<ExpiryOptions> = {},
  userId = 'alice',
): Promise<{ clock: ManualClock; store: MemoryStore; expiry: ExpiryService; files: StoreUserFiles }> {
  const clock = new ManualClock();
  const store = new MemoryStore(clock.now);
  const expiry = expiryFor(store, clock, options);
  const files = await filesOf(store, expiry, userId);
  return { clock, store, expiry, files };
}
