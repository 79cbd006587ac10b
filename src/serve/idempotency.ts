/**
 * Idempotency-Key: a command runs at most once per user and key for 24 hours, across every instance
 * sharing the store. The record lives beside the user's files (u/{uid}/i/{hash}, src/store/layout.ts),
 * named by a SHA-256 of uid and key and sealed (AES-256-GCM) under a key derived from the
 * Idempotency-Key itself, so the stored result (which can quote file text) opens only for a caller
 * who holds that key; erasing the user deletes it with the rest of their prefix.
 *
 * A run claims the key with a create-only PUT of a "pending" record; the winner runs the command and
 * replaces the record with its result (If-Match). Anyone else meets the record: the same request gets
 * the stored result (or 409 while it runs), another request with the key is 422. A pending record
 * older than `staleAfterMs` (its instance died mid-command) and any record past its expiry may be
 * taken over, conditionally, by one caller.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { userIdempotencyPrefix } from '../store/layout.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { ProblemError } from './problems.js';

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

function sealingKey(uid: string, key: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, uid, 'memvault idempotency record v1', 32));
}

function seal(uid: string, key: string, record: IdempotencyRecord): Uint8Array {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(uid, key), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function open(uid: string, key: string, stored: Uint8Array): IdempotencyRecord {
  const bytes = Buffer.from(stored);
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(uid, key), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  const record = JSON.parse(text) as IdempotencyRecord;
  if (record.v !== RECORD_VERSION) throw new Error('unknown idempotency record version');
  return record;
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

  objectKey(uid: string, key: string): string {
    return userIdempotencyPrefix(uid) + createHash('sha256').update(uid).update('\0').update(key).digest('hex');
  }

  /** Runs `execute` unless this user's key was used already; answers the first result either way. */
  async once(
    uid: string,
    key: string,
    request: string,
    execute: () => Promise<ReplayableResult>,
  ): Promise<{ result: ReplayableResult; replayed: boolean }> {
    const objectKey = this.objectKey(uid, key);
    for (let attempt = 0; attempt < 4; attempt++) {
      const claimed = await this.claim(uid, key, objectKey, request);
      if ('replay' in claimed) return { result: claimed.replay, replayed: true };
      if (!claimed.etag) continue; // lost a race for the record: read it again
      let result: ReplayableResult;
      try {
        result = await execute();
      } catch (error) {
        // Nothing was answered: free the key so that a retry runs the command.
        await this.store.delete(objectKey, { ifMatch: claimed.etag }).catch(() => undefined);
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
      await this.store.put(objectKey, seal(uid, key, done), { ifMatch: claimed.etag }).catch(() => undefined);
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

  /** Our claim on the key (etag undefined: lost a race, try again), or the stored result to replay. */
  private async claim(
    uid: string,
    key: string,
    objectKey: string,
    request: string,
  ): Promise<{ etag?: string; createdAt: number } | { replay: ReplayableResult }> {
    const now = this.now();
    const pending = seal(uid, key, { v: RECORD_VERSION, state: 'pending', request, createdAt: now });
    const existing = await this.store.get(objectKey);
    let condition: { ifNoneMatch: '*' } | { ifMatch: string } = { ifNoneMatch: '*' };
    if (existing) {
      const record = open(uid, key, existing.body);
      const age = now - record.createdAt;
      const takeOver = age >= this.ttlMs || (record.state === 'pending' && age >= this.staleAfterMs);
      if (!takeOver) {
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
      condition = { ifMatch: existing.etag };
    }
    try {
      const { etag } = await this.store.put(objectKey, pending, condition);
      return { etag, createdAt: now };
    } catch (error) {
      if (error instanceof PreconditionFailedError) return { createdAt: now };
      throw error;
    }
  }
}
