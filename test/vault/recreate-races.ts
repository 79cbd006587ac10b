/**
 * A name ended by one instance (a delete or a rename away, of the file or of its directory) and
 * created again by another instance whose create was already under way: the create took its
 * version number before the end and lands after it. The file it made must read as the current
 * file (never as a put-back older than the history), on every store and with either kind of fence
 * (docs/versions.md, "Sequence numbers"). `makeStore` gives a fresh empty store (or prefix) per
 * call; with `deleteExactly` the wrappers offer the store's conditional delete, so the vault fences
 * by it instead of a marker.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault, type VaultOptions } from '../../src/index.js';
import type { ObjectStore, PutOptions } from '../../src/store/port.js';
import { HookedStore, isKeptVersionKey, snapshot, StoreWrapper } from '../kit/stores.js';

const U = 'recreate-user@example.com';

/**
 * Holds the next PUT of a file (not of a kept version) the store sees, until released: the create
 * sent it, so it has taken its version number. `holding` resolves once it is held.
 */
function holdNextFilePut(store: HookedStore): { holding: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const holding = new Promise<void>((reached) =>
    store.arm('put', 1, {
      fail: false,
      hook: () => {
        reached();
        return gate;
      },
    }),
  );
  return { holding, release };
}

/** One way to end the name `/memories/d/f.md`, run to completion by another instance, and how many files it ends. */
const enders: Array<[string, Record<string, unknown>, number]> = [
  ['a delete of the file', { command: 'delete', path: '/memories/d/f.md' }, 1],
  ['a delete of its directory', { command: 'delete', path: '/memories/d' }, 2],
  ['a rename of the file away', { command: 'rename', old_path: '/memories/d/f.md', new_path: '/memories/moved.md' }, 1],
  ['a rename of its directory away', { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' }, 2],
];

/**
 * Holds every tombstone PUT (a kept version of 0 bytes: the end of a file, written after its
 * fence) until released; `held(n)` resolves once n are held, i.e. n fences have landed.
 */
class HeldTombstones extends StoreWrapper {
  private count = 0;
  private readonly waiting: Array<{ n: number; resolve: () => void }> = [];
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  held(n: number): Promise<void> {
    return n <= this.count ? Promise.resolve() : new Promise((resolve) => this.waiting.push({ n, resolve }));
  }

  release(): void {
    this.open();
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    if (isKeptVersionKey(key) && body.byteLength === 0) {
      this.count += 1;
      for (const w of this.waiting) if (w.n <= this.count) w.resolve();
      await this.gate;
    }
    return super.put(key, body, options);
  }
}

/**
 * What makes the name again while it is ended: a create, or a rename onto it (its copy, numbered by
 * the clock like a create). Either is held at its PUT of the file.
 */
const makers: Array<[string, Record<string, unknown>]> = [
  ['a create', { command: 'create', path: '/memories/d/f.md', file_text: 'recreated\n' }],
  ['a rename onto it', { command: 'rename', old_path: '/memories/src.md', new_path: '/memories/d/f.md' }],
];

async function textOf(vault: Vault, path: string): Promise<{ text?: string; error?: string }> {
  const result = await vault.run(U, { command: 'view', path });
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return result.isError ? { error: `${result.code}: ${content}` } : { text: content };
}

export function runRecreateRaceSuite(
  storeName: string,
  makeStore: () => Promise<ObjectStore>,
  options: VaultOptions = {},
  deleteExactly = false,
): void {
  async function instances(endersStore: 'plain' | 'tombstones held' = 'plain'): Promise<{
    shared: ObjectStore;
    ender: Vault;
    creator: Vault;
    held: HookedStore;
    tombstones: HeldTombstones;
    fresh: () => Promise<Vault>;
  }> {
    const shared = await makeStore();
    const wrap = () => new StoreWrapper(shared, { deleteExactly });
    const held = new HookedStore(shared, { deleteExactly });
    // The files are written by an instance of their own: the ender knows of them only what it reads.
    const setup = await createVault({ store: wrap(), ...options });
    for (const name of ['f.md', 'g.md']) {
      expect(
        await setup.run(U, { command: 'create', path: `/memories/d/${name}`, file_text: `old ${name}\n` }),
      ).toMatchObject({ isError: false });
    }
    expect(await setup.run(U, { command: 'create', path: '/memories/src.md', file_text: 'recreated\n' })).toMatchObject(
      { isError: false },
    );
    const tombstones = new HeldTombstones(shared, { deleteExactly });
    const ender = await createVault({ store: endersStore === 'tombstones held' ? tombstones : wrap(), ...options });
    const creator = await createVault({ store: held, ...options });
    return { shared, ender, creator, held, tombstones, fresh: () => createVault({ store: wrap(), ...options }) };
  }

  describe.each(makers)(`%s under way while another instance ends the name (${storeName})`, (_maker, making) => {
    it.each(enders)(
      'after %s, the create that lands reads as the current file, from every instance',
      async (_label, end) => {
        const { ender, creator, held, fresh } = await instances();
        const hold = holdNextFilePut(held);
        const creating = creator.run(U, making);
        await hold.holding; // the create has taken its number and sent its PUT
        expect(await ender.run(U, end)).toMatchObject({ isError: false });
        hold.release();
        expect(await creating).toMatchObject({ isError: false });

        const third = await fresh();
        for (const vault of [creator, ender, third])
          expect(await textOf(vault, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('recreated') });
        // It is a file like any other: edited, read, and its history ends with the edit.
        expect(
          await third.run(U, {
            command: 'str_replace',
            path: '/memories/d/f.md',
            old_str: 'recreated',
            new_str: 'edited',
          }),
        ).toMatchObject({
          isError: false,
        });
        expect(await textOf(ender, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('edited') });
        const { versions } = await third.history(U, '/memories/d/f.md');
        expect(versions[0]?.end).toBeUndefined();
        await Promise.all([ender.close(), creator.close(), third.close()]);
      },
    );

    it.each(enders)(
      'after %s whose tombstones land only once the create has answered, it reads as the current file',
      async (_label, end, ended) => {
        // The create lands after the fence and looks at the history's newest number before the
        // tombstone is there: only the tombstone's own number keeps it below the create's.
        const { ender, creator, held, tombstones, fresh } = await instances('tombstones held');
        const hold = holdNextFilePut(held);
        const creating = creator.run(U, making);
        await hold.holding;
        const ending = ender.run(U, end);
        await tombstones.held(ended); // every fence has landed
        hold.release();
        expect(await creating).toMatchObject({ isError: false });
        tombstones.release();
        expect(await ending).toMatchObject({ isError: false });
        const third = await fresh();
        for (const vault of [creator, ender, third])
          expect(await textOf(vault, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('recreated') });
        await Promise.all([ender.close(), creator.close(), third.close()]);
      },
    );

    it.each(enders)(
      'after a create by a third instance and %s, all while the first create was under way, it lands and reads as the current file',
      async (_label, end) => {
        const { ender, creator, held, fresh } = await instances();
        const third = await fresh();
        // The name is free first; the held create takes its number, a third instance creates the name
        // (a later number) and the ender ends that file; then the held create lands.
        expect(await third.run(U, { command: 'delete', path: '/memories/d/f.md' })).toMatchObject({ isError: false });
        const hold = holdNextFilePut(held);
        const creating = creator.run(U, making);
        await hold.holding;
        await new Promise((resolve) => setTimeout(resolve, 5)); // a later clock number for the third's create
        expect(await third.run(U, { command: 'create', path: '/memories/d/f.md', file_text: 'third\n' })).toMatchObject(
          { isError: false },
        );
        expect(await ender.run(U, end)).toMatchObject({ isError: false });
        hold.release();
        expect(await creating).toMatchObject({ isError: false });
        for (const vault of [creator, ender, third])
          expect(await textOf(vault, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('recreated') });
        await Promise.all([ender.close(), creator.close(), third.close()]);
      },
    );
  });

  describe(`the end of a name (${storeName})`, () => {
    it.each(enders)('after %s, the ended version put back is still refused', async (_label, end) => {
      const { shared, ender, creator, fresh } = await instances();
      const before = await snapshot(shared);
      const kept = new Map<string, Awaited<ReturnType<ObjectStore['get']>>>();
      for (const key of before.keys()) if (!isKeptVersionKey(key)) kept.set(key, await shared.get(key));
      expect(await ender.run(U, end)).toMatchObject({ isError: false });
      // Put every file object the command ended back as it was (a bucket writer's rollback of it).
      const after = await snapshot(shared);
      let putBack = 0;
      for (const [key, object] of kept) {
        if (object === null || after.get(key) === object.etag) continue;
        await shared.put(key, object.body, { metadata: object.metadata });
        putBack += 1;
      }
      expect(putBack).toBeGreaterThan(0);
      const third = await fresh();
      const seen = await textOf(third, '/memories/d/f.md');
      expect(seen.error).toMatch(/^INTEGRITY: .*older version of the file than its history records/);
      await Promise.all([ender.close(), creator.close(), third.close()]);
    });
  });
}
