/**
 * A read's touch racing another instance's edit, on any store: two vaults on one
 * store, the reader's clock two days ahead so every read touches the file it read. Each case holds
 * one side's write until the other's has landed, then checks what the next reader of a fresh vault
 * sees: the file opens, holds every acknowledged edit, and keeps its TTL-class tag.
 */
import { expect } from 'vitest';
import { DAY_MS, TTL_CLASS_TAG_KEY } from '../../src/expiry/config.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { isKeptVersionKey, StoreWrapper, type StoreOp } from './stores.js';
import { callTool } from './vault.js';

const masterKey = Buffer.alloc(32, 7).toString('base64');
const USER = 'toucher';

/** The tags a store holds for `key`, however the adapter shows them. */
export type TagsOf = (key: string) => Promise<Record<string, string> | undefined>;

/** The store as one of several vaults on it sees it: closing that vault leaves it open for the others. */
class SharedStore extends StoreWrapper {
  override async close(): Promise<void> {}
}

/**
 * Runs `hook` before the first write of a file's current object (a PUT or a COPY: whichever way a
 * touch writes), once, then lets that write go on.
 */
class HoldFirstWrite extends StoreWrapper {
  fired = false;
  constructor(
    inner: ObjectStore,
    private hook: (() => Promise<void>) | undefined = undefined,
  ) {
    super(inner, { deleteExactly: true });
  }
  arm(hook: () => Promise<void>): void {
    this.hook = hook;
  }
  protected override async step(op: StoreOp, key: string): Promise<void> {
    if ((op !== 'put' && op !== 'copy') || isKeptVersionKey(key) || !key.includes('/f/') || !this.hook) return;
    const hook = this.hook;
    this.hook = undefined;
    this.fired = true;
    await hook();
  }
}

function shared(store: ObjectStore): StoreWrapper {
  return new SharedStore(store, { deleteExactly: true });
}

async function vaultOf(store: ObjectStore, daysAhead: number): Promise<Vault> {
  const now = (): Date => new Date(Date.now() + daysAhead * DAY_MS);
  return createVault({
    store: store instanceof StoreWrapper ? store : shared(store),
    encryption: { masterKey },
    expiry: { ttlDays: 30, now },
    pii: false,
  });
}

async function ok(vault: Vault, input: Record<string, unknown>): Promise<string> {
  const result = await callTool(vault, USER, input);
  expect(result.isError, JSON.stringify(result.content)).toBe(false);
  return String(result.content);
}

async function fileKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, 'u/')) if (o.key.includes('/f/')) keys.push(o.key);
  return keys;
}

/** What a fresh vault reads back: every line of `path`, and every current file's TTL-class tag. */
async function expectWhole(store: ObjectStore, tagsOf: TagsOf, path: string, lines: string[]): Promise<void> {
  const fresh = await vaultOf(store, 0);
  try {
    const shown = await ok(fresh, { command: 'view', path });
    for (const line of lines) expect(shown).toContain(line);
    for (const key of await fileKeys(store))
      expect(await tagsOf(key)).toMatchObject({ [TTL_CLASS_TAG_KEY]: 'default' });
  } finally {
    await fresh.close();
  }
}

/**
 * The touch goes out first and is held until the other instance's insert has landed: the touch then
 * loses (its version is gone), and the insert stays whole.
 */
export async function touchHeldPastAnEdit(store: ObjectStore, tagsOf: TagsOf): Promise<void> {
  const path = '/memories/held-touch.md';
  const writer = await vaultOf(store, 0);
  const hooked = new HoldFirstWrite(shared(store));
  const reader = await vaultOf(hooked, 2);
  try {
    await ok(writer, { command: 'create', path, file_text: 'first\n' });
    hooked.arm(() =>
      ok(writer, { command: 'insert', path, insert_line: 1, insert_text: 'inserted' }).then(() => undefined),
    );
    expect(await ok(reader, { command: 'view', path })).toContain('first');
    expect(hooked.fired).toBe(true);
    await expectWhole(store, tagsOf, path, ['first', 'inserted']);
  } finally {
    await reader.close();
    await writer.close();
  }
}

/**
 * The edit reads first and its write is held until the reader's touch has landed: the edit then
 * meets the touched version and still lands whole (retrying if the touch changed the ETag).
 */
export async function editHeldPastATouch(store: ObjectStore, tagsOf: TagsOf): Promise<void> {
  const path = '/memories/held-edit.md';
  const hooked = new HoldFirstWrite(shared(store));
  const writer = await vaultOf(hooked, 0);
  const reader = await vaultOf(store, 2);
  try {
    await ok(writer, { command: 'create', path, file_text: 'first\n' });
    hooked.arm(() => ok(reader, { command: 'view', path }).then(() => undefined));
    await ok(writer, { command: 'insert', path, insert_line: 1, insert_text: 'inserted' });
    expect(hooked.fired).toBe(true);
    await expectWhole(store, tagsOf, path, ['first', 'inserted']);
  } finally {
    await reader.close();
    await writer.close();
  }
}

/**
 * Many files, reads that touch from one instance against inserts from another, all in flight at
 * once: every acknowledged insert is there, every file opens and keeps its tag.
 */
export async function touchesAgainstInserts(
  store: ObjectStore,
  tagsOf: TagsOf,
  files: number,
  rounds: number,
): Promise<void> {
  const writer = await vaultOf(store, 0);
  const reader = await vaultOf(store, 2);
  const pathOf = (i: number): string => `/memories/t/${i}.md`;
  try {
    for (let i = 0; i < files; i++) await ok(writer, { command: 'create', path: pathOf(i), file_text: 'head\n' });
    const inserted = new Map<number, string[]>();
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: files }, async (_, i) => {
          const line = `insert ${round} of ${i}`;
          const [, insert] = await Promise.all([
            callTool(reader, USER, { command: 'view', path: pathOf(i) }),
            callTool(writer, USER, { command: 'insert', path: pathOf(i), insert_line: 1, insert_text: line }),
          ]);
          if (!insert.isError) inserted.set(i, [...(inserted.get(i) ?? []), line]);
          else expect(String(insert.content)).not.toMatch(/integrity|did not open/i);
        }),
      );
    }
    for (let i = 0; i < files; i++) await expectWhole(store, tagsOf, pathOf(i), ['head', ...(inserted.get(i) ?? [])]);
    expect([...inserted.values()].flat().length).toBeGreaterThan(0);
  } finally {
    await reader.close();
    await writer.close();
  }
}
