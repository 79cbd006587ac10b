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
 * Clearing a marker where the store cannot delete atomically `If-Match` (RGW): a create may replace
 * the marker (`If-Match` its ETag) at any time, and a DELETE that follows a check would delete that
 * new file. So the marker is first replaced, `If-Match`, by a *reaping* marker (random bytes, so
 * its ETag is its own: every 0-byte marker shares one), and only then deleted, unconditionally. A
 * create that lands first makes the reaping PUT fail (its file stays); a create that comes later
 * meets the reaping marker, which it never replaces while it may still be deleted: it waits for the
 * DELETE and creates `If-None-Match: *`. The DELETE is sent only within REAP_DEADLINE_MS of the
 * reaping PUT (measured from before it was sent); a reaper that stalled longer leaves its marker.
 * A create replaces a reaping marker only after it has seen it for REAPING_WAIT_MS, more than twice
 * that deadline, so a DELETE still to come cannot meet the new file (what is left: one DELETE attempt
 * held up in the network, or retried by the SDK, for longer than that: docs/s3.md).
 *
 * A marker holds no name, content or user id: an empty body and two metadata fields.
 */
import { randomBytes } from 'node:crypto';

/** Object metadata field naming why the file was fenced. */
export const FENCE_METADATA = 'memvault-fence';
/** Object metadata field carrying the id of the operation that wrote the marker. */
export const FENCE_OP_METADATA = 'memvault-fence-op';

export type FenceReason = 'moved' | 'deleted' | 'expired' | 'reaping';

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

/**
 * A reaping marker's body: random bytes, so that its ETag differs from the marker it replaces (a
 * create holding that marker's ETag then loses). Shorter than any sealed file, so an encrypted store
 * tells it from a file by its size alone, as it does a 0-byte marker.
 */
export const REAPING_BODY_BYTES = 16;
/** A reaper sends its DELETE only this soon after it began the reaping PUT, or never. */
export const REAP_DEADLINE_MS = 1_000;
/** How long a create waits for a reaping marker's DELETE before it replaces the marker. */
export const REAPING_WAIT_MS = 2_500;

export function reapingBody(): Uint8Array {
  return randomBytes(REAPING_BODY_BYTES);
}

/**
 * The two requests of a reaping, on whatever client sends them: the vault goes through the store
 * port, the sweeper's deleter through the raw S3 client (for its own request counts and error
 * codes). The protocol itself is `reap`, the one place it is written.
 */
export interface ReapRequests {
  /** PUT `body` with `metadata` `If-Match` `etag`; rejects when the condition fails. */
  replaceIfMatch(body: Uint8Array, etag: string, metadata: Record<string, string>): Promise<void>;
  /** DELETE the key, unconditionally. */
  deleteUnconditionally(): Promise<void>;
}

/**
 * Delete exactly the version `etag` of a key on a store whose conditional DELETE is not atomic:
 * replace it `If-Match` by a reaping marker of its own ETag (rejecting as that PUT does when a write
 * landed first), then, within REAP_DEADLINE_MS of sending that PUT, delete unconditionally.
 * Returns false when the deadline passed: the DELETE is never sent, and the reaping marker stays
 * (invisible: a create replaces it after REAPING_WAIT_MS, the sweeper removes it).
 */
export async function reap(requests: ReapRequests, etag: string, op: string = newFenceId()): Promise<boolean> {
  const began = performance.now();
  await requests.replaceIfMatch(reapingBody(), etag, markerMetadata('reaping', op));
  if (performance.now() - began > REAP_DEADLINE_MS) return false;
  await requests.deleteUnconditionally();
  return true;
}

/** A fresh operation id for the markers of one command (16 random bytes, hex). */
export function newFenceId(): string {
  return randomBytes(16).toString('hex');
}
