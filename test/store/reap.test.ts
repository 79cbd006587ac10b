import { describe, expect, it, vi } from 'vitest';
import {
  FENCE_METADATA,
  FENCE_OP_METADATA,
  REAP_DEADLINE_MS,
  REAPING_BODY_BYTES,
  reap,
  type ReapRequests,
} from '../../src/store/fence.js';

/**
 * The reaping protocol (src/store/fence.ts), written once for the vault and the sweeper's deleter:
 * which requests it sends, in which order, and when it sends no DELETE at all.
 */
function recorder(options: { putFails?: Error; putTakesMs?: number } = {}): {
  requests: ReapRequests;
  sent: string[];
  bodies: Uint8Array[];
  metadata: Array<Record<string, string>>;
} {
  const sent: string[] = [];
  const bodies: Uint8Array[] = [];
  const metadata: Array<Record<string, string>> = [];
  return {
    sent,
    bodies,
    metadata,
    requests: {
      async replaceIfMatch(body, etag, meta) {
        sent.push(`PUT If-Match ${etag}`);
        bodies.push(body);
        metadata.push(meta);
        if (options.putTakesMs !== undefined) vi.advanceTimersByTime(options.putTakesMs);
        if (options.putFails) throw options.putFails;
      },
      async deleteUnconditionally() {
        sent.push('DELETE');
      },
    },
  };
}

describe('reap: delete exactly one version where DELETE conditions are not atomic', () => {
  it('replaces the version If-Match by a reaping marker of its own ETag, then deletes, unconditionally', async () => {
    const r = recorder();
    expect(await reap(r.requests, 'etag-1', 'op-7')).toBe(true);
    expect(r.sent).toEqual(['PUT If-Match etag-1', 'DELETE']);
    expect(r.metadata).toEqual([{ [FENCE_METADATA]: 'reaping', [FENCE_OP_METADATA]: 'op-7' }]);
    // Random bytes of the reaping size: its ETag is its own (every 0-byte marker shares one), and
    // a second reaping never repeats the first's body.
    const again = recorder();
    await reap(again.requests, 'etag-1');
    expect(r.bodies[0]!.byteLength).toBe(REAPING_BODY_BYTES);
    expect(Buffer.from(r.bodies[0]!).equals(Buffer.from(again.bodies[0]!))).toBe(false);
    // Without an op, each reaping marker names an operation of its own.
    expect(again.metadata[0]![FENCE_OP_METADATA]).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a lost PUT (a write landed first) rejects as the PUT did and sends no DELETE: the write stays', async () => {
    const lost = new Error('precondition failed');
    const r = recorder({ putFails: lost });
    await expect(reap(r.requests, 'etag-1')).rejects.toBe(lost);
    expect(r.sent).toEqual(['PUT If-Match etag-1']);
  });

  it('sends no DELETE once the deadline has passed since the PUT was sent, and says so', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const stalled = recorder({ putTakesMs: REAP_DEADLINE_MS + 1 });
      expect(await reap(stalled.requests, 'etag-1')).toBe(false);
      expect(stalled.sent).toEqual(['PUT If-Match etag-1']);
      // Exactly at the deadline it still deletes: the create's wait (REAPING_WAIT_MS) is more than twice as long.
      const onTime = recorder({ putTakesMs: REAP_DEADLINE_MS });
      expect(await reap(onTime.requests, 'etag-1')).toBe(true);
      expect(onTime.sent).toEqual(['PUT If-Match etag-1', 'DELETE']);
    } finally {
      vi.useRealTimers();
    }
  });
});
