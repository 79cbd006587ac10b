/**
 * A directory rename that runs longer than `limits.resumeAfterMs` keeps its journal alive (the
 * heartbeat in src/tool/commands/tree.ts): another instance asked for the very same rename meanwhile
 * must get the busy error, never take the live journal for a dead instance's and run it a second
 * time beside the first (the double run the history checker once caught: both answered success,
 * and one dropped the journal while the other still fenced).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore, PutOptions } from '../../src/store/port.js';
import { StoreWrapper } from '../kit/stores.js';
import { textAt } from '../kit/vault.js';

const U = 'heartbeat-user';
const masterKey = randomBytes(32).toString('base64');
const RESUME_AFTER_MS = 400;
const FILES = 24;
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** One instance's slow network: every request waits `delayMs`; the first PUT's time is kept (the rename's journal). */
class SlowStore extends StoreWrapper {
  firstPutAt: number | undefined;
  puts = 0;
  constructor(
    inner: ObjectStore,
    private readonly delayMs: number,
  ) {
    super(inner);
  }
  protected override async step(): Promise<void> {
    await new Promise((r) => setTimeout(r, this.delayMs));
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const out = await super.put(key, body, options);
    this.firstPutAt ??= Date.now();
    this.puts += 1;
    return out;
  }
  override async close(): Promise<void> {}
}

const stores: Array<{ name: string; make: () => Promise<ObjectStore> }> = [
  { name: 'memory store', make: async () => new MemoryStore() },
  {
    name: 'file store',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-heartbeat-'));
      dirs.push(dir);
      return new FileStore(dir);
    },
  },
];

async function open(store: ObjectStore): Promise<Vault> {
  return createVault({ store, encryption: { masterKey }, limits: { resumeAfterMs: RESUME_AFTER_MS } });
}

/** FILES files under /memories/src, each created through the tool. */
async function createSource(vault: Vault): Promise<void> {
  for (let i = 0; i < FILES; i++)
    expect(
      await vault.run(U, { command: 'create', path: `/memories/src/f${i}.md`, file_text: `f${i}\n` }),
    ).toMatchObject({ isError: false });
}

/** Every file of the rename at /memories/dst, whole, and none left at /memories/src. */
async function expectMovedWhole(vault: Vault): Promise<void> {
  for (let i = 0; i < FILES; i++) {
    expect(await textAt(vault, U, `/memories/dst/f${i}.md`), `f${i}`).toBe(`f${i}\n`);
    expect(await textAt(vault, U, `/memories/src/f${i}.md`), `f${i}`).toBeNull();
  }
}

describe.each(stores)('a directory rename longer than resumeAfterMs ($name)', ({ make }) => {
  it('keeps its journal alive: the same rename asked of another instance meanwhile is told it is busy, and runs once', async () => {
    const shared = await make();
    const fast = await open(shared);
    await createSource(fast);
    // The first instance's requests each take 100 ms: its rename of 24 files runs well over a second.
    const slowStore = new SlowStore(shared, 100);
    const slow = await open(slowStore);
    await slow.run(U, { command: 'view', path: '/memories' }); // its keys are loaded before the clock starts
    slowStore.firstPutAt = undefined;
    let firstDone = false;
    const first = slow
      .run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' })
      .finally(() => (firstDone = true));
    // Wait until its journal has existed for 1.5 x resumeAfterMs: without a heartbeat it would look idle (a dead instance's).
    while (slowStore.firstPutAt === undefined || Date.now() - slowStore.firstPutAt < 1.5 * RESUME_AFTER_MS)
      await new Promise((r) => setTimeout(r, 20));
    expect(firstDone, 'the first rename is still running when the second is asked').toBe(false);
    const second = await fast.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    expect(firstDone, 'the second was answered while the first still ran').toBe(false);
    expect(second, JSON.stringify(second.content)).toMatchObject({ isError: true, code: 'CONFLICT' });
    expect(String(second.content)).toContain('/memories/src');
    const answered = await first;
    expect(answered, JSON.stringify(answered.content)).toMatchObject({ isError: false });
    await expectMovedWhole(fast);
    // The journal is gone once the rename is done: a rename back starts at once, from either instance.
    expect(
      await fast.run(U, { command: 'rename', old_path: '/memories/dst', new_path: '/memories/src' }),
    ).toMatchObject({ isError: false });
    await slow.close();
    await fast.close();
  });

  it('a run whose journal another instance claimed (it stalled past resumeAfterMs) stops before its next file and leaves the journal to the claimer, which finishes', async () => {
    const shared = await make();
    const fast = await open(shared);
    await createSource(fast);
    // The first instance stalls (every request 100 ms, and then one of 2 s right after its journal
    // is written): long enough for the other instance to find the journal idle and claim it.
    let stall = false;
    class StallingStore extends SlowStore {
      protected override async step(): Promise<void> {
        await super.step();
        if (stall) {
          stall = false;
          await new Promise((r) => setTimeout(r, 2_000));
        }
      }
    }
    const slowStore = new StallingStore(shared, 100);
    const slow = await open(slowStore);
    await slow.run(U, { command: 'view', path: '/memories' });
    slowStore.firstPutAt = undefined;
    const first = slow.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    while (slowStore.firstPutAt === undefined) await new Promise((r) => setTimeout(r, 5));
    stall = true;
    // The stalled run's beats are held up too. The other instance meets the journal (any command of
    // the user looks), and once it has seen it silent for resumeAfterMs by its own clock it claims it.
    await new Promise((r) => setTimeout(r, 100));
    expect(await fast.run(U, { command: 'view', path: '/memories' })).toMatchObject({ isError: false });
    await new Promise((r) => setTimeout(r, RESUME_AFTER_MS + 200));
    const claimer = await fast.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    expect(claimer, JSON.stringify(claimer.content)).toMatchObject({ isError: false });
    const stalled = await first;
    // The stalled run learns of the claim at its next beat and stops (the busy error), or it had
    // nothing left to do; either way every file is in exactly one place, whole.
    if (stalled.isError) expect(stalled).toMatchObject({ code: 'CONFLICT' });
    await expectMovedWhole(fast);
    await slow.close();
    await fast.close();
  });
});
