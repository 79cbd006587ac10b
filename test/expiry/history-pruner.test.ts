/**
 * The sweeper's judgement of orphaned versions (src/expiry/history-retention.ts): a version whose
 * file the listing did not show is dropped only once it is older than the grace period, measured
 * against the store's own time as the listing shows it as well as against the sweep's clock. A sweep
 * whose clock runs ahead must not take a version written during its listing for an old orphan (the
 * history checker's file-store runs lost acknowledged writes so, before).
 */
import { describe, expect, it } from 'vitest';
import { HistoryPruner } from '../../src/expiry/history-retention.js';
import { versionKeyOf } from '../../src/store/layout.js';

const uid = 'u1';
const fileKey = `u/${uid}/f/a.md`;
const DAY = 86_400_000;

describe('orphaned versions', () => {
  it('a version written during the listing is kept even when the sweep runs a day ahead; an old one goes', () => {
    const storeNow = Date.parse('2026-06-01T00:00:00.000Z');
    const pruner = new HistoryPruner(undefined, new Date(storeNow + DAY), 5_000);
    pruner.noteTime(new Date(storeNow - 1_000)); // what the listing showed before the versions
    pruner.noteTime(new Date(storeNow));
    // The file key was not listed (written after the listing passed the files); its version is fresh.
    expect(pruner.shouldDrop(uid, versionKeyOf(uid, fileKey, 2_000), new Date(storeNow - 1_000), 40)).toBe(false);
    const old = new HistoryPruner(undefined, new Date(storeNow + DAY), 5_000);
    old.noteTime(new Date(storeNow));
    expect(old.shouldDrop(uid, versionKeyOf(uid, fileKey, 1_000), new Date(storeNow - 60_000), 40)).toBe(true);
  });

  it('with nothing seen yet, nothing is an orphan (the safe side)', () => {
    const pruner = new HistoryPruner(undefined, new Date('2030-01-01T00:00:00.000Z'), 0);
    expect(pruner.shouldDrop(uid, versionKeyOf(uid, fileKey, 1), new Date('2020-01-01T00:00:00.000Z'), 40)).toBe(false);
  });
});
