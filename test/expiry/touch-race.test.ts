/**
 * A read's touch racing another instance's edit, on the memory and the file store: the edit wins whole, the file opens, the TTL-class tag stays. The same cases run on radosgw in
 * test/s3/touch-race.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { editHeldPastATouch, touchesAgainstInserts, touchHeldPastAnEdit, type TagsOf } from '../kit/touch-race.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const stores: Record<string, () => Promise<{ store: ObjectStore; tagsOf: TagsOf }>> = {
  memory: async () => {
    const store = new MemoryStore();
    return { store, tagsOf: async (key) => store.tagsOf(key) };
  },
  file: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memvault-touch-'));
    dirs.push(dir);
    const store = await FileStore.open(dir, { durable: false });
    return { store, tagsOf: (key) => store.tagsOf(key) };
  },
};

for (const [label, make] of Object.entries(stores)) {
  describe(`a touch racing an edit (${label} store)`, () => {
    it('a touch held until an insert landed loses: the insert stays whole', async () => {
      const { store, tagsOf } = await make();
      await touchHeldPastAnEdit(store, tagsOf);
    });

    it('an insert held until a touch landed still lands whole', async () => {
      const { store, tagsOf } = await make();
      await editHeldPastATouch(store, tagsOf);
    });

    it('20 files, 3 rounds of touching reads against inserts: nothing lost, every file opens', async () => {
      const { store, tagsOf } = await make();
      await touchesAgainstInserts(store, tagsOf, 20, 3);
    });
  });
}
