import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { MemoryStore } from '../../src/store/memory.js';
import { createVault } from '../../src/memvault.js';
import { METRICS } from '../../src/telemetry/names.js';
import { registerInMemoryTelemetry, total, type InMemoryTelemetry } from '../telemetry/harness.js';
import { plantedObjectsScenario, recordingLogger } from './planted-objects.js';

let telemetry: InMemoryTelemetry;
beforeAll(() => {
  telemetry = registerInMemoryTelemetry();
});
afterAll(async () => {
  await telemetry.shutdown();
});

describe("objects under a user prefix that are not the user's files", () => {
  it('memory store: listings skip and count them, reads of them stay integrity errors', async () => {
    await telemetry.collect();
    const { skipped } = await plantedObjectsScenario(new MemoryStore());
    const points = await telemetry.collect();
    const counted =
      total(points, METRICS.listingSkipped, { 'memvault.listing.skip_reason': 'folder_marker' }) +
      total(points, METRICS.listingSkipped, { 'memvault.listing.skip_reason': 'not_decryptable' });
    expect(counted).toBe(skipped);
    expect(total(points, METRICS.listingSkipped, { 'memvault.listing.skip_reason': 'folder_marker' })).toBeGreaterThan(
      0,
    );
    expect(
      total(points, METRICS.listingSkipped, { 'memvault.listing.skip_reason': 'not_decryptable' }),
    ).toBeGreaterThan(0);
  });

  it('file store: the same on real files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-planted-'));
    try {
      const store = await openStore(`file://${dir}`);
      try {
        await plantedObjectsScenario(store);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('plain codec: undecodable escapes and folder markers are skipped too', async () => {
    const store = new MemoryStore();
    const { logger, lines } = recordingLogger();
    const vault = await createVault({ store, encryption: false, logger });
    expect((await vault.run('u', { command: 'create', path: '/memories/d/ok.md', file_text: 'ok\n' })).isError).toBe(
      false,
    );
    const prefix = (await store.list('u/')).objects[0]!.key.replace(/ok\.md$/, '');
    await store.put(`${prefix}%zz`, new Uint8Array([1]));
    await store.put(prefix, new Uint8Array());
    await store.put(`${prefix}..`, new Uint8Array([1]));
    const view = await vault.run('u', { command: 'view', path: '/memories/d' });
    expect(view.isError).toBe(false);
    const shown = JSON.stringify(view.content);
    expect(shown).toContain('/memories/d/ok.md');
    expect(shown).not.toContain('%zz');
    expect(shown).not.toContain('/memories/d/..');
    expect(lines.filter((l) => /listing skipped/.test(l.message ?? '')).length).toBe(3);
    await vault.close();
  });
});
