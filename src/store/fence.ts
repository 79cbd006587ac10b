/**
 * Fence markers: how a directory rename, a delete and the expiry sweeper take a file out of use
 * with a write the server enforces. The file's object is replaced, `If-Match` the version the
 * operation read, by an empty object whose metadata says why (`moved`, `deleted`, `expired`) and
 * which operation wrote it (a random id). An editor holding the old version then loses its own
 * conditional PUT (412), re-reads and finds no file; a re-create or an edit that landed first makes
 * the fence lose instead, and the operation keeps the newer file. Only then is the marker deleted
 * (`If-Match` its own ETag). The linearisation point of every one of these operations is therefore
 * the fence PUT, never a DELETE (Ceph RGW 16 ignores conditions on DELETE). See docs/s3.md.
 *
 * A marker holds no name, content or user id: an empty body and two metadata fields.
 */
import { randomBytes } from 'node:crypto';

/** Object metadata field naming why the file was fenced. */
export const FENCE_METADATA = 'memvault-fence';
/** Object metadata field carrying the id of the operation that wrote the marker. */
export const FENCE_OP_METADATA = 'memvault-fence-op';

export type FenceReason = 'moved' | 'deleted' | 'expired';

/** Every marker's body: empty (a sealed file is never empty; see StoreUserFiles for plain stores). */
export const MARKER_BODY = new Uint8Array(0);

export function markerMetadata(reason: FenceReason, op: string): Record<string, string> {
  return { [FENCE_METADATA]: reason, [FENCE_OP_METADATA]: op };
}

/** The marker an object's metadata describes, or null for an ordinary object. */
export function markerOf(metadata: Record<string, string>): { reason: string; op: string } | null {
  const reason = metadata[FENCE_METADATA];
  if (reason === undefined) return null;
  return { reason, op: metadata[FENCE_OP_METADATA] ?? '' };
}

/** A fresh operation id for the markers of one command (16 random bytes, hex). */
export function newFenceId(): string {
  return randomBytes(16).toString('hex');
}
