/**
 * The byte-level parts of the version record (docs/versions.md) that the vault, which writes and
 * checks records (src/vault/version-record.ts), re-keying, which re-seals them with the versions
 * they describe (src/crypto/rekey.ts), and the user export, which lists them (src/crypto/operations.ts),
 * need: the metadata field, the path a record is sealed for, the body hash it carries, and the
 * record opened and checked, and the two checks every reader of stored data makes with it (a kept
 * version's record names its place; a current file is not older than its history). One spelling,
 * below all three; src/crypto/verified-read.ts is the read that makes them.
 */
import { createHash } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import { strictUtf8 } from './bytes.js';
import type { UserCodec } from './user-codec.js';

/** Object metadata field of the sealed version record (base64url). */
export const VERSION_METADATA = 'memvault-version';

const MEMORY_ROOT = '/memories';

/** The path a file's version records are sealed for (never a file: the reserved directory is refused to the model). */
export function versionRecordPath(path: string): string {
  return `${MEMORY_ROOT}/.memvault/version${path.slice(MEMORY_ROOT.length)}`;
}

/** SHA-256 of a stored body (base64url): the record's `h`, which binds it to the body. */
export function bodyHashOf(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('base64url');
}

/**
 * Who made a version: the model through the tool, the person it remembers (the memory page, their own
 * token on serve), the host (files(), a service key, the CLI), a restore, the sweeper.
 */
export type VersionActor = 'model' | 'person' | 'host' | 'restore' | 'sweeper';
const ACTORS: readonly VersionActor[] = ['model', 'person', 'host', 'restore', 'sweeper'];

/** Why a file ended at a tombstone version: deleted, moved away (rename) or expired (sweeper). */
export type VersionEnd = 'deleted' | 'moved' | 'expired';
const ENDS: readonly VersionEnd[] = ['deleted', 'moved', 'expired'];

export interface VersionRecord {
  seq: number;
  actor: VersionActor;
  /** When the version was written, by the writer's clock (ms since the epoch). */
  time: number;
  /** SHA-256 of the stored body (base64url). */
  bodyHash: string;
  /** Present on a tombstone: the file ended here. */
  end?: VersionEnd;
  /**
   * When the store first kept this version (ms), set by re-keying when it rewrites the version
   * (src/crypto/rekey.ts): the rewrite moves the object's LastModified, which is otherwise that time.
   */
  keptAt?: number;
}

function damagedRecord(): MemvaultError {
  return new MemvaultError(
    'INTEGRITY',
    'Error: A stored version record did not open: the object is damaged or was moved from another file or user.',
  );
}

/** A kept version whose record is missing or names another place in the history (moved, swapped, damaged). */
export function misplacedVersionError(): MemvaultError {
  return new MemvaultError(
    'INTEGRITY',
    'Error: A stored version does not match its place in the history: it was moved or damaged.',
  );
}

export function staleVersionError(path: string): MemvaultError {
  // Reaches the model as it is (the vault cannot import src/tool/messages.ts; same wording there as versionStale).
  return new MemvaultError(
    'INTEGRITY',
    `Error: ${path} holds an older version of the file than its history records: it was put back by something other than memvault. It is not shown; the operator can restore it (memvault user restore).`,
  );
}

/**
 * The record an object's metadata carries, checked against its body; undefined when it has none
 * (a version written before history was on). Throws INTEGRITY when it does not open or does not match.
 */
export function openVersionRecord(
  codec: UserCodec,
  path: string,
  metadata: Record<string, string>,
  body: Uint8Array,
): VersionRecord | undefined {
  const sealed = metadata[VERSION_METADATA];
  if (sealed === undefined) return undefined;
  let plain: Uint8Array;
  try {
    plain = codec.open(versionRecordPath(path), Buffer.from(sealed, 'base64url'));
  } catch {
    throw damagedRecord();
  }
  return parseVersionRecord(plain, body);
}

/**
 * An opened record's text, checked field by field and against the body it sits on (its `h`).
 * Re-keying, which opens records with a keyring of its own, checks them with this too.
 */
export function parseVersionRecord(plain: Uint8Array, body: Uint8Array): VersionRecord {
  let value: { s?: unknown; a?: unknown; t?: unknown; h?: unknown; d?: unknown; k?: unknown };
  try {
    value = JSON.parse(strictUtf8(plain)) as typeof value;
  } catch {
    throw damagedRecord();
  }
  if (typeof value !== 'object' || value === null) throw damagedRecord();
  const { s, a, t, h, d, k } = value;
  if (
    typeof s !== 'number' ||
    !Number.isSafeInteger(s) ||
    s < 1 ||
    typeof t !== 'number' ||
    typeof h !== 'string' ||
    !ACTORS.includes(a as VersionActor) ||
    (d !== undefined && !ENDS.includes(d as VersionEnd)) ||
    (k !== undefined && (typeof k !== 'number' || !Number.isSafeInteger(k)))
  ) {
    throw damagedRecord();
  }
  if (h !== bodyHashOf(body)) throw damagedRecord();
  return {
    seq: s,
    actor: a as VersionActor,
    time: t,
    bodyHash: h,
    ...(d !== undefined ? { end: d as VersionEnd } : {}),
    ...(k !== undefined ? { keptAt: k } : {}),
  };
}

/**
 * A kept version is where its record says: the record is there and its number is the key's. Two
 * versions swapped on disk each open for the file and match their bodies; only this tells.
 */
export function checkVersionPlace(record: VersionRecord | undefined, seq: number): VersionRecord {
  if (record === undefined || record.seq !== seq) throw misplacedVersionError();
  return record;
}

/**
 * A current file is not older than its history: refused when the history holds a newer number
 * than the file's record (`newest`, null when it holds none), or any number while the file has no
 * record (a put-back stripped of its metadata).
 */
export function checkCurrentFresh(path: string, seq: number | undefined, newest: number | null): void {
  if (newest !== null && (seq === undefined || seq < newest)) throw staleVersionError(path);
}
