/**
 * Idempotency-Key: a command runs at most once per user and key for 24 hours, across every instance
 * sharing the store. The record lives beside the user's files (u/{uid}/i/{name}, src/store/layout.ts)
 * through vault.userRecords: {name} is a keyed hash of the Idempotency-Key (a per-user key the
 * deployment secret derives, so knowing a client's key does not find its record), and the record is
 * sealed under the user's own data key, bound to that name, like the user's files. Whoever can read
 * the store learns neither key nor result; erasing the user makes every record unreadable.
 *
 * A run claims the key with a create-only PUT of a "pending" record; the winner runs the command and
 * replaces the record with its result (If-Match). Anyone else meets the record: the same request gets
 * the stored result (or 409 while it runs), another request with the key is 422. A pending record
 * older than `staleAfterMs` (its instance died mid-command) and any record past its expiry may be
 * taken over, conditionally, by one caller. A re-key re-seals the records in place with the user's
 * files (src/crypto/rekey-reseal.ts), so they open after the old key version is dropped. A record
 * that does not open (altered, or planted) is never taken as consent to run again within the 24
 * hours. Each new record deletes a few expired ones (idempotency-expiry.ts): the prefix stays bounded.
 */
import { createHash } from 'node:crypto';
import type { UserRecords } from '../memvault.js';
import { userRecordPrefix } from '../store/layout.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { isMemvaultError } from '../errors.js';
import { dropExpiredRecords } from './idempotency-expiry.js';
import { ProblemError } from './problems.js';

/** The kind of vault.userRecords the records are. */
export const IDEMPOTENCY_RECORD_KIND = 'idempotency';
export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x21-\x7e]{16,255}$/;
const RECORD_VERSION = 1;

export interface IdempotencyOptions {
  /** How long a key is remembered (default 24 h). */
  ttlMs?: number;
  /** How old a pending record must be before another caller may take it over (default 5 min). */
  staleAfterMs?: number;
  now?: () => number;
}

export interface ReplayableResult {
  content: unknown;
  is_error: boolean;
}

interface IdempotencyRecord {
  v: number;
  state: 'pending' | 'done';
  request: string;
  createdAt: number;
  result?: ReplayableResult;
}

/** The Idempotency-Key header checked: 16 to 255 printable ASCII characters (a UUID is 36). */
export function checkIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value))
    throw new ProblemError(
      'invalid-request',
      'Idempotency-Key must be 16 to 255 printable ASCII characters (e.g. a UUID), sent once.',
    );
  return value;
}

function seal(records: UserRecords, name: string, record: IdempotencyRecord): Uint8Array {
  return records.seal(name, Buffer.from(JSON.stringify(record), 'utf8'));
}

/** The record, or undefined when it does not open as one (altered, or its key version dropped by a re-key). */
async function open(records: UserRecords, name: string, stored: Uint8Array): Promise<IdempotencyRecord | undefined> {
  let text: string;
  try {
    text = Buffer.from(await records.open(name, stored)).toString('utf8');
  } catch (error) {
    if (isMemvaultError(error) && error.code === 'INTEGRITY') return undefined;
    throw error;
  }
  try {
    const record = JSON.parse(text) as IdempotencyRecord;
    return record.v === RECORD_VERSION ? record : undefined;
  } catch {
    return undefined;
  }
}

export function requestFingerprint(route: string, body: unknown): string {
  return createHash('sha256')
    .update(route)
    .update('\0')
    .update(JSON.stringify(body) ?? '')
    .digest('base64url');
}

export class IdempotencyRecords {
  private readonly ttlMs: number;
  private readonly staleAfterMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ObjectStore,
    options: IdempotencyOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
    this.staleAfterMs = options.staleAfterMs ?? 5 * 60 * 1000;
    this.now = options.now ?? Date.now;
  }

  /** The record's store key: the user's prefix and a keyed hash of the Idempotency-Key. */
  objectKey(records: UserRecords, key: string): { name: string; objectKey: string } {
    const name = records.nameOf(key);
    return { name, objectKey: records.keyOf(name) };
  }

  /** Runs `execute` unless this user's key was used already; answers the first result either way. */
  async once(
    records: UserRecords,
    key: string,
    request: string,
    execute: () => Promise<ReplayableResult>,
  ): Promise<{ result: ReplayableResult; replayed: boolean }> {
    const { name, objectKey } = this.objectKey(records, key);
    for (let attempt = 0; attempt < 4; attempt++) {
      const claimed = await this.claim(records, name, objectKey, request);
      if ('replay' in claimed) return { result: claimed.replay, replayed: true };
      if (!claimed.etag) continue; // lost a race for the record: read it again
      // A new record: expired ones go, while the command runs (a failure there is no one's concern here).
      const dropping = claimed.created
        ? dropExpiredRecords(
            this.store,
            userRecordPrefix(records.uid, IDEMPOTENCY_RECORD_KIND),
            this.ttlMs,
            claimed.createdAt,
          ).catch(() => 0)
        : undefined;
      let result: ReplayableResult;
      try {
        result = await execute();
      } catch (error) {
        // Nothing was answered: free the key so that a retry runs the command.
        const claim = { request, createdAt: claimed.createdAt };
        await this.settleClaim(records, name, objectKey, claimed.etag, claim).catch(() => undefined);
        await dropping;
        throw error;
      }
      const done: IdempotencyRecord = {
        v: RECORD_VERSION,
        state: 'done',
        request,
        createdAt: claimed.createdAt,
        result,
      };
      // A failure to record is not the caller's: the command ran and its result is answered.
      await this.settleClaim(records, name, objectKey, claimed.etag, done, done).catch(() => undefined);
      await dropping;
      return { result, replayed: false };
    }
    throw new ProblemError(
      'idempotency-in-progress',
      'Other requests with this Idempotency-Key keep racing this one; retry later.',
      {
        'retry-after': '1',
      },
    );
  }

  /**
   * Replaces our pending record with the result (`done`), or deletes it (a command that failed). A
   * re-key may have re-sealed the pending record in place meanwhile (a new ETag, the same record):
   * that one is then replaced or deleted. A record that is not our claim any more (taken over, or
   * gone) is left as it is.
   */
  private async settleClaim(
    records: UserRecords,
    name: string,
    objectKey: string,
    etag: string,
    claim: { request: string; createdAt: number },
    done?: IdempotencyRecord,
  ): Promise<void> {
    let ifMatch = etag;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        if (done) await this.store.put(objectKey, seal(records, name, done), { ifMatch });
        else await this.store.delete(objectKey, { ifMatch });
        return;
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) throw error;
      }
      const existing = await this.store.get(objectKey);
      const record = existing && (await open(records, name, existing.body));
      const ours =
        record?.state === 'pending' && record.request === claim.request && record.createdAt === claim.createdAt;
      if (!existing || !ours) return;
      ifMatch = existing.etag;
    }
  }

  /** Our claim on the key (etag undefined: lost a race, try again), or the stored result to replay. */
  private async claim(
    records: UserRecords,
    name: string,
    objectKey: string,
    request: string,
  ): Promise<{ etag?: string; createdAt: number; created?: boolean } | { replay: ReplayableResult }> {
    const now = this.now();
    const pending = seal(records, name, { v: RECORD_VERSION, state: 'pending', request, createdAt: now });
    const existing = await this.store.get(objectKey);
    let condition: { ifNoneMatch: '*' } | { ifMatch: string } = { ifNoneMatch: '*' };
    if (existing) {
      const record = await open(records, name, existing.body);
      if (!record) {
        // Its first result cannot be read back: the key stays spent for its 24 hours (store time).
        if (now - existing.lastModified.getTime() < this.ttlMs)
          throw new ProblemError(
            'idempotency-record-unreadable',
            'The first result of this Idempotency-Key cannot be read back; send a new key if the command should run again.',
          );
      } else {
        const age = now - record.createdAt;
        const takeOver = age >= this.ttlMs || (record.state === 'pending' && age >= this.staleAfterMs);
        if (!takeOver) return answerFromRecord(record, request);
      }
      condition = { ifMatch: existing.etag };
    }
    try {
      const { etag } = await this.store.put(objectKey, pending, condition);
      return { etag, createdAt: now, created: !existing };
    } catch (error) {
      if (error instanceof PreconditionFailedError) return { createdAt: now };
      throw error;
    }
  }
}

/** A live record answers: the stored result of the same request, else 422 (another request) or 409 (still running). */
function answerFromRecord(record: IdempotencyRecord, request: string): { replay: ReplayableResult } {
  if (record.request !== request)
    throw new ProblemError(
      'idempotency-key-reused',
      'This Idempotency-Key was used with another request; use a new key for a new request.',
    );
  if (record.state === 'done' && record.result) return { replay: record.result };
  throw new ProblemError(
    'idempotency-in-progress',
    'The first request with this Idempotency-Key is still running; retry shortly.',
    {
      'retry-after': '1',
    },
  );
}
