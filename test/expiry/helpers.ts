import { createExpiryService, type ExpiryService } from '../../src/expiry/access.js';
import { DAY_MS, type ExpiryOptions } from '../../src/expiry/config.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import type { ObjectStore } from '../../src/store/port.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import { StoreUserFiles } from '../../src/vault/store-user-files.js';

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const str = (b: Uint8Array): string => new TextDecoder().decode(b);

/** A controlled clock shared by the store (LastModified), the vault and the sweeper. */
export class Clock {
  private t: number;
  constructor(start = '2025-01-01T00:00:00.000Z') {
    this.t = Date.parse(start);
  }
  readonly now = (): Date => new Date(this.t);
  advanceDays(days: number): void {
    this.t += days * DAY_MS;
  }
  advanceMs(ms: number): void {
    this.t += ms;
  }
}

const codecs = createPlainCodecProvider();

/** One user's files as the vault sees them, with idle expiry on. */
export async function filesOf(store: ObjectStore, expiry: ExpiryService, userId: string): Promise<StoreUserFiles> {
  const codec = await codecs.forUser(userId);
  return new StoreUserFiles(store, codec, await expiry.forUser(userId, codec));
}

export function expiryFor(store: ObjectStore, clock: Clock, options: Partial<ExpiryOptions> = {}): ExpiryService {
  return createExpiryService(store, { ttlDays: 30, now: clock.now, ...options });
}

export async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; requests: RequestCounter }> {
  const requests: RequestCounter = {};
  const result = await withRequestCounter(requests, fn);
  return { result, requests };
}
