import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { withRequestCounter } from '../../src/store/accounting.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreWrapper } from '../kit/stores.js';

/**
 * Requests per command, pinned. The S3 adapter counts the same requests from its client's
 * middleware stack (test/s3 pins them there too). Extras over the minimum are justified in the
 * README ("Requests per command"): S3 has no directories, so a write that creates a name checks
 * after it lands (src/vault/names.ts: "write, then check", so that two instances never make one name
 * a file and a directory) that nothing lies below it (one LIST of one key) and that no ancestor is a
 * file (one HEAD per ancestor). Nothing is looked at before the write: that check refuses a
 * directory at the path or a file above it too. A write by the model also reads the user's
 * settings (pause memory), once, just before its first change.
 */
/** A write by the model also reads the user's settings (pause memory, src/pipeline/pause.ts): one GET. */
const write = (counts: Record<string, number>): Record<string, number> => ({
  ...counts,
  GET: (counts['GET'] ?? 0) + 1,
});

describe('requests per command', () => {
  it('costs what the README says (history off: what history adds is pinned in test/s3/requests.test.ts)', async () => {
    const vault = await createVault({
      store: new MemoryStore(),
      history: false,
      encryption: { masterKey: Buffer.alloc(32, 9).toString('base64') },
    });
    const u = 'counted-user';
    await vault.run(u, { command: 'view', path: '/memories' }); // loads (creates) the user's key
    const count = async (input: Record<string, unknown>) => {
      const counter: Record<string, number> = {};
      const r = await withRequestCounter(counter, () => vault.run(u, input));
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
      return counter;
    };
    // The user's first write in a process lists their files once, for the quota's usage.
    expect(await count({ command: 'create', path: '/memories/d/x.md', file_text: 'a\nb\n' })).toEqual(
      write({
        LIST: 2,
        HEAD: 1,
        PUT: 1,
      }),
    );
    expect(await count({ command: 'view', path: '/memories/d/x.md' })).toEqual({ GET: 1 });
    expect(await count({ command: 'view', path: '/memories' })).toEqual({ LIST: 1 });
    expect(await count({ command: 'view', path: '/memories/d' })).toEqual({ GET: 1, LIST: 1 });
    // create: the PUT and its check; the quota admits it as a new file without a HEAD.
    expect(await count({ command: 'create', path: '/memories/y.md', file_text: 'y' })).toEqual(
      write({ LIST: 1, PUT: 1 }),
    );
    expect(await count({ command: 'create', path: '/memories/d/z.md', file_text: 'z' })).toEqual(
      write({
        LIST: 1,
        HEAD: 1,
        PUT: 1,
      }),
    );
    // Overwriting: the create-only PUT fails (412, counted); the HEAD sees the file (its size settles
    // the quota) and the PUT replaces exactly it. A name that is a file already: no check after.
    expect(await count({ command: 'create', path: '/memories/d/z.md', file_text: 'z2' })).toEqual(
      write({ HEAD: 1, PUT: 2 }),
    );
    expect(await count({ command: 'str_replace', path: '/memories/d/x.md', old_str: 'a', new_str: 'A' })).toEqual(
      write({
        GET: 1,
        PUT: 1,
      }),
    );
    expect(await count({ command: 'insert', path: '/memories/d/x.md', insert_line: 0, insert_text: 'i' })).toEqual(
      write({
        GET: 1,
        PUT: 1,
      }),
    );
    // rename: the source read and, in parallel, a LIST below it (a name that is both moves whole),
    // the copy and its check, then the source fenced: on this store, which offers deleteExactly,
    // by its conditional delete (on S3, a "moved" marker PUT and its clean-up: below).
    expect(await count({ command: 'rename', old_path: '/memories/y.md', new_path: '/memories/y2.md' })).toEqual(
      write({
        GET: 1,
        LIST: 2,
        PUT: 1,
        DELETE: 1,
      }),
    );
    // delete: HEAD and a LIST below the name, in parallel (a name that is both loses both halves);
    // then each file fenced, here by its conditional delete.
    expect(await count({ command: 'delete', path: '/memories/y2.md' })).toEqual(write({ HEAD: 1, LIST: 1, DELETE: 1 }));
    expect(await count({ command: 'delete', path: '/memories/d' })).toEqual(write({ HEAD: 1, LIST: 1, DELETE: 2 }));
    // A directory view lists 1,000 keys per request.
    const files = await vault.files(u);
    for (let b = 0; b < 1500; b += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => files.write(`/memories/many/f${b + i}.md`, new Uint8Array([1]))),
      );
    expect(await count({ command: 'view', path: '/memories' })).toEqual({ LIST: 2 });
    await vault.close();
  });

  it("reads the user's settings (pause memory) only for a model command about to write", async () => {
    const vault = await createVault({ store: new MemoryStore(), history: false });
    const u = 'settings-user';
    await vault.run(u, { command: 'create', path: '/memories/a.md', file_text: 'a\n' });
    const counted = async (input: Record<string, unknown>, options?: { writer: 'person' }) => {
      const counter: Record<string, number> = {};
      const result = await withRequestCounter(counter, () => vault.run(u, input, options));
      return { code: result.code, counter };
    };
    // No match: the command ends before its first change, so the settings are never read.
    expect(await counted({ command: 'str_replace', path: '/memories/a.md', old_str: 'zz', new_str: 'y' })).toEqual({
      code: 'NO_MATCH',
      counter: { GET: 1 },
    });
    // The person's own write is never paused: no read of the settings.
    const edit = { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' };
    expect(await counted(edit, { writer: 'person' })).toEqual({ code: undefined, counter: { GET: 1, PUT: 1 } });
    expect(await counted({ ...edit, old_str: 'b', new_str: 'c' })).toEqual({
      code: undefined,
      counter: write({ GET: 1, PUT: 1 }),
    });
    await vault.close();
  });

  it('on a store like S3 (no deleteExactly) a fence is a marker PUT and its clean-up', async () => {
    const vault = await createVault({ store: new StoreWrapper(new MemoryStore()), history: false });
    const u = 'marker-user';
    const count = async (input: Record<string, unknown>) => {
      const counter: Record<string, number> = {};
      const r = await withRequestCounter(counter, () => vault.run(u, input));
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
      return counter;
    };
    for (const name of ['a', 'b', 'c'])
      await count({ command: 'create', path: `/memories/${name}.md`, file_text: name });
    expect(await count({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/a2.md' })).toEqual(
      write({
        GET: 1,
        LIST: 2,
        PUT: 2,
        DELETE: 1,
      }),
    );
    expect(await count({ command: 'delete', path: '/memories/b.md' })).toEqual(
      write({ HEAD: 1, LIST: 1, PUT: 1, DELETE: 1 }),
    );
    await vault.close();
  });
});
