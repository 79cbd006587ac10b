/**
 * Quota cases that only show under concurrency, with a store whose writes are held at a gate:
 * a usage refresh runs exclusively (never beside a write in flight, which it would count
 * twice), and a user with a write in flight stays in the usage cache (else their next write is
 * checked against a fresh listing that misses the write in flight). Plus the edges of the options,
 * the messages and the view cap.
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import {
  capViewOutput,
  DEFAULT_QUOTA,
  quota,
  quotaCommandLimits,
  quotaMessages,
  resolveQuota,
  type QuotaOptions,
} from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ListOptions, ListPage, PutOptions, StoredObject } from '../../src/store/port.js';
import { plainUid } from '../../src/vault/plain-codec.js';

/** A MemoryStore whose next armed put stops at a gate, before or after it is applied. */
class GatedStore extends MemoryStore {
  private armed: { when: 'before' | 'after'; reached: () => void; gate: Promise<void> } | undefined;

  /** Arms the next put; resolves `reached` when it is at the gate; `open()` lets it through. */
  holdNextPut(when: 'before' | 'after'): { reached: Promise<void>; open: () => void } {
    let open!: () => void;
    let reached!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (open = r));
    this.armed = { when, reached, gate };
    return { reached: reachedP, open };
  }

  private armedGet: { reached: () => void; gate: Promise<void> } | undefined;
  /** Prefixes of every listing, in order. */
  readonly listed: string[] = [];

  /** Arms the next get the same way (it stops before it reads). */
  holdNextGet(): { reached: Promise<void>; open: () => void } {
    let open!: () => void;
    let reached!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (open = r));
    this.armedGet = { reached, gate };
    return { reached: reachedP, open };
  }

  override async get(key: string): Promise<StoredObject | null> {
    const armed = this.armedGet;
    this.armedGet = undefined;
    if (armed) {
      armed.reached();
      await armed.gate;
    }
    return super.get(key);
  }

  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.listed.push(prefix);
    return super.list(prefix, options);
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const armed = this.armed;
    this.armed = undefined;
    if (armed?.when === 'before') {
      armed.reached();
      await armed.gate;
    }
    const result = await super.put(key, body, options);
    if (armed?.when === 'after') {
      armed.reached();
      await armed.gate;
    }
    return result;
  }
}

const text = (bytes: number) => 'x'.repeat(bytes);
/** Lets every queued microtask and timer-free continuation run. */
const settle = async () => {
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
};

async function vaultWith(store: MemoryStore, options: QuotaOptions) {
  const mw = quota(options);
  const vault = await createVault({ store, quota: false, middlewares: [mw], limits: quotaCommandLimits(options) });
  return { vault, mw };
}

describe('quota under concurrency (gated store)', () => {
  it('a due refresh waits for a write in flight, so that write is counted once: the next write still fits', async () => {
    let clock = 0;
    const store = new GatedStore();
    const { vault, mw } = await vaultWith(store, { maxUserBytes: 120, refreshAfterMs: 1_000, now: () => clock });
    // Writer A: its file reaches the store, then the put's answer is held.
    const held = store.holdNextPut('after');
    const a = vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: text(50) });
    await held.reached;
    // The usage listing is now due; writer B's check must not list while A is in flight.
    clock = 5_000;
    const b = vault.run('alice', { command: 'create', path: '/memories/b.md', file_text: text(30) });
    await settle();
    held.open();
    expect((await a).isError).toBe(false);
    const result = await b;
    expect(result.content).not.toContain('Quota exceeded');
    expect(result.isError).toBe(false);
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 80, files: 2, pendingBytes: 0, pendingFiles: 0 });
    // And the limit still holds exactly: 40 more fit, 41 do not.
    expect((await vault.run('alice', { command: 'create', path: '/memories/c.md', file_text: text(41) })).code).toBe(
      'QUOTA_EXCEEDED',
    );
    expect((await vault.run('alice', { command: 'create', path: '/memories/c.md', file_text: text(40) })).isError).toBe(
      false,
    );
  });

  it('commands that arrive during a refresh wait for it and see its result', async () => {
    const clock = 0;
    const store = new GatedStore();
    const { vault, mw } = await vaultWith(store, {
      maxUserBytes: 100,
      refreshEveryWrites: 2,
      refreshAfterMs: 1_000_000,
      now: () => clock,
    });
    expect((await vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: text(40) })).isError).toBe(
      false,
    );
    // Another process writes 50 bytes behind this one's back.
    const other = await vaultWith(store, { maxUserBytes: 100 });
    expect(
      (await other.vault.run('alice', { command: 'create', path: '/memories/o.md', file_text: text(50) })).isError,
    ).toBe(false);
    expect((await vault.run('alice', { command: 'create', path: '/memories/b.md', file_text: text(5) })).isError).toBe(
      false,
    );
    // Two writes since the listing: the next two writes at once, one refresh, both checked against 95.
    const [x, y] = await Promise.all([
      vault.run('alice', { command: 'create', path: '/memories/x.md', file_text: text(5) }),
      vault.run('alice', { command: 'create', path: '/memories/y.md', file_text: text(1) }),
    ]);
    expect(x.isError).toBe(false);
    expect(y.code).toBe('QUOTA_EXCEEDED');
    expect(String(y.content)).toContain('holds 100 of 100 bytes (0 bytes left)');
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 100, files: 4, pendingBytes: 0, pendingFiles: 0 });
  });

  it('a user with a write in flight is not evicted from the usage cache: their next write counts it', async () => {
    const store = new GatedStore();
    const { vault, mw } = await vaultWith(store, { maxCachedUsers: 1, maxUserBytes: 100 });
    // Edits (not creates) run side by side: creates hold the user's tree lock, edits share it.
    for (const path of ['/memories/a.md', '/memories/c.md'])
      await vault.run('alice', { command: 'create', path, file_text: text(10) });
    const held = store.holdNextPut('before');
    const first = vault.run('alice', {
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 0,
      insert_text: text(60),
    });
    await held.reached;
    const inFlight = mw.usage(plainUid('alice'))!;
    expect(inFlight).toMatchObject({ bytes: 20, files: 2, pendingFiles: 0 });
    expect(inFlight.pendingBytes).toBeGreaterThanOrEqual(60);
    // Another user arrives; the cache is full, but alice is busy.
    expect((await vault.run('bob', { command: 'create', path: '/memories/b.md', file_text: text(10) })).isError).toBe(
      false,
    );
    expect(mw.usage(plainUid('alice'))).toEqual(inFlight);
    // Alice's second edit fits only if the bytes in flight were forgotten: it must be refused.
    const second = await vault.run('alice', {
      command: 'insert',
      path: '/memories/c.md',
      insert_line: 0,
      insert_text: text(40),
    });
    expect(second.code).toBe('QUOTA_EXCEEDED');
    expect(String(second.content)).toContain(`holds ${20 + inFlight.pendingBytes} of 100 bytes`);
    held.open();
    expect((await first).isError).toBe(false);
    expect(mw.usage(plainUid('alice'))).toEqual({
      bytes: 20 + inFlight.pendingBytes,
      files: 2,
      pendingBytes: 0,
      pendingFiles: 0,
    });
    // Idle now: the next new user may evict alice.
    expect((await vault.run('carol', { command: 'create', path: '/memories/c.md', file_text: text(1) })).isError).toBe(
      false,
    );
    expect(mw.usage(plainUid('alice'))).toBeUndefined();
    expect(mw.usage(plainUid('carol'))).toEqual({ bytes: 1, files: 1, pendingBytes: 0, pendingFiles: 0 });
  });

  it('a user whose command holds the usage gate before it reserves anything is not evicted either', async () => {
    const store = new GatedStore();
    const { vault, mw } = await vaultWith(store, { maxCachedUsers: 1, maxUserBytes: 100 });
    for (const path of ['/memories/a.md', '/memories/c.md'])
      await vault.run('alice', { command: 'create', path, file_text: text(10) });
    // Alice's first edit is reading its file: it holds her usage, and has reserved nothing yet.
    const reading = store.holdNextGet();
    const first = vault.run('alice', {
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 0,
      insert_text: text(60),
    });
    await reading.reached;
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 20, files: 2, pendingBytes: 0, pendingFiles: 0 });
    // Another user arrives while the cache is full: alice is busy, so her entry stays.
    expect((await vault.run('bob', { command: 'create', path: '/memories/b.md', file_text: text(10) })).isError).toBe(
      false,
    );
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 20, files: 2, pendingBytes: 0, pendingFiles: 0 });
    // The first edit goes on and reserves its 60 bytes in that same entry; its write is held.
    const writing = store.holdNextPut('before');
    reading.open();
    await writing.reached;
    expect(mw.usage(plainUid('alice'))!.pendingBytes).toBeGreaterThanOrEqual(60);
    // A second edit that fits only beside a forgotten first one is refused.
    const second = await vault.run('alice', {
      command: 'insert',
      path: '/memories/c.md',
      insert_line: 0,
      insert_text: text(40),
    });
    expect(second.code).toBe('QUOTA_EXCEEDED');
    writing.open();
    expect((await first).isError).toBe(false);
    expect(mw.usage(plainUid('alice'))!.bytes).toBeLessThanOrEqual(100);
  });

  it('writes that find the usage due at once list it once: the others wait for that listing and use it', async () => {
    const store = new GatedStore();
    const seed = await vaultWith(store, { maxUserBytes: 100 });
    for (const path of ['/memories/a.md', '/memories/b.md'])
      await seed.vault.run('alice', { command: 'create', path, file_text: text(10) });
    // A new process: alice's usage is not loaded yet, and four writes arrive together.
    const { vault, mw } = await vaultWith(store, { maxUserBytes: 100 });
    const root = (prefix: string) => prefix.endsWith('/f/');
    const before = store.listed.filter(root).length;
    const results = await Promise.all(
      ['/memories/a.md', '/memories/b.md', '/memories/a.md', '/memories/b.md'].map((path) =>
        vault.run('alice', { command: 'insert', path, insert_line: 0, insert_text: text(5) }),
      ),
    );
    expect(results.map((r) => r.isError)).toEqual([false, false, false, false]);
    expect(store.listed.filter(root).length - before).toBe(1);
    // Each insert adds its text and a line break.
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 20 + 4 * 6, files: 2, pendingBytes: 0, pendingFiles: 0 });
  });

  it('a user over the limit (written by another process) may still shrink a file or rewrite it at the same size, not grow one', async () => {
    const store = new GatedStore();
    const other = await vaultWith(store, { maxUserBytes: 1_000 });
    expect(
      (await other.vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: `${text(140)}yyyyy` }))
        .isError,
    ).toBe(false);
    const { vault, mw } = await vaultWith(store, { maxUserBytes: 100 });
    const shrink = await vault.run('alice', {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'yyyyy',
      new_str: 'zz',
    });
    expect(shrink.isError).toBe(false);
    const same = await vault.run('alice', {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'zz',
      new_str: 'ww',
    });
    expect(same.isError).toBe(false);
    const grow = await vault.run('alice', {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'ww',
      new_str: 'www',
    });
    expect(grow.code).toBe('QUOTA_EXCEEDED');
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 142, files: 1, pendingBytes: 0, pendingFiles: 0 });
  });

  it('renames do not count towards refreshEveryWrites: only writes of content bring the next listing closer', async () => {
    const store = new GatedStore();
    const { vault } = await vaultWith(store, {
      maxUserBytes: 1_000,
      refreshEveryWrites: 2,
      refreshAfterMs: 1_000_000,
      now: () => 0,
    });
    const root = () => store.listed.filter((prefix) => prefix.endsWith('/f/')).length;
    expect((await vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'x' })).isError).toBe(
      false,
    );
    const listings = root();
    for (const [from, to] of [
      ['/memories/a.md', '/memories/b.md'],
      ['/memories/b.md', '/memories/a.md'],
      ['/memories/a.md', '/memories/b.md'],
    ]) {
      expect((await vault.run('alice', { command: 'rename', old_path: from!, new_path: to! })).isError).toBe(false);
    }
    // One write since the listing: the next write is not due yet, the one after it is.
    expect((await vault.run('alice', { command: 'create', path: '/memories/c.md', file_text: 'x' })).isError).toBe(
      false,
    );
    expect(root()).toBe(listings);
    expect((await vault.run('alice', { command: 'create', path: '/memories/d.md', file_text: 'x' })).isError).toBe(
      false,
    );
    expect(root()).toBe(listings + 1);
  });

  it('exactly maxCachedUsers users are kept', async () => {
    const store = new MemoryStore();
    const { vault, mw } = await vaultWith(store, { maxCachedUsers: 3 });
    for (const user of ['u1', 'u2', 'u3'])
      await vault.run(user, { command: 'create', path: '/memories/a', file_text: 'x' });
    for (const user of ['u1', 'u2', 'u3']) expect(mw.usage(plainUid(user))).toBeDefined();
    // u1 is used again: u2 is now the least recently used and goes first.
    await vault.run('u1', { command: 'create', path: '/memories/b', file_text: 'x' });
    await vault.run('u4', { command: 'create', path: '/memories/a', file_text: 'x' });
    expect(mw.usage(plainUid('u2'))).toBeUndefined();
    for (const user of ['u1', 'u3', 'u4']) expect(mw.usage(plainUid(user))).toBeDefined();
  });

  it('a refused edit beside a write in flight leaves the reservation of that write alone', async () => {
    const store = new GatedStore();
    const { vault, mw } = await vaultWith(store, { maxUserBytes: 100 });
    for (const path of ['/memories/a.md', '/memories/b.md'])
      await vault.run('alice', { command: 'create', path, file_text: text(10) });
    const held = store.holdNextPut('before');
    const inFlight = vault.run('alice', {
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 0,
      insert_text: text(29),
    });
    await held.reached;
    const during = mw.usage(plainUid('alice'))!;
    expect(during).toEqual({ bytes: 20, files: 2, pendingBytes: 30, pendingFiles: 0 });
    const refused = await vault.run('alice', {
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 0,
      insert_text: text(60),
    });
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    expect(mw.usage(plainUid('alice'))).toEqual(during);
    held.open();
    expect((await inFlight).isError).toBe(false);
    expect(mw.usage(plainUid('alice'))).toEqual({ bytes: 50, files: 2, pendingBytes: 0, pendingFiles: 0 });
  });
});

describe('quota options', () => {
  it('every option accepts its smallest value (refreshAfterMs 0) and refuses one less, naming the option and value', () => {
    for (const key of Object.keys(DEFAULT_QUOTA) as Array<keyof typeof DEFAULT_QUOTA>) {
      const smallest = key === 'refreshAfterMs' ? 0 : 1;
      if (key !== 'viewChars' && key !== 'maxViewOutputChars')
        expect(resolveQuota({ [key]: smallest })[key]).toBe(smallest);
      expect(() => resolveQuota({ [key]: smallest - 1 })).toThrow(
        `memvault: quota option ${key} must be a positive whole number, not ${smallest - 1}`,
      );
      expect(() => resolveQuota({ [key]: 2.5 })).toThrow(
        `quota option ${key} must be a positive whole number, not 2.5`,
      );
      expect(() => resolveQuota({ [key]: '10' as unknown as number })).toThrow(
        expect.objectContaining({ code: 'CONFIG' }),
      );
      expect(() => resolveQuota({ [key]: Number.MAX_SAFE_INTEGER + 1 })).toThrow(
        expect.objectContaining({ code: 'CONFIG' }),
      );
    }
  });

  it('the history allowance defaults to 4 x what the files can count as versions (their bytes, 512 each at least) and to 20 versions per file, following the files quota, unless given', () => {
    expect(resolveQuota({}).maxHistoryBytes).toBe(4 * (DEFAULT_QUOTA.maxUserBytes + 512 * DEFAULT_QUOTA.maxUserFiles));
    expect(resolveQuota({ maxUserBytes: 1000, maxUserFiles: 3 }).maxHistoryBytes).toBe(4 * (1000 + 3 * 512));
    expect(resolveQuota({ maxUserBytes: 1000, maxHistoryBytes: 1500 }).maxHistoryBytes).toBe(1500);
    expect(resolveQuota({}).maxHistoryVersions).toBe(100_000);
    expect(resolveQuota({ maxUserFiles: 3 }).maxHistoryVersions).toBe(60);
    expect(resolveQuota({ maxUserFiles: 3, maxHistoryVersions: 7 }).maxHistoryVersions).toBe(7);
    expect(() => resolveQuota({ maxHistoryVersions: 0 })).toThrow(
      'memvault: quota option maxHistoryVersions must be a positive whole number, not 0',
    );
  });

  it('the view output cap defaults to twice viewChars and must leave 200 characters beyond it', () => {
    expect(resolveQuota({ viewChars: 1000 }).maxViewOutputChars).toBe(2000);
    expect(resolveQuota({ viewChars: 1000, maxViewOutputChars: 1200 }).maxViewOutputChars).toBe(1200);
    expect(() => resolveQuota({ viewChars: 1000, maxViewOutputChars: 1199 })).toThrow(
      'memvault: quota option maxViewOutputChars must leave room for viewChars of text plus line numbers',
    );
    expect(resolveQuota({ maxViewOutputChars: 50_000 }).viewChars).toBe(DEFAULT_QUOTA.viewChars);
    expect(resolveQuota({})).toEqual(DEFAULT_QUOTA);
    expect(DEFAULT_QUOTA).toEqual({
      maxFileBytes: 1024 * 1024,
      maxUserBytes: 64 * 1024 * 1024,
      maxHistoryBytes: 4 * (64 * 1024 * 1024 + 512 * 5000),
      maxHistoryVersions: 100_000,
      maxUserFiles: 5000,
      viewChars: 16_000,
      maxViewOutputChars: 32_000,
      refreshAfterMs: 60_000,
      refreshEveryWrites: 20,
      maxCachedUsers: 10_000,
    });
  });
});

describe('quota messages', () => {
  it('say what is used, what is left (never below 0) and that nothing was written', () => {
    expect(quotaMessages.fileBytes('/memories/a', 2000, null, 1000)).toBe(
      'Error: Quota exceeded (bytes per file): /memories/a would be 2,000 bytes, over the limit of 1,000 bytes per file. Nothing was written. Keep each file under 1,000 bytes: split the content across several files, or leave out old content.',
    );
    expect(quotaMessages.fileBytes('/memories/a', 2000, 1200, 1000)).toContain(
      '; it holds 1,200 bytes now, so 0 bytes are left. Nothing was written.',
    );
    expect(quotaMessages.fileBytes('/memories/a', 2000, 300, 1000)).toContain(
      '; it holds 300 bytes now, so 700 bytes are left.',
    );
    expect(quotaMessages.userBytes('insert', 5, 120, 100)).toBe(
      'Error: Quota exceeded (bytes per user): this insert needs 5 more bytes, but the memory directory holds 120 of 100 bytes (0 bytes left). Nothing was written. Free space first: delete or shorten files you no longer need (view /memories shows their sizes), then try again.',
    );
    expect(quotaMessages.userFiles('/memories/n', 7, 5)).toBe(
      'Error: Quota exceeded (files per user): creating /memories/n would make 8 files, over the limit of 5 files (there are 7, 0 left). Nothing was written. Delete or merge files you no longer need, or add this to an existing file, then try again.',
    );
    expect(quotaMessages.viewCapped(32000, null)).toBe(
      '[Output capped at 32,000 characters. View a subdirectory, or a file with view_range, to see the rest.]',
    );
    expect(quotaMessages.viewCapped(32000, 41)).toBe(
      '[Output capped at 32,000 characters (line numbers included), after line 41. To read on, call view with view_range [42, -1] (or a smaller range).]',
    );
  });

  it('a refused file-count write and its decision', async () => {
    const store = new MemoryStore();
    const { vault } = await vaultWith(store, { maxUserFiles: 2 });
    await vault.run('alice', { command: 'create', path: '/memories/a', file_text: 'x' });
    await vault.run('alice', { command: 'create', path: '/memories/b', file_text: 'x' });
    const refused = await vault.run('alice', { command: 'create', path: '/memories/c', file_text: 'x' });
    expect(refused).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content: quotaMessages.userFiles('/memories/c', 2, 2),
    });
  });
});

describe('capViewOutput', () => {
  const numbered = (n: number, body: string) => `${String(n).padStart(6)}\t${body}`;

  it('output of exactly the cap is untouched; one more character is capped', () => {
    const content = ['header', numbered(1, 'a'.repeat(300)), numbered(2, 'b'.repeat(300))].join('\n');
    expect(capViewOutput(content, content.length)).toBe(content);
    const capped = capViewOutput(content, content.length - 1);
    expect(capped).not.toBe(content);
    expect(capped.length).toBeLessThanOrEqual(content.length - 1);
  });

  it('keeps whole lines from the start and names the last line kept, so paging goes on from the next', () => {
    const lines = ['header', ...Array.from({ length: 50 }, (_, i) => numbered(i + 1, `${'y'.repeat(30)}${i + 1}`))];
    const content = lines.join('\n');
    const capped = capViewOutput(content, 1000);
    const body = capped.split('\n');
    const note = body.pop()!;
    expect(body[0]).toBe('header');
    expect(lines.slice(0, body.length)).toEqual(body);
    const last = Number(/^\s*(\d+)\t/.exec(body.at(-1)!)![1]);
    expect(note).toBe(quotaMessages.viewCapped(1000, last));
    expect(capped.length).toBeLessThanOrEqual(1000);
    // As much as fits: the next line would not have left room for the note.
    expect([...body, lines[body.length]].join('\n').length).toBeGreaterThan(800);
  });

  it('a single line longer than the cap is cut at its end, keeping its start', () => {
    const content = 'x'.repeat(5000);
    const capped = capViewOutput(content, 1000);
    expect(capped).toBe(`${'x'.repeat(800)}\n${quotaMessages.viewCapped(1000, null)}`);
    const withHeader = `header\n${numbered(1, 'start-' + 'z'.repeat(5000))}`;
    expect(capViewOutput(withHeader, 1000)).toBe(`header\n${quotaMessages.viewCapped(1000, null)}`);
  });
});
