/**
 * The byte-level parts of the version record (docs/versions.md) that both the vault, which writes
 * and checks records (src/vault/version-record.ts), and re-keying, which re-seals them with the
 * versions they describe (src/crypto/rekey.ts), need: the metadata field, the path a record is
 * sealed for, and the body hash it carries. One spelling, below both.
 */
import { createHash } from 'node:crypto';

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
