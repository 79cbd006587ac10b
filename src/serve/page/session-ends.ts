/**
 * Sessions ended on every instance: logging out and forgetting me write, for the person, the time
 * before which every page session they signed in is over. The record lives beside their files
 * (u/{uid}/p/{name}, a vault.userRecords record: its name a keyed hash, sealed under the person's
 * own key, so it holds nothing readable and names no one). Each instance reads it at most once per
 * `cacheMs` per person (default 5 s): a session ended elsewhere stops working here within that time.
 *
 * A re-key re-seals the record under the new key version with the user's files, so it opens after
 * the old version is dropped. Fail closed: a record that does not open (altered, or planted) ends
 * every session signed in before the next sign-in, which writes it afresh.
 */
import type { UserRecords } from '../../entry/host-records.js';
import type { Vault } from '../../memvault.js';
import { LruMap } from '../../util/lru.js';

const RECORD_KIND = 'page-sessions';
const RECORD_NAME = 'ended-before';
const MAX_CACHED = 10_000;

interface Cached {
  /** Sessions signed in before this time (ms) are over; 0: none ended. */
  endedBefore: number;
  /** Unreadable record: every session before the next sign-in is over. */
  unreadable: boolean;
  fetched: number;
}

export class SessionEnds {
  readonly #cache = new LruMap<string, Cached>(MAX_CACHED);

  constructor(
    private readonly vault: Vault,
    private readonly cacheMs = 5_000,
  ) {
    if (!Number.isSafeInteger(cacheMs) || cacheMs < 0)
      throw new RangeError('sessionEndsCacheMs must be a whole number of milliseconds, 0 or more');
  }

  async #place(user: string): Promise<{ records: UserRecords; name: string; key: string }> {
    const records = await this.vault.userRecords(user, RECORD_KIND);
    const name = records.nameOf(RECORD_NAME);
    return { records, name, key: records.keyOf(name) };
  }

  async #read(user: string, now: number): Promise<Cached> {
    const cached = this.#cache.get(user);
    if (cached && now - cached.fetched < this.cacheMs) return cached;
    const { records, name, key } = await this.#place(user);
    const stored = await this.vault.store.get(key);
    let fresh: Cached = { endedBefore: 0, unreadable: false, fetched: now };
    if (stored) {
      try {
        const value = JSON.parse(new TextDecoder().decode(await records.open(name, stored.body))) as unknown;
        const endedBefore = (value as { endedBefore?: unknown }).endedBefore;
        if (typeof endedBefore !== 'number' || !Number.isFinite(endedBefore)) throw new Error('not a session record');
        fresh = { endedBefore, unreadable: false, fetched: now };
      } catch {
        fresh = { endedBefore: 0, unreadable: true, fetched: now };
      }
    }
    this.#cache.set(user, fresh);
    return fresh;
  }

  /** Whether a session of `user` signed in at `created` was ended (here or on another instance). */
  async ended(user: string, created: number, now: number): Promise<boolean> {
    const state = await this.#read(user, now);
    return state.unreadable || created < state.endedBefore;
  }

  /** Ends every session of `user` signed in before `at`, on every instance. */
  async endAll(user: string, at: number): Promise<void> {
    const { records, name, key } = await this.#place(user);
    const body = records.seal(name, new TextEncoder().encode(JSON.stringify({ endedBefore: at })));
    await this.vault.store.put(key, body);
    this.#cache.set(user, { endedBefore: at, unreadable: false, fetched: at });
  }

  /** At sign-in: a record that does not open is written afresh, ending the sessions before this one. */
  async signedIn(user: string, at: number): Promise<void> {
    this.#cache.delete(user);
    const state = await this.#read(user, at);
    if (state.unreadable) await this.endAll(user, at);
  }
}
