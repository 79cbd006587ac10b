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
 *
 * The time only ever moves forward: a write reads the record and replaces exactly what it read
 * (If-Match, or If-None-Match where there was none) with the later of the two times, so two
 * instances ending sessions at once (a logout and a forget-me, clocks a little apart) never put
 * back an earlier time that would bring a logged-out session back. A stored time more than
 * MAX_CLOCK_AHEAD_MS ahead of this instance's clock is taken for a clock set wrong, not kept: a
 * logout or a sign-in here replaces it with this clock's time, which still ends every session signed
 * in before it (otherwise one instance's fast clock would end every new sign-in until real time
 * caught up with it).
 */
import type { UserRecords } from '../../entry/host-records.js';
import { MemvaultError } from '../../errors.js';
import type { Vault } from '../../memvault.js';
import { PreconditionFailedError } from '../../store/port.js';
import { LruMap } from '../../util/lru.js';

const RECORD_KIND = 'page-sessions';
const RECORD_NAME = 'ended-before';
const MAX_CACHED = 10_000;
/** Writes of the record tried before a logout fails (each lost only to another instance's write of it). */
const MAX_WRITE_ATTEMPTS = 5;
/** How far ahead of this instance's clock a stored time may be before it counts as another's clock set wrong. */
export const MAX_CLOCK_AHEAD_MS = 5 * 60_000;

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
    const endedBefore = stored ? await endedBeforeIn(records, name, stored.body) : 0;
    const fresh: Cached =
      endedBefore === null
        ? { endedBefore: 0, unreadable: true, fetched: now }
        : { endedBefore, unreadable: false, fetched: now };
    this.#cache.set(user, fresh);
    return fresh;
  }

  /** Whether a session of `user` signed in at `created` was ended (here or on another instance). */
  async ended(user: string, created: number, now: number): Promise<boolean> {
    const state = await this.#read(user, now);
    return state.unreadable || created < state.endedBefore;
  }

  /**
   * Ends every session of `user` signed in before `at`, on every instance: the record then says `at`
   * or a later time another write left there. A record that does not open is replaced. Throws
   * CONFLICT when other instances' writes of the record won every attempt (nothing was ended here).
   */
  async endAll(user: string, at: number): Promise<void> {
    const { records, name, key } = await this.#place(user);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await this.vault.store.get(key);
      const current = stored ? await endedBeforeIn(records, name, stored.body) : null;
      const endedBefore = current !== null && current <= at + MAX_CLOCK_AHEAD_MS ? Math.max(current, at) : at;
      if (current !== endedBefore) {
        const body = records.seal(name, new TextEncoder().encode(JSON.stringify({ endedBefore })));
        try {
          await this.vault.store.put(key, body, stored ? { ifMatch: stored.etag } : { ifNoneMatch: '*' });
        } catch (error) {
          if (error instanceof PreconditionFailedError) continue; // another instance wrote it: read again
          throw error;
        }
      }
      this.#cache.set(user, { endedBefore, unreadable: false, fetched: at });
      return;
    }
    throw new MemvaultError('CONFLICT', 'The sessions could not be ended: too many writes at once. Try again.');
  }

  /**
   * At sign-in: a record that does not open, or holds a time a wrong clock set far ahead (which would
   * end this new session), is written afresh with this time, ending the sessions before this one.
   */
  async signedIn(user: string, at: number): Promise<void> {
    this.#cache.delete(user);
    const state = await this.#read(user, at);
    if (state.unreadable || state.endedBefore > at + MAX_CLOCK_AHEAD_MS) await this.endAll(user, at);
  }
}

/** The time a stored record holds, or null when it does not open as one (altered, planted, another's). */
async function endedBeforeIn(records: UserRecords, name: string, body: Uint8Array): Promise<number | null> {
  try {
    const value = JSON.parse(new TextDecoder().decode(await records.open(name, body))) as unknown;
    const endedBefore = (value as { endedBefore?: unknown }).endedBefore;
    return typeof endedBefore === 'number' && Number.isFinite(endedBefore) ? endedBefore : null;
  } catch {
    return null;
  }
}
