/**
 * The version record (docs/versions.md): what memvault keeps beside every stored version of a file,
 * in one object metadata field, sealed by the user's codec like the content.
 *
 *   { s: sequence number, a: actor, t: time (ms), h: SHA-256 of the stored body, d?: why the file ended }
 *
 * It is sealed for a path of its own (the file's path below /memories/.memvault/version), so the
 * associated data binds it to the user and the path and it can never be opened as content; it
 * binds the body through `h` and the version's place in the file's history through `s`. A version
 * object under v/ is checked against its key's sequence number when it is read.
 *
 * Under the plain codec (tests, benchmarks) the record is readable JSON, like the content itself.
 */
import { MemvaultError } from '../errors.js';
import { utf8 } from '../crypto/bytes.js';
import type { UserCodec } from '../crypto/user-codec.js';
import {
  bodyHashOf,
  checkCurrentFresh,
  openVersionRecord,
  staleVersionError,
  VERSION_METADATA,
  versionRecordPath as recordPath,
  type VersionActor,
  type VersionEnd,
  type VersionRecord,
} from '../crypto/version-record-format.js';

export {
  bodyHashOf,
  checkCurrentFresh,
  openVersionRecord,
  staleVersionError,
  VERSION_METADATA,
  type VersionActor,
  type VersionEnd,
  type VersionRecord,
};

/**
 * Sequence numbers (docs/versions.md): an edit numbers its version one past the version it
 * replaced (its If-Match names it); a version that replaces an unknown one (a create, an overwrite,
 * a tombstone) takes the writer's clock times 1,000, and never less than one past what this process
 * issued. A path's numbers therefore grow with every change, across deletes and re-creates.
 */
export const SEQ_PER_MS = 1000;
let lastIssued = 0;

export function clockSeq(): number {
  lastIssued = Math.max(lastIssued + 1, Date.now() * SEQ_PER_MS);
  return lastIssued;
}

export function nextSeq(previous: number): number {
  lastIssued = Math.max(lastIssued, previous + 1);
  return previous + 1;
}

export function sealVersionRecord(codec: UserCodec, path: string, record: VersionRecord): string {
  const json = JSON.stringify({
    s: record.seq,
    a: record.actor,
    t: record.time,
    h: record.bodyHash,
    ...(record.end ? { d: record.end } : {}),
    ...(record.keptAt !== undefined ? { k: record.keptAt } : {}),
  });
  return Buffer.from(codec.seal(recordPath(path), utf8(json))).toString('base64url');
}

/**
 * Some of the older versions a redacting edit drops could not be deleted, or (`failed` undefined)
 * which ones could not be told: the file changed under the edit. The edit itself is stored.
 */
export function olderVersionsKeptError(path: string, failed: number | undefined): MemvaultError {
  const which =
    failed === undefined
      ? 'earlier versions of the file that may still hold it were kept (the file changed meanwhile)'
      : `${failed} earlier version(s) of the file that still hold it could not be deleted (storage unavailable)`;
  return new MemvaultError(
    'STORE_UNAVAILABLE',
    `Error: The edit of ${path} was saved with the personal data redacted, but ${which}; the operator can drop them (memvault user drop-version).`,
  );
}
