import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { CommandContext, Middleware } from '../../src/pipeline/context.js';
import {
  capViewOutput,
  quota,
  quotaCommandLimits,
  resolveQuota,
  type QuotaDecision,
  type QuotaMiddleware,
  type QuotaOptions,
} from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { PutOptions } from '../../src/store/port.js';
import { plainUid } from '../../src/vault/plain-codec.js';

const USER = 'alice';
const UID = plainUid(USER);

/** Captures each command's context after the chain ran (decisions, request counts). */
function recorder(): { middleware: Middleware; last: () => CommandContext } {
  let last: CommandContext | undefined;
  return {
    middleware: async (ctx, next) => {
      const result = await next();
      last = ctx;
      return result;
    },
    last: () => last!,
  };
}

async function setup(options: QuotaOptions, { wireLimits = true, store = new MemoryStore() } = {}) {
  const mw = quota(options);
  const rec = recorder();
  const vault = await createVault({
    store,
    quota: false, // the quota under test is the one in `middlewares`
    middlewares: [mw],
    outerMiddlewares: [rec.middleware],
    ...(wireLimits ? { limits: quotaCommandLimits(options) } : {}),
  });
  const run = (input: Record<string, unknown>) => vault.run(USER, input);
  return { vault, store, mw, rec, run };
}

const text = (bytes: number, fill = 'x') => fill.repeat(bytes);

async function storedTotal(vault: Vault, user = USER): Promise<{ bytes: number; files: number }> {
  const files = await vault.files(user);
  let bytes = 0;
  let count = 0;
  for await (const f of files.listFiles('/memories')) {
    bytes += f.size;
    count += 1;
  }
  return { bytes, files: count };
}

describe('quota: bytes per user, at the edge', () => {
  it('a create that reaches the limit exactly passes; one byte over is refused with what is used and left, and nothing changes', async () => {
    const { run, store, rec, mw, vault } = await setup({ maxUserBytes: 100 });
    expect((await run({ command: 'create', path: '/memories/a.txt', file_text: text(60) })).isError).toBe(false);
    expect((await run({ command: 'create', path: '/memories/b.txt', file_text: text(40) })).isError).toBe(false);
    expect(rec.last().decisions['quota']).toEqual({
      checked: true,
      rule: 'user_bytes',
      limit: 100,
      used: 60,
      delta: 40,
      allowed: true,
    });
    const keys = store.keys();
    const refused = await run({ command: 'create', path: '/memories/c.txt', file_text: 'y' });
    expect(refused).toEqual({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content:
        'Error: Quota exceeded (bytes per user): this create needs 1 more bytes, but the memory directory holds 100 of 100 bytes (0 bytes left). ' +
        'Nothing was written. Free space first: delete or shorten files you no longer need (view /memories shows their sizes), then try again.',
    });
    expect(rec.last().decisions['quota']).toEqual({
      checked: true,
      rule: 'user_bytes',
      limit: 100,
      used: 100,
      delta: 1,
      allowed: false,
    } satisfies QuotaDecision);
    expect(store.keys()).toEqual(keys);
    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 2 });
    expect(mw.usage(UID)).toEqual({ bytes: 100, files: 2, pendingBytes: 0, pendingFiles: 0 });
  });

  it('an overwrite counts only its growth: same size passes at the limit, one byte more does not, smaller frees', async () => {
    const { run, vault } = await setup({ maxUserBytes: 100 });
    await run({ command: 'create', path: '/memories/a.txt', file_text: text(60) });
    await run({ command: 'create', path: '/memories/b.txt', file_text: text(40) });
    expect((await run({ command: 'create', path: '/memories/a.txt', file_text: text(60, 'z') })).isError).toBe(false);
    const over = await run({ command: 'create', path: '/memories/a.txt', file_text: text(61) });
    expect(over.code).toBe('QUOTA_EXCEEDED');
    expect((await vault.run(USER, { command: 'view', path: '/memories/a.txt' })).content).toContain('z'.repeat(60));
    expect((await run({ command: 'create', path: '/memories/a.txt', file_text: text(10) })).isError).toBe(false);
    expect((await run({ command: 'create', path: '/memories/c.txt', file_text: text(50) })).isError).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 3 });
  });

  it('str_replace: growing to the limit exactly passes, one byte more is refused and the file is unchanged', async () => {
    const { run, vault, rec } = await setup({ maxUserBytes: 100 });
    await run({ command: 'create', path: '/memories/a.txt', file_text: `${text(96)}\nab` }); // 99 bytes
    expect(
      (await run({ command: 'str_replace', path: '/memories/a.txt', old_str: 'ab', new_str: 'abc' })).isError,
    ).toBe(false);
    expect(rec.last().decisions['quota']).toMatchObject({ rule: 'user_bytes', used: 100 - 1, delta: 1, allowed: true });
    const refused = await run({ command: 'str_replace', path: '/memories/a.txt', old_str: 'abc', new_str: 'abcd' });
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    expect(refused.content).toContain(
      'this str_replace needs 1 more bytes, but the memory directory holds 100 of 100 bytes (0 bytes left)',
    );
    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 1 });
    // Shrinking is always allowed, and frees what it frees.
    expect((await run({ command: 'str_replace', path: '/memories/a.txt', old_str: 'abc', new_str: '' })).isError).toBe(
      false,
    );
    expect((await run({ command: 'create', path: '/memories/b.txt', file_text: 'xyz' })).isError).toBe(false);
  });

  it('insert: the line and its line ending count; exactly at the limit passes, one byte over is refused', async () => {
    const { run, vault } = await setup({ maxUserBytes: 100 });
    await run({ command: 'create', path: '/memories/a.txt', file_text: `${text(95)}\n` });
    // 'abc' + '\n' = 4 bytes -> 100.
    expect(
      (await run({ command: 'insert', path: '/memories/a.txt', insert_line: 0, insert_text: 'abc' })).isError,
    ).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 1 });
    const refused = await run({ command: 'insert', path: '/memories/a.txt', insert_line: 1, insert_text: '' });
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 1 });
  });

  it('a CRLF file: the edit is measured as written (with CR), not as sent', async () => {
    const { run, vault } = await setup({ maxUserBytes: 20 });
    await run({ command: 'create', path: '/memories/w.txt', file_text: 'a\r\nb\r\n' }); // 6 bytes
    // Inserting 'x\ny' adds 'x\r\ny\r\n' = 6 bytes -> 12; '0123456\n' adds 9 -> 21: refused.
    expect(
      (await run({ command: 'insert', path: '/memories/w.txt', insert_line: 1, insert_text: 'x\ny' })).isError,
    ).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 12, files: 1 });
    expect(
      (await run({ command: 'insert', path: '/memories/w.txt', insert_line: 0, insert_text: '0123456\n' })).code,
    ).toBe('QUOTA_EXCEEDED');
    expect(
      (await run({ command: 'insert', path: '/memories/w.txt', insert_line: 0, insert_text: '012345\n' })).isError,
    ).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 20, files: 1 });
  });
});

describe('quota: bytes per file, at the edge', () => {
  it('create: exactly the limit passes; one byte over is refused by validation (limits wired) before any store request or redaction', async () => {
    const { run, rec, store } = await setup({ maxFileBytes: 50 });
    expect((await run({ command: 'create', path: '/memories/a.txt', file_text: text(50) })).isError).toBe(false);
    const keys = store.keys();
    const refused = await run({ command: 'create', path: '/memories/b.txt', file_text: text(51) });
    expect(refused).toEqual({
      isError: true,
      code: 'TOO_LARGE',
      content:
        'Error: `file_text` is 51 bytes, over the limit of 50 bytes per file, so this create cannot be stored. Nothing was written; keep each file under 50 bytes (split the content across several files).',
    });
    expect(rec.last().decisions).toEqual({ validate: { refused: true, field: 'file_text', bytes: 51, limit: 50 } });
    expect(rec.last().stats.requests).toEqual({});
    expect(store.keys()).toEqual(keys);
  });

  it('create: the quota middleware alone (limits not wired) refuses one byte over before any store request', async () => {
    const { run, rec, store } = await setup({ maxFileBytes: 50 }, { wireLimits: false });
    expect((await run({ command: 'create', path: '/memories/a.txt', file_text: text(50) })).isError).toBe(false);
    const keys = store.keys();
    const refused = await run({ command: 'create', path: '/memories/b.txt', file_text: text(51) });
    expect(refused).toEqual({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content:
        'Error: Quota exceeded (bytes per file): /memories/b.txt would be 51 bytes, over the limit of 50 bytes per file. ' +
        'Nothing was written. Keep each file under 50 bytes: split the content across several files, or leave out old content.',
    });
    expect(rec.last().stats.requests).toEqual({});
    expect(store.keys()).toEqual(keys);
  });

  it('edits: one byte over is refused, with what the file holds and what is left (quota check, command limits not wired)', async () => {
    const { run, vault } = await setup({ maxFileBytes: 50 }, { wireLimits: false });
    await run({ command: 'create', path: '/memories/a.txt', file_text: text(49) });
    expect((await run({ command: 'insert', path: '/memories/a.txt', insert_line: 0, insert_text: '' })).isError).toBe(
      false,
    ); // +1 ('\n')
    const refused = await run({ command: 'str_replace', path: '/memories/a.txt', old_str: 'x', new_str: 'xy' });
    // 'x' occurs many times: make the edit unique instead.
    expect(refused.code).toBe('AMBIGUOUS_MATCH');
    const over = await run({ command: 'insert', path: '/memories/a.txt', insert_line: 0, insert_text: '' });
    expect(over).toEqual({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content:
        'Error: Quota exceeded (bytes per file): /memories/a.txt would be 51 bytes, over the limit of 50 bytes per file; it holds 50 bytes now, so 0 bytes are left. ' +
        'Nothing was written. Keep each file under 50 bytes: split the content across several files, or leave out old content.',
    });
    expect(await storedTotal(vault)).toEqual({ bytes: 50, files: 1 });
  });

  it('with the limits wired (one source of truth), the command layer refuses the same edit with its own error', async () => {
    const { run, vault } = await setup({ maxFileBytes: 50 });
    await run({ command: 'create', path: '/memories/a.txt', file_text: `${text(48)}ab` });
    expect((await run({ command: 'str_replace', path: '/memories/a.txt', old_str: 'ab', new_str: 'abc' })).code).toBe(
      'TOO_LARGE',
    );
    expect(await storedTotal(vault)).toEqual({ bytes: 50, files: 1 });
  });
});

describe('quota: files per user, at the edge', () => {
  it('the last file fits, the next is refused; overwriting needs no new file; deleting frees one', async () => {
    const { run, vault, rec } = await setup({ maxUserFiles: 3 });
    for (const name of ['a', 'b', 'c'])
      expect((await run({ command: 'create', path: `/memories/${name}.md`, file_text: name })).isError).toBe(false);
    const refused = await run({ command: 'create', path: '/memories/d.md', file_text: 'd' });
    expect(refused.content).toBe(
      'Error: Quota exceeded (files per user): creating /memories/d.md would make 4 files, over the limit of 3 files (there are 3, 0 left). ' +
        'Nothing was written. Delete or merge files you no longer need, or add this to an existing file, then try again.',
    );
    expect(rec.last().decisions['quota']).toEqual({
      checked: true,
      rule: 'user_files',
      limit: 3,
      used: 3,
      delta: 1,
      allowed: false,
    });
    expect((await run({ command: 'create', path: '/memories/a.md', file_text: 'again' })).isError).toBe(false);
    expect((await run({ command: 'delete', path: '/memories/b.md' })).isError).toBe(false);
    expect((await run({ command: 'create', path: '/memories/d.md', file_text: 'd' })).isError).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 7, files: 3 });
  });

  it('a rename at the limit is never refused (it moves what is counted), also a directory with its journal', async () => {
    const { run, mw, vault } = await setup({ maxUserFiles: 3, maxUserBytes: 30 });
    await run({ command: 'create', path: '/memories/dir/a.md', file_text: text(10) });
    await run({ command: 'create', path: '/memories/dir/b.md', file_text: text(10) });
    await run({ command: 'create', path: '/memories/c.md', file_text: text(10) });
    expect((await run({ command: 'rename', old_path: '/memories/c.md', new_path: '/memories/e.md' })).isError).toBe(
      false,
    );
    expect((await run({ command: 'rename', old_path: '/memories/dir', new_path: '/memories/moved' })).isError).toBe(
      false,
    );
    expect(mw.usage(UID)).toEqual({ bytes: 30, files: 3, pendingBytes: 0, pendingFiles: 0 });
    expect(await storedTotal(vault)).toEqual({ bytes: 30, files: 3 });
  });
});

describe('quota: deletes and failures keep usage exact', () => {
  it('deleting a directory frees all its files; a failed command releases its reservation', async () => {
    const { run, mw } = await setup({ maxUserBytes: 100, maxUserFiles: 10 });
    await run({ command: 'create', path: '/memories/d/a.md', file_text: text(40) });
    await run({ command: 'create', path: '/memories/d/b.md', file_text: text(40) });
    await run({ command: 'create', path: '/memories/c.md', file_text: text(20) });
    expect((await run({ command: 'create', path: '/memories/x.md', file_text: 'x' })).code).toBe('QUOTA_EXCEEDED');
    expect((await run({ command: 'delete', path: '/memories/d' })).isError).toBe(false);
    expect(mw.usage(UID)).toEqual({ bytes: 20, files: 1, pendingBytes: 0, pendingFiles: 0 });
    // Commands that fail leave nothing reserved or counted.
    expect(
      (await run({ command: 'str_replace', path: '/memories/c.md', old_str: 'nope', new_str: text(50) })).code,
    ).toBe('NO_MATCH');
    expect((await run({ command: 'create', path: '/memories/c.md/under', file_text: 'x' })).code).toBe(
      'NOT_A_DIRECTORY',
    );
    expect(mw.usage(UID)).toEqual({ bytes: 20, files: 1, pendingBytes: 0, pendingFiles: 0 });
    expect((await run({ command: 'create', path: '/memories/y.md', file_text: text(80) })).isError).toBe(false);
  });

  it('a write the store refuses releases the reservation and counts nothing', async () => {
    class FlakyStore extends MemoryStore {
      failPuts = 0;
      override put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
        if (this.failPuts > 0) {
          this.failPuts -= 1;
          return Promise.reject(new Error('backend down'));
        }
        return super.put(key, body, options);
      }
    }
    const store = new FlakyStore();
    const { run, mw } = await setup({ maxUserBytes: 100 }, { store });
    await run({ command: 'create', path: '/memories/a.md', file_text: text(50) });
    store.failPuts = 1;
    const failed = await run({ command: 'create', path: '/memories/b.md', file_text: text(50) });
    expect(failed.code).toBe('INTERNAL');
    expect(mw.usage(UID)).toEqual({ bytes: 50, files: 1, pendingBytes: 0, pendingFiles: 0 });
    expect((await run({ command: 'create', path: '/memories/b.md', file_text: text(50) })).isError).toBe(false);
  });
});

describe('quota: concurrent writers racing for the last bytes (one process)', () => {
  it('creates: exactly the ones that fit succeed, the total never exceeds the limit', async () => {
    const { vault, mw } = await setup({ maxUserBytes: 1000, maxUserFiles: 1000 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        vault.run(USER, { command: 'create', path: `/memories/f${i}.md`, file_text: text(30) }),
      ),
    );
    expect(results.filter((r) => !r.isError)).toHaveLength(33);
    expect(results.filter((r) => r.isError).every((r) => r.code === 'QUOTA_EXCEEDED')).toBe(true);
    expect(await storedTotal(vault)).toEqual({ bytes: 990, files: 33 });
    expect(mw.usage(UID)).toEqual({ bytes: 990, files: 33, pendingBytes: 0, pendingFiles: 0 });
  });

  it('edits of different files at once (they run in parallel): exactly the ones that fit succeed', async () => {
    const { vault, mw } = await setup({ maxUserBytes: 1000 });
    for (let i = 0; i < 20; i++)
      await vault.run(USER, { command: 'create', path: `/memories/e${i}.md`, file_text: `${text(46)}<>` });
    // 960 used, 40 left; each edit adds 7 bytes: exactly 5 fit (35), the total ends at 995.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        vault.run(USER, { command: 'str_replace', path: `/memories/e${i}.md`, old_str: '<>', new_str: '<1234567>' }),
      ),
    );
    expect(results.filter((r) => !r.isError)).toHaveLength(5);
    expect(await storedTotal(vault)).toEqual({ bytes: 995, files: 20 });
    expect(mw.usage(UID)).toMatchObject({ bytes: 995, pendingBytes: 0 });
  });

  it('appends to one file from many callers at once: the file stops exactly where the limit is', async () => {
    const { vault } = await setup({ maxUserBytes: 100 });
    await vault.run(USER, { command: 'create', path: '/memories/log.md', file_text: '' });
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        vault.run(USER, { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: 'line' }),
      ),
    );
    // The first insert into the empty file writes 'line' (4 bytes), each later one adds 'line\n' (5):
    // 4 + 19 x 5 = 99 fit in 100, a 21st would need 104.
    expect(results.filter((r) => !r.isError)).toHaveLength(20);
    expect(results.filter((r) => r.isError).every((r) => r.code === 'QUOTA_EXCEEDED')).toBe(true);
    expect(await storedTotal(vault)).toEqual({ bytes: 99, files: 1 });
  });
});

describe('quota: what one view returns', () => {
  it('a file of many short lines is capped, line numbers included, with a paging note that works', async () => {
    const { vault } = await setup({ viewChars: 1000 });
    const lines = Array.from({ length: 5000 }, () => '').join('\n');
    await vault.run(USER, { command: 'create', path: '/memories/empty-lines.md', file_text: lines });
    const view = await vault.run(USER, { command: 'view', path: '/memories/empty-lines.md' });
    const content = String(view.content);
    expect(view.isError).toBe(false);
    // The command layer counts line numbers against viewChars; maxViewOutputChars (2 x) stays a backstop.
    expect(content.length).toBeLessThanOrEqual(2000);
    const note = /Showing lines 1-(\d+) of \d+.*view_range \[(\d+), -1\]/.exec(content);
    expect(note).not.toBeNull();
    expect(Number(note![2])).toBe(Number(note![1]) + 1);
    const next = await vault.run(USER, {
      command: 'view',
      path: '/memories/empty-lines.md',
      view_range: [Number(note![2]), -1],
    });
    expect(String(next.content)).toContain(`${String(note![2]).padStart(6)}\t`);
  });

  it('viewChars drives the command layer: long text pages at viewChars; short output is untouched', async () => {
    const { vault } = await setup({ viewChars: 500 });
    await vault.run(USER, {
      command: 'create',
      path: '/memories/long.md',
      file_text: Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n'),
    });
    const long = String((await vault.run(USER, { command: 'view', path: '/memories/long.md' })).content);
    expect(long).toContain('output is capped at 500 characters.');
    await vault.run(USER, { command: 'create', path: '/memories/short.md', file_text: 'hello' });
    expect((await vault.run(USER, { command: 'view', path: '/memories/short.md' })).content).toBe(
      "Here's the content of /memories/short.md with line numbers:\n     1\thello",
    );
  });

  it('capViewOutput cuts at a line boundary and keeps short output as it is', () => {
    const content = [
      'header',
      ...Array.from({ length: 100 }, (_, i) => `${String(i + 1).padStart(6)}\t${'y'.repeat(20)}`),
    ].join('\n');
    expect(capViewOutput('short', 1000)).toBe('short');
    const capped = capViewOutput(content, 1000);
    expect(capped.length).toBeLessThanOrEqual(1000);
    const body = capped.split('\n').slice(0, -1);
    expect(body.every((line) => line === 'header' || /^\s+\d+\ty{20}$/.test(line))).toBe(true);
  });
});

describe('quota: configuration and cost', () => {
  it('defaults are sane and bad values are start-up errors', () => {
    expect(resolveQuota()).toMatchObject({
      maxFileBytes: 1024 * 1024,
      maxUserBytes: 64 * 1024 * 1024,
      maxUserFiles: 5000,
      viewChars: 16_000,
      maxViewOutputChars: 32_000,
    });
    expect(quotaCommandLimits({ maxFileBytes: 10, viewChars: 300 })).toEqual({ maxFileBytes: 10, viewChars: 300 });
    for (const bad of [
      { maxUserBytes: 0 },
      { maxFileBytes: -1 },
      { maxUserFiles: 1.5 },
      { viewChars: Number.NaN },
      { viewChars: 1000, maxViewOutputChars: 1000 },
    ]) {
      expect(() => resolveQuota(bad)).toThrow(expect.objectContaining({ code: 'CONFIG' }));
    }
  });

  it.each([
    [true, 2],
    [false, 1],
  ])(
    'requests a check costs (history %s): the usage listing on first use (%i LIST: the files, and the history apart), nothing for creates, edits, deletes and views',
    async (history, firstUse) => {
      const count = async (withQuota: boolean) => {
        const store = new MemoryStore();
        const rec = recorder();
        const vault = await createVault({
          store,
          history,
          quota: false,
          outerMiddlewares: [rec.middleware],
          middlewares: withQuota ? [quota({ refreshEveryWrites: 1000 })] : [],
        });
        const costs: Array<Record<string, number>> = [];
        for (const input of [
          { command: 'create', path: '/memories/a.md', file_text: 'one\n' },
          { command: 'create', path: '/memories/b.md', file_text: 'two\n' },
          { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'uno' },
          { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'dos' },
          { command: 'view', path: '/memories/a.md' },
          { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/c.md' },
          { command: 'delete', path: '/memories/c.md' },
        ]) {
          expect((await vault.run(USER, input)).isError).toBe(false);
          costs.push({ ...rec.last().stats.requests });
        }
        return costs;
      };
      const [plain, checked] = [await count(false), await count(true)];
      const extra = checked.map((c, i) =>
        Object.fromEntries(
          Object.entries(c)
            .map(([k, v]) => [k, v - (plain[i]![k] ?? 0)])
            .filter(([, v]) => v !== 0),
        ),
      );
      // A create is admitted as a new file (the most it can add), so no HEAD: only the first write's usage listing.
      expect(extra).toEqual([{ LIST: firstUse }, {}, {}, {}, {}, {}, {}]);
    },
  );

  it('a create admitted as a new file is settled with the size it replaced; near the limit it takes one HEAD and the exact figure', async () => {
    const rec = recorder();
    const vault = await createVault({
      store: new MemoryStore(),
      quota: false,
      outerMiddlewares: [rec.middleware],
      middlewares: [quota({ maxUserBytes: 100, maxUserFiles: 2, refreshEveryWrites: 1000 })],
    });
    const create = async (path: string, bytes: number) => {
      const r = await vault.run(USER, { command: 'create', path, file_text: 'x'.repeat(bytes) });
      return {
        isError: r.isError,
        text: JSON.stringify(r.content),
        requests: { ...rec.last().stats.requests },
        decision: rec.last().decisions.quota,
      };
    };
    expect((await create('/memories/a.md', 60)).isError).toBe(false);
    // 60 + 30 fits as a new file: no HEAD; the write then says it replaced 60 bytes, and the usage is 30.
    const shrink = await create('/memories/a.md', 30);
    expect(shrink.isError).toBe(false);
    expect(shrink.requests.HEAD).toBe(1); // the overwrite's own look at what its create-only PUT met
    expect(shrink.decision).toMatchObject({ checked: true, allowed: true, delta: -30 });
    // With the usage at 30 bytes in 1 file, 70 bytes more in a second file fit exactly.
    expect((await create('/memories/b.md', 70)).isError).toBe(false);
    // At 100 bytes and 2 files, an overwrite of b.md with 70 bytes is refused as a new file, then
    // decided again with b.md's size (one HEAD more): admitted, as it adds nothing.
    const same = await create('/memories/b.md', 70);
    expect(same.isError, same.text).toBe(false);
    expect(same.requests.HEAD).toBe(2);
    expect(same.decision).toMatchObject({ checked: true, allowed: true, delta: 0 });
    // A third file is refused (user_files), and so is growing b.md past the byte limit.
    const third = await create('/memories/c.md', 1);
    expect(third.isError).toBe(true);
    expect(third.decision).toMatchObject({ checked: true, allowed: false, rule: 'user_files' });
    const grow = await create('/memories/b.md', 71);
    expect(grow.isError).toBe(true);
    expect(grow.decision).toMatchObject({ checked: true, allowed: false, rule: 'user_bytes', used: 100, delta: 1 });
    // Nothing refused was written.
    expect(await (await vault.files(USER)).read('/memories/c.md')).toBeNull();
    expect((await (await vault.files(USER)).read('/memories/b.md'))?.data.byteLength).toBe(70);
    await vault.close();
  });
});

describe('quota: a refresh sees what another process wrote', () => {
  it('after refreshEveryWrites writes, or refreshAfterMs, usage is listed again', async () => {
    let clock = 0;
    const store = new MemoryStore();
    const q: QuotaOptions = { maxUserBytes: 100, refreshEveryWrites: 3, refreshAfterMs: 10_000, now: () => clock };
    const a = await createVault({ store, quota: false, middlewares: [quota(q)] });
    const b = await createVault({ store, quota: false, middlewares: [quota(q)] });
    await a.run(USER, { command: 'create', path: '/memories/a1', file_text: text(10) }); // A lists: 0, then 10
    await b.run(USER, { command: 'create', path: '/memories/b1', file_text: text(80) }); // B lists: 10, then 90
    // A still believes 10 are used: it admits 20 more (its 2nd and 3rd write) — the documented overshoot.
    expect((await a.run(USER, { command: 'create', path: '/memories/a2', file_text: text(10) })).isError).toBe(false);
    expect((await a.run(USER, { command: 'create', path: '/memories/a3', file_text: text(10) })).isError).toBe(false);
    // Its 4th write lists again (3 writes since), sees 110 and refuses.
    expect((await a.run(USER, { command: 'create', path: '/memories/a4', file_text: 'x' })).code).toBe(
      'QUOTA_EXCEEDED',
    );
    // B is at its 2nd write only, but its listing is 10 s old: it lists again and refuses too.
    clock = 10_000;
    expect((await b.run(USER, { command: 'create', path: '/memories/b2', file_text: 'x' })).content).toContain(
      'holds 110 of 100 bytes (0 bytes left)',
    );
  });
});

describe('quota: memory and failures of its own', () => {
  it('keeps at most maxCachedUsers users; a forgotten user is listed again on the next write', async () => {
    const store = new MemoryStore();
    const mw: QuotaMiddleware = quota({ maxCachedUsers: 2, maxUserBytes: 10 });
    const vault = await createVault({ store, quota: false, middlewares: [mw] });
    for (const user of ['u1', 'u2', 'u3'])
      expect((await vault.run(user, { command: 'create', path: '/memories/a', file_text: text(10) })).isError).toBe(
        false,
      );
    expect(mw.usage(plainUid('u1'))).toBeUndefined();
    expect(mw.usage(plainUid('u3'))).toMatchObject({ bytes: 10, files: 1 });
    // u1 comes back: its usage is listed again, so its limit still holds.
    expect((await vault.run('u1', { command: 'create', path: '/memories/b', file_text: 'x' })).code).toBe(
      'QUOTA_EXCEEDED',
    );
  });

  it('a failing usage listing answers with the generic error and reports the fault to the host', async () => {
    class NoListStore extends MemoryStore {
      override list(): never {
        throw new Error('list failed at s3://secret-bucket/u/abc');
      }
    }
    const faults: unknown[] = [];
    const vault = await createVault({
      store: new NoListStore(),
      quota: false,
      middlewares: [quota({ onInternalError: (e) => faults.push(e) })],
    });
    const result = await vault.run(USER, { command: 'insert', path: '/memories/a', insert_line: 0, insert_text: 'x' });
    expect(result).toMatchObject({ isError: true, code: 'INTERNAL' });
    expect(String(result.content)).not.toContain('secret-bucket');
    expect(faults).toHaveLength(1);
  });
});
