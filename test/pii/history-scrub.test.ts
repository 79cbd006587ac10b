/**
 * Redaction and file history (docs/pii.md, "Redaction and file history"): an edit whose redaction
 * reaches into text the file already held (a label written before a value stored unlabelled, a value
 * assembled from stored pieces) drops the file's older kept versions, which hold what is now
 * redacted; the redacted version stays as the newest. An edit that brings a value in whole keeps the
 * history. History is on by default.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { Middleware } from '../../src/pipeline/context.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError, type ObjectStore, type PutOptions } from '../../src/store/port.js';
import { isKeptVersionKey, storedText, StoreWrapper } from '../kit/stores.js';

const U = 'scrub-user';
const VALUE = 'Tr0ut&Pine2023';

/** `store` is the memory store underneath (for raw scans), `wrap` what the vault runs on instead. */
async function setup(
  options: { encrypted?: boolean; wrap?: (inner: MemoryStore) => ObjectStore; history?: boolean } = {},
) {
  const store = new MemoryStore();
  const decisions: unknown[] = [];
  const capture: Middleware = async (ctx, next) => {
    const result = await next();
    decisions.push(ctx.decisions.pii);
    return result;
  };
  const vault = await createVault({
    store: options.wrap ? options.wrap(store) : store,
    outerMiddlewares: [capture],
    ...(options.history === undefined ? {} : { history: options.history }),
    ...(options.encrypted
      ? { encryption: { masterKey: Buffer.alloc(32, 3).toString('base64') } }
      : { encryption: false as const }),
  });
  return { store, vault, decisions };
}

/** Refuses the next PUT of a kept version (a store error), once armed. */
class FailVersionPut extends StoreWrapper {
  failNext = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    if (this.failNext && isKeptVersionKey(key)) {
      this.failNext = false;
      throw new Error('injected version PUT failure');
    }
    return super.put(key, body, options);
  }
}

/** Applies the next conditional PUT of a file, then loses its answer (the SDK's retry meets our own write: 412). */
class LoseAnswer extends StoreWrapper {
  loseNext = false;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const result = await super.put(key, body, options);
    if (this.loseNext && options?.ifMatch !== undefined && !isKeptVersionKey(key)) {
      this.loseNext = false;
      throw new PreconditionFailedError(key);
    }
    return result;
  }
}

/** Runs `after` once, right after the next kept version's PUT. */
class AfterVersionPut extends StoreWrapper {
  after: (() => Promise<void>) | undefined;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const result = await super.put(key, body, options);
    const hook = this.after;
    if (hook && isKeptVersionKey(key)) {
      this.after = undefined;
      await hook();
    }
    return result;
  }
}

async function ok(vault: Vault, input: Record<string, unknown>) {
  const result = await vault.run(U, input);
  expect(result.isError, JSON.stringify(result.content)).toBe(false);
  return result;
}

async function versionsOf(vault: Vault, path: string): Promise<number> {
  return (await vault.history(U, path)).versions.length;
}

async function fileText(vault: Vault, path: string): Promise<string> {
  const file = await (await vault.files(U)).read(path);
  return new TextDecoder().decode(file!.data);
}

describe.each([
  ['plain', false],
  ['encrypted', true],
])('redaction of stored text drops the file history that holds it (%s)', (_name, encrypted) => {
  it('value then label: the older versions go, the redacted one stays, other files keep theirs', async () => {
    const { store, vault, decisions } = await setup({ encrypted });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `note\nx ${VALUE}\n` });
    await ok(vault, { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'top' });
    await ok(vault, { command: 'create', path: '/memories/b.md', file_text: 'other\n' });
    await ok(vault, { command: 'str_replace', path: '/memories/b.md', old_str: 'other', new_str: 'another' });
    expect(await versionsOf(vault, '/memories/a.md')).toBe(2);
    if (!encrypted) expect(await storedText(store)).toContain(VALUE);

    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    expect(decisions.at(-1)).toMatchObject({ action: 'redacted', redactedStored: true });
    expect(await fileText(vault, '/memories/a.md')).toBe('top\nnote\npassword: [REDACTED:SECRET]\n');
    const { versions } = await vault.history(U, '/memories/a.md');
    expect(versions).toHaveLength(1);
    expect(versions[0]!.size).toBe(new TextEncoder().encode('top\nnote\npassword: [REDACTED:SECRET]\n').byteLength);
    expect(await versionsOf(vault, '/memories/b.md')).toBe(2);
    if (!encrypted) expect(await storedText(store)).not.toContain(VALUE);

    // A restore to before the redacting edit cannot bring the value back: no version of then is
    // left, so the file "did not exist" then and the restore deletes it.
    const before = new Date(versions[0]!.time.getTime() - 1);
    await vault.restore(U, { path: '/memories/a.md', asOf: before });
    expect(await (await vault.files(U)).read('/memories/a.md')).toBeNull();
    if (!encrypted) expect(await storedText(store)).not.toContain(VALUE);
    // The file's own reads stay fresh (the newest kept version is what a read compares with).
    expect((await vault.run(U, { command: 'view', path: '/memories/b.md' })).isError).toBe(false);
    await vault.close();
  });

  it('a value the edit brings in whole redacts nothing stored: the history is kept', async () => {
    const { vault, decisions } = await setup({ encrypted });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: 'password: TBD\n' });
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'TBD', new_str: VALUE });
    expect(decisions.at(-1)).toMatchObject({ action: 'redacted' });
    expect(decisions.at(-1)).not.toHaveProperty('redactedStored');
    expect(await fileText(vault, '/memories/a.md')).toBe('password: [REDACTED:SECRET]\n');
    expect(await versionsOf(vault, '/memories/a.md')).toBe(2);
    await vault.close();
  });
});

describe('redaction of stored text, edge cases', () => {
  it('a file with a deleted and re-created past loses its tombstone too (every older version)', async () => {
    const { store, vault } = await setup();
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `old ${VALUE}\n` });
    await ok(vault, { command: 'delete', path: '/memories/a.md' });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    expect(await versionsOf(vault, '/memories/a.md')).toBe(3);
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    expect(await versionsOf(vault, '/memories/a.md')).toBe(1);
    expect(await storedText(store)).not.toContain(`x ${VALUE}`);
    await vault.close();
  });

  it('with history off the edit is redacted and nothing else happens', async () => {
    const { store, vault, decisions } = await setup({ history: false });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    expect(decisions.at(-1)).toMatchObject({ redactedStored: true });
    expect(await storedText(store)).not.toContain(VALUE);
    await vault.close();
  });

  it("the edit's own version not kept (its PUT failed): every older version goes all the same", async () => {
    const store = new MemoryStore();
    const failing = new FailVersionPut(store);
    const { vault } = await setup({ wrap: () => failing });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    await ok(vault, { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'more' });
    failing.failNext = true;
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    expect(failing.failNext).toBe(false); // the version PUT was refused
    expect(await versionsOf(vault, '/memories/a.md')).toBe(0);
    expect(await storedText(store)).not.toContain(VALUE);
    // A current version newer than (here: without) the history reads as it is.
    expect((await vault.run(U, { command: 'view', path: '/memories/a.md' })).isError).toBe(false);
    await vault.close();
  });

  it('a lost answer: the edit finds its write landed, and drops by the number of the version it found', async () => {
    const store = new MemoryStore();
    const losing = new LoseAnswer(store);
    const { vault } = await setup({ wrap: () => losing });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    await ok(vault, { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'more' });
    losing.loseNext = true;
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    expect(losing.loseNext).toBe(false);
    expect(await fileText(vault, '/memories/a.md')).toBe('password: [REDACTED:SECRET]\nmore\n');
    expect(await storedText(store)).not.toContain(VALUE);
    expect((await vault.run(U, { command: 'view', path: '/memories/a.md' })).isError).toBe(false);
    await vault.close();
  });

  it('another instance writing the file between the edit and its drop keeps its newer version', async () => {
    const store = new MemoryStore();
    const hooked = new AfterVersionPut(store);
    const { vault } = await setup({ wrap: () => hooked });
    const other = await createVault({ store, encryption: false });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    hooked.after = async () => {
      expect(
        (await other.run(U, { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'theirs' }))
          .isError,
      ).toBe(false);
    };
    await ok(vault, { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: 'password: ' });
    const { versions } = await vault.history(U, '/memories/a.md');
    // Ours (redacted) and theirs, newer: both kept; the one holding the value gone.
    expect(versions).toHaveLength(2);
    expect(await fileText(vault, '/memories/a.md')).toBe('password: [REDACTED:SECRET]\ntheirs\n');
    expect(await storedText(store)).not.toContain(VALUE);
    await other.close();
    await vault.close();
  });

  it('older versions that cannot be deleted: a clear error, the edit itself stored redacted', async () => {
    class NoBatchDelete extends StoreWrapper {
      failing = false;
      override async deleteMany(keys: string[]): Promise<{ failed: string[] }> {
        return this.failing ? { failed: keys } : super.deleteMany(keys);
      }
    }
    let store!: NoBatchDelete;
    const { vault } = await setup({ wrap: (inner) => (store = new NoBatchDelete(inner)) });
    await ok(vault, { command: 'create', path: '/memories/a.md', file_text: `x ${VALUE}\n` });
    store.failing = true;
    const result = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'x ',
      new_str: 'password: ',
    });
    expect(result).toMatchObject({ isError: true, code: 'STORE_UNAVAILABLE' });
    expect(JSON.stringify(result.content)).toMatch(
      /1 earlier version\(s\) of the file that still hold it could not be deleted/,
    );
    expect(JSON.stringify(result.content)).not.toContain(VALUE);
    expect(await fileText(vault, '/memories/a.md')).toBe('password: [REDACTED:SECRET]\n');
    store.failing = false;
    await vault.close();
  });
});
