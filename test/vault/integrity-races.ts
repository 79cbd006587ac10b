/**
 * An integrity error means tampering or damage, never a race: a read whose
 * GET and history LIST meet another instance's write, delete or rename half-way answers what that
 * command left (the new content, not found), and so does a read meeting a create that landed below
 * a number kept meanwhile and is about to number itself again; an older object put back in place
 * of a file is still refused. Then a storm of creates, deletes, renames and views of three names
 * from three instances: no INTEGRITY answer at all. `makeStore` gives a fresh empty store (or
 * prefix) per call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createVault, type Vault, type VaultOptions } from '../../src/index.js';
import type { ListOptions, ListPage, ObjectStore, StoredObject } from '../../src/store/port.js';
import { seededRandom } from '../kit/random.js';
import { HookedStore, isKeptVersionKey, snapshot, StoreWrapper } from '../kit/stores.js';

const U = 'integrity-race-user@example.com';

/** A LIST of one file's kept versions (`u/{uid}/v/{names}/@`): what a read's freshness check sends. */
const isVersionsListing = (prefix: string): boolean => /^u\/[^/]+\/v\/.+\/@$/.test(prefix);

/**
 * A reader's store: `holdNextRead()` holds the next LIST of a file's versions until released, and
 * says when it is held and the GET sent beside it has answered (the read has seen the file as it
 * was). `listings(n)` resolves once n version LISTs were sent (a confirming look is the second).
 */
class HeldReads extends StoreWrapper {
  private hold: { reached: () => void; gate: Promise<void>; got: () => void } | undefined;
  private lists = 0;
  private readonly waiting: Array<{ n: number; resolve: () => void }> = [];

  holdNextRead(): { ready: Promise<void>; release: () => void } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    let got!: () => void;
    const ready = Promise.all([new Promise<void>((r) => (reached = r)), new Promise<void>((r) => (got = r))]).then(
      () => undefined,
    );
    this.hold = { reached, gate, got };
    return { ready, release };
  }

  listings(n: number): Promise<void> {
    return n <= this.lists ? Promise.resolve() : new Promise((resolve) => this.waiting.push({ n, resolve }));
  }

  override async get(key: string): Promise<StoredObject | null> {
    const hold = this.hold; // taken by the LIST sent beside this GET, before the GET answers
    const object = await super.get(key);
    if (!isKeptVersionKey(key)) hold?.got();
    return object;
  }

  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    if (!isVersionsListing(prefix)) return super.list(prefix, options);
    this.lists += 1;
    for (const w of this.waiting) if (w.n <= this.lists) w.resolve();
    const hold = this.hold;
    if (hold) {
      this.hold = undefined;
      hold.reached();
      await hold.gate;
    }
    return super.list(prefix, options);
  }
}

/** A store whose every request waits a random 0 to 2 ms first (seeded): the instances' requests interleave. */
class Jittered extends StoreWrapper {
  constructor(
    inner: ObjectStore,
    private readonly random: () => number,
  ) {
    super(inner);
  }
  protected override async step(): Promise<void> {
    await sleep(Math.floor(this.random() * 5));
  }
}

async function answer(vault: Vault, command: Record<string, unknown>): Promise<{ text?: string; code?: string }> {
  const result = await vault.run(U, command);
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return result.isError ? { code: `${result.code}: ${content}` } : { text: content };
}

/** Another instance's command that changes `/memories/f.md` while a read of it is half-way, and what the read must then answer. */
const changes: Array<[string, Record<string, unknown>, RegExp]> = [
  ['an edit', { command: 'str_replace', path: '/memories/f.md', old_str: 'first', new_str: 'edited' }, /edited/],
  ['an overwrite', { command: 'create', path: '/memories/f.md', file_text: 'overwritten\n' }, /overwritten/],
  ['a delete', { command: 'delete', path: '/memories/f.md' }, /^NOT_FOUND/],
  ['a rename away', { command: 'rename', old_path: '/memories/f.md', new_path: '/memories/moved.md' }, /^NOT_FOUND/],
];

export function runIntegrityRaceSuite(
  storeName: string,
  makeStore: () => Promise<ObjectStore>,
  options: VaultOptions = {},
): void {
  async function instances(): Promise<{
    shared: ObjectStore;
    reader: Vault;
    reads: HeldReads;
    writer: Vault;
    fresh: () => Promise<Vault>;
  }> {
    const shared = await makeStore();
    const setup = await createVault({ store: new StoreWrapper(shared), ...options });
    expect(await answer(setup, { command: 'create', path: '/memories/f.md', file_text: 'first\n' })).toHaveProperty(
      'text',
    );
    const reads = new HeldReads(shared);
    const reader = await createVault({ store: reads, ...options });
    const writer = await createVault({ store: new StoreWrapper(shared), ...options });
    return { shared, reader, reads, writer, fresh: () => createVault({ store: new StoreWrapper(shared), ...options }) };
  }

  describe(`a read that meets another instance's command half-way (${storeName})`, () => {
    it.each(changes)(
      'after %s lands between its GET and its history LIST, the read answers what it left',
      async (_label, change, expected) => {
        const { reader, reads, writer } = await instances();
        const hold = reads.holdNextRead();
        const reading = answer(reader, { command: 'view', path: '/memories/f.md' });
        await hold.ready; // the GET saw the file as it was; its LIST has not gone out
        expect(await answer(writer, change)).toHaveProperty('text');
        hold.release();
        const seen = await reading;
        expect(seen.code ?? seen.text).toMatch(expected);
        await Promise.all([reader.close(), writer.close()]);
      },
    );

    it("a rename whose read of its source meets another instance's edit moves the edited file", async () => {
      const { reader, reads, writer, fresh } = await instances();
      const hold = reads.holdNextRead();
      const renaming = answer(reader, { command: 'rename', old_path: '/memories/f.md', new_path: '/memories/g.md' });
      await hold.ready;
      expect(await answer(writer, changes[0]![1])).toHaveProperty('text');
      hold.release();
      expect(await renaming).toHaveProperty('text');
      const third = await fresh();
      expect((await answer(third, { command: 'view', path: '/memories/g.md' })).text).toMatch(/edited/);
      await Promise.all([reader.close(), writer.close(), third.close()]);
    });

    it('a read that meets a create landed below a tombstone, before it numbers itself again, answers the create', async () => {
      const { reader, reads, writer, fresh } = await instances();
      const shared = reads.inner;
      const held = new HookedStore(shared);
      const creator = await createVault({ store: held, ...options });
      // The name is free; the held create takes its number; another instance makes the name (a
      // later number) and ends it (a tombstone above the held create's number).
      expect(await answer(writer, { command: 'delete', path: '/memories/f.md' })).toHaveProperty('text');
      let releaseCreate!: () => void;
      const createGate = new Promise<void>((resolve) => (releaseCreate = resolve));
      const createHeld = new Promise<void>((reached) =>
        held.arm('put', 1, { fail: false, hook: async () => (reached(), createGate) }),
      );
      const creating = answer(creator, { command: 'create', path: '/memories/f.md', file_text: 'recreated\n' });
      await createHeld;
      await sleep(5); // a later clock number for the other create
      expect(
        await answer(writer, { command: 'create', path: '/memories/f.md', file_text: 'between\n' }),
      ).toHaveProperty('text');
      expect(await answer(writer, { command: 'delete', path: '/memories/f.md' })).toHaveProperty('text');
      // The held create lands below the tombstone; its renumbering PUT is held until the reader has
      // seen the file below its history and looked again.
      let releaseRenumber!: () => void;
      const renumberGate = new Promise<void>((resolve) => (releaseRenumber = resolve));
      const renumberHeld = new Promise<void>((reached) =>
        held.arm('put', 1, { fail: false, hook: async () => (reached(), renumberGate) }),
      );
      releaseCreate();
      await renumberHeld;
      const reading = answer(reader, { command: 'view', path: '/memories/f.md' });
      await Promise.race([reads.listings(2), reading]); // the read's own LIST and its confirming look (or its answer)
      releaseRenumber();
      expect(await creating).toHaveProperty('text');
      expect((await reading).text).toMatch(/recreated/);
      const third = await fresh();
      expect((await answer(third, { command: 'view', path: '/memories/f.md' })).text).toMatch(/recreated/);
      await Promise.all([reader.close(), writer.close(), creator.close(), third.close()]);
    });

    it('an older object put back in place of the file (a raw PUT) is still INTEGRITY, from a fresh and a warm instance', async () => {
      const { shared, reader, writer, fresh } = await instances();
      // The user's one file (history and key records live outside f/).
      const files = [...(await snapshot(shared)).keys()].filter((k) => /^u\/[^/]+\/f\//.test(k));
      expect(files).toHaveLength(1);
      const key = files[0]!;
      const old = (await shared.get(key))!;
      expect(await answer(reader, { command: 'view', path: '/memories/f.md' })).toHaveProperty('text');
      expect(await answer(writer, changes[0]![1])).toHaveProperty('text');
      await shared.put(key, old.body, { metadata: old.metadata });
      const third = await fresh();
      for (const vault of [third, reader])
        expect((await answer(vault, { command: 'view', path: '/memories/f.md' })).code).toMatch(
          /^INTEGRITY: .*older version of the file than its history records/,
        );
      await Promise.all([reader.close(), writer.close(), third.close()]);
    });
  });

  describe(`a storm of creates, deletes, renames and views of three names from three instances (${storeName})`, () => {
    it('answers no command with INTEGRITY', async () => {
      const shared = await makeStore();
      const random = seededRandom(37);
      const vaults = await Promise.all(
        [0, 1, 2].map(() => createVault({ store: new Jittered(shared, random), ...options })),
      );
      const names = ['/memories/a.md', '/memories/b.md', '/memories/c.md'];
      const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
      const commandOf = (n: number): Record<string, unknown> => {
        const roll = random();
        if (roll < 0.3) return { command: 'create', path: pick(names), file_text: `text ${n}\n` };
        if (roll < 0.5) return { command: 'delete', path: pick(names) };
        if (roll < 0.7) return { command: 'rename', old_path: pick(names), new_path: pick(names) };
        return { command: 'view', path: pick(names) };
      };
      const codes = new Map<string, number>();
      let answered = 0;
      const worker = async (vault: Vault, n: number): Promise<void> => {
        for (let i = 0; i < 25; i++) {
          const result = await answer(vault, commandOf(n * 1000 + i));
          answered += 1;
          const code = result.code?.split(':')[0] ?? 'ok';
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      };
      // Four commands at a time per instance (a turn's tool calls run side by side), 25 each.
      await Promise.all(vaults.flatMap((vault, v) => [0, 1, 2, 3].map((w) => worker(vault, v * 4 + w))));
      expect(answered).toBe(300);
      expect(codes.get('ok') ?? 0).toBeGreaterThan(100); // a storm that did its work, not one refused throughout
      expect(codes.get('INTEGRITY') ?? 0, JSON.stringify(Object.fromEntries(codes))).toBe(0);
      await Promise.all(vaults.map((v) => v.close()));
    }, 120_000);
  });
}
