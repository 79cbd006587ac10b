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
import type { ObjectStore } from '../../src/store/port.js';
import { isKeptVersionKey, snapshot, StoreWrapper, type StoreOp } from '../kit/stores.js';

const U = 'recreate-user@example.com';

/** Holds the first conditional PUT of a file (not of a kept version) once armed, until released. */
class HeldCreate extends StoreWrapper {
  private gate: Promise<void> | null = null;
  private open: () => void = () => undefined;
  private reached: () => void = () => undefined;
  /** Resolves once the held request has reached the store wrapper (its version number is taken). */
  holding: Promise<void> = Promise.resolve();

  arm(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
    this.holding = new Promise((resolve) => (this.reached = resolve));
  }

  release(): void {
    this.open();
  }

  protected override async step(op: StoreOp, key: string, conditional: boolean): Promise<void> {
    if (op !== 'put' || !conditional || isKeptVersionKey(key) || this.gate === null) return;
    const gate = this.gate;
    this.gate = null;
    this.reached();
    await gate;
  }
}

/** One way to end the name `/memories/d/f.md`, run to completion by another instance. */
const enders: Array<[string, Record<string, unknown>]> = [
  ['a delete of the file', { command: 'delete', path: '/memories/d/f.md' }],
  ['a delete of its directory', { command: 'delete', path: '/memories/d' }],
  ['a rename of the file away', { command: 'rename', old_path: '/memories/d/f.md', new_path: '/memories/moved.md' }],
  ['a rename of its directory away', { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' }],
];

async function textOf(vault: Vault, path: string): Promise<{ text?: string; error?: string }> {
  const result = await vault.run(U, { command: 'view', path });
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return result.isError ? { error: `${result.code}: ${content}` } : { text: content };
}

export function runRecreateRaceSuite(storeName: string, makeStore: () => Promise<ObjectStore>, options: VaultOptions = {}, deleteExactly = false): void {
  async function instances(): Promise<{ shared: ObjectStore; ender: Vault; creator: Vault; held: HeldCreate; fresh: () => Promise<Vault> }> {
    const shared = await makeStore();
    const wrap = () => new StoreWrapper(shared, { deleteExactly });
    const held = new HeldCreate(shared, { deleteExactly });
    // The files are written by an instance of their own: the ender knows of them only what it reads.
    const setup = await createVault({ store: wrap(), ...options });
    for (const name of ['f.md', 'g.md']) {
      expect(await setup.run(U, { command: 'create', path: `/memories/d/${name}`, file_text: `old ${name}\n` })).toMatchObject({ isError: false });
    }
    const ender = await createVault({ store: wrap(), ...options });
    const creator = await createVault({ store: held, ...options });
    return { shared, ender, creator, held, fresh: () => createVault({ store: wrap(), ...options }) };
  }

  describe(`a create under way while another instance ends the name (${storeName})`, () => {
    it.each(enders)('after %s, the create that lands reads as the current file, from every instance', async (_label, end) => {
      const { ender, creator, held, fresh } = await instances();
      held.arm();
      const creating = creator.run(U, { command: 'create', path: '/memories/d/f.md', file_text: 'recreated\n' });
      await held.holding; // the create has taken its number and sent its PUT
      expect(await ender.run(U, end)).toMatchObject({ isError: false });
      held.release();
      expect(await creating).toMatchObject({ isError: false });

      const third = await fresh();
      for (const vault of [creator, ender, third]) expect(await textOf(vault, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('recreated') });
      // It is a file like any other: edited, read, and its history ends with the edit.
      expect(await third.run(U, { command: 'str_replace', path: '/memories/d/f.md', old_str: 'recreated', new_str: 'edited' })).toMatchObject({
        isError: false,
      });
      expect(await textOf(ender, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('edited') });
      const { versions } = await third.history(U, '/memories/d/f.md');
      expect(versions[0]?.end).toBeUndefined();
      await Promise.all([ender.close(), creator.close(), third.close()]);
    });

    it.each(enders)(
      'after a create by a third instance and %s, all while the first create was under way, it lands and reads as the current file',
      async (_label, end) => {
        const { ender, creator, held, fresh } = await instances();
        const third = await fresh();
        // The name is free first; the held create takes its number, a third instance creates the name
        // (a later number) and the ender ends that file; then the held create lands.
        expect(await third.run(U, { command: 'delete', path: '/memories/d/f.md' })).toMatchObject({ isError: false });
        held.arm();
        const creating = creator.run(U, { command: 'create', path: '/memories/d/f.md', file_text: 'recreated\n' });
        await held.holding;
        await new Promise((resolve) => setTimeout(resolve, 5)); // a later clock number for the third's create
        expect(await third.run(U, { command: 'create', path: '/memories/d/f.md', file_text: 'third\n' })).toMatchObject({ isError: false });
        expect(await ender.run(U, end)).toMatchObject({ isError: false });
        held.release();
        expect(await creating).toMatchObject({ isError: false });
        for (const vault of [creator, ender, third]) expect(await textOf(vault, '/memories/d/f.md')).toEqual({ text: expect.stringContaining('recreated') });
        await Promise.all([ender.close(), creator.close(), third.close()]);
      },
    );

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
