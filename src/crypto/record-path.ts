/**
 * The path a host record (vault.userRecords) is sealed under, in the associated data where a file
 * has its path: one definition for the records (src/entry/host-records.ts) and for the re-key that
 * re-seals them (src/crypto/rekey-reseal.ts). The path guard refuses a NUL in every file path: no
 * file is sealed under such a path, so a record never opens as a file, nor a file as a record.
 */
import { MEMORIES_ROOT } from './encrypted-user-codec.js';

export function userRecordPath(kind: string, name: string): string {
  return `${MEMORIES_ROOT}/\u0000${kind}/${name}`;
}
