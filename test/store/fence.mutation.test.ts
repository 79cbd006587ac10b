/**
 * Fence markers (src/store/fence.ts) exactly as other instances and the sweeper read them: the two
 * metadata fields, the empty body, what counts as a marker, the reaping body and the deadlines, the
 * operation id. A marker written under other names would be taken for a file by every older
 * instance sharing the bucket. The mutation target `fence` runs this.
 */
import { describe, expect, it } from 'vitest';
import {
  FENCE_METADATA,
  FENCE_OP_METADATA,
  MARKER_BODY,
  markerMetadata,
  markerOf,
  newFenceId,
  REAP_DEADLINE_MS,
  REAPING_BODY_BYTES,
  REAPING_WAIT_MS,
  reapingBody,
  type FenceReason,
} from '../../src/store/fence.js';

describe('fence markers', () => {
  it('are an empty body with two metadata fields, spelled as every instance reads them', () => {
    expect(FENCE_METADATA).toBe('memvault-fence');
    expect(FENCE_OP_METADATA).toBe('memvault-fence-op');
    expect(MARKER_BODY).toBeInstanceOf(Uint8Array);
    expect(MARKER_BODY.byteLength).toBe(0);
    for (const reason of ['moved', 'deleted', 'expired', 'reaping'] as FenceReason[]) {
      expect(markerMetadata(reason, 'op1')).toEqual({ 'memvault-fence': reason, 'memvault-fence-op': 'op1' });
    }
  });

  it('markerOf: the reason and op of a marker, null for an ordinary object', () => {
    expect(markerOf({})).toBeNull();
    expect(markerOf({ 'memvault-version': 'x', 'memvault-origin': 'host' })).toBeNull();
    expect(markerOf({ 'memvault-fence-op': 'abc' })).toBeNull(); // an op alone is no marker
    expect(markerOf(markerMetadata('deleted', 'abc'))).toEqual({ reason: 'deleted', op: 'abc' });
    expect(markerOf({ 'memvault-fence': 'moved' })).toEqual({ reason: 'moved', op: '' });
    expect(markerOf({ 'memvault-fence': '' })).toEqual({ reason: '', op: '' }); // present, even empty: a marker
    expect(markerOf({ 'memvault-fence': 'expired', 'memvault-fence-op': '', other: 'y' })).toEqual({
      reason: 'expired',
      op: '',
    });
  });

  it('a reaping body is 16 fresh random bytes (its own ETag), shorter than any sealed file', () => {
    expect(REAPING_BODY_BYTES).toBe(16);
    const bodies = Array.from({ length: 8 }, () => reapingBody());
    for (const body of bodies) expect(body.byteLength).toBe(16);
    expect(new Set(bodies.map((b) => Buffer.from(b).toString('hex'))).size).toBe(8);
  });

  it('a create waits for a reaping marker more than twice the reaper deadline', () => {
    expect(REAP_DEADLINE_MS).toBe(1_000);
    expect(REAPING_WAIT_MS).toBe(2_500);
    expect(REAPING_WAIT_MS).toBeGreaterThan(2 * REAP_DEADLINE_MS);
  });

  it('operation ids are 32 hex characters, each new', () => {
    const ids = Array.from({ length: 50 }, () => newFenceId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(50);
  });
});
