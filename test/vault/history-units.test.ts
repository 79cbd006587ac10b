/** The pieces of file history on their own: version keys, options, the env switch, history off. */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import {
  parseVersionKey,
  userFilesPrefix,
  versionKeyOf,
  versionsPrefixOf,
  VERSION_KEY_EXTRA_BYTES,
} from '../../src/store/layout.js';
import { listAll } from '../../src/store/port.js';
import { MemoryStore } from '../../src/store/memory.js';
import { historyFromEnv, resolveHistoryOptions } from '../../src/vault/history-options.js';
import { meterHistory, VERSION_FLOOR_BYTES } from '../../src/vault/history-usage.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';

describe('version keys (src/store/layout.ts)', () => {
  const uid = 'UID';
  const file = `${userFilesPrefix(uid)}AAA/BBB`;

  it('sort newest first, never share a prefix with the files below a same-named directory, and parse back', () => {
    const keys = [1, 2, 10, 1_765_000_000_000_000].map((seq) => versionKeyOf(uid, file, seq));
    expect([...keys].sort()).toEqual([...keys].reverse());
    for (const key of keys) expect(key.startsWith(versionsPrefixOf(uid, file))).toBe(true);
    expect(versionKeyOf(uid, `${file}/CCC`, 5).startsWith(versionsPrefixOf(uid, file))).toBe(false);
    expect(parseVersionKey(uid, keys[2]!)).toEqual({ fileKey: file, seq: 10 });
    expect(keys[0]!.length - file.length).toBe(VERSION_KEY_EXTRA_BYTES);
    expect(keys[0]).toBe('u/UID/v/AAA/BBB/@9007199254740990');
  });

  it('refuse what is not a version key of this user', () => {
    for (const key of [
      'u/UID/f/AAA',
      'u/UID/v/@0000000000000001',
      'u/UID/v/AAA/@123',
      'u/UID/v/AAA/@900719925474099x',
      'u/OTHER/v/AAA/@9007199254740990',
      'u/UID/v/AAA/@9007199254740991',
    ]) {
      expect(parseVersionKey(uid, key)).toBeNull();
    }
    expect(() => versionKeyOf(uid, file, 0)).toThrow();
    expect(() => versionKeyOf(uid, 'u/OTHER/f/AAA', 1)).toThrow();
  });
});

describe('history options', () => {
  it('on unless turned off; defaults 30 days and 100 versions; bad numbers refused', () => {
    expect(resolveHistoryOptions(undefined)).toEqual({ retentionDays: 30, maxVersions: 100 });
    expect(resolveHistoryOptions(false)).toBeUndefined();
    expect(resolveHistoryOptions(true)).toEqual({ retentionDays: 30, maxVersions: 100 });
    expect(resolveHistoryOptions({ maxVersions: 5 })).toEqual({ retentionDays: 30, maxVersions: 5 });
    for (const bad of [
      { retentionDays: 0 },
      { retentionDays: Infinity },
      { maxVersions: 0 },
      { maxVersions: 1001 },
      { maxVersions: 2.5 },
    ]) {
      expect(() => resolveHistoryOptions(bad)).toThrow(/history\./);
    }
  });

  it('MEMVAULT_HISTORY and its knobs', () => {
    // Unset, or on without knobs: the vault's default (on, 30 days, 100 versions).
    expect(historyFromEnv({})).toBeUndefined();
    expect(historyFromEnv({ MEMVAULT_HISTORY: 'on' })).toBeUndefined();
    expect(historyFromEnv({ MEMVAULT_HISTORY: '0' })).toBe(false);
    expect(historyFromEnv({ MEMVAULT_HISTORY: 'off', MEMVAULT_HISTORY_DAYS: '7' })).toBe(false);
    // The knobs apply without the switch, as history is on by default.
    expect(historyFromEnv({ MEMVAULT_HISTORY_DAYS: '7' })).toEqual({ retentionDays: 7 });
    expect(historyFromEnv({ MEMVAULT_HISTORY_VERSIONS: '3' })).toEqual({ maxVersions: 3 });
    expect(() => historyFromEnv({ MEMVAULT_HISTORY_DAYS: '0' })).toThrow(/retentionDays/);
    expect(
      historyFromEnv({ MEMVAULT_HISTORY: '1', MEMVAULT_HISTORY_DAYS: '7', MEMVAULT_HISTORY_VERSIONS: '3' }),
    ).toEqual({ retentionDays: 7, maxVersions: 3 });
    expect(() => historyFromEnv({ MEMVAULT_HISTORY: 'maybe' })).toThrow(/MEMVAULT_HISTORY/);
    expect(() => historyFromEnv({ MEMVAULT_HISTORY: '1', MEMVAULT_HISTORY_VERSIONS: 'lots' })).toThrow(
      /MEMVAULT_HISTORY_VERSIONS/,
    );
    expect(() => historyFromEnv({ MEMVAULT_HISTORY: '1', MEMVAULT_HISTORY_DAYS: '-1' })).toThrow(/retentionDays/);
  });
});

describe('history on by default, and its off switch', () => {
  it('by default every change keeps a version: the create, the edit and the delete (a tombstone)', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: { masterKey: new Uint8Array(32).fill(7) } });
    for (const input of [
      { command: 'create', path: '/memories/a.md', file_text: 'a\n' },
      { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' },
      { command: 'delete', path: '/memories/a.md' },
    ]) {
      expect((await vault.run('u', input)).isError).toBe(false);
    }
    const { versions } = await vault.history('u', '/memories/a.md');
    expect(versions.map((v) => [v.actor, v.end ?? 'content'])).toEqual([
      ['model', 'deleted'],
      ['model', 'content'],
      ['model', 'content'],
    ]);
    await vault.close();
  });

  it('history: false keeps no version, and the history API says it is off', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, history: false, encryption: { masterKey: new Uint8Array(32).fill(7) } });
    for (const input of [
      { command: 'create', path: '/memories/a.md', file_text: 'a\n' },
      { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' },
      { command: 'delete', path: '/memories/a.md' },
    ]) {
      expect((await vault.run('u', input)).isError).toBe(false);
    }
    const keys: string[] = [];
    for await (const o of listAll(store, 'u/')) keys.push(o.key);
    expect(keys.filter((k) => k.split('/')[2] === 'v')).toEqual([]);
    await expect(vault.history('u', '/memories/a.md')).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(vault.restore('u', { asOf: new Date() })).rejects.toMatchObject({ code: 'CONFIG' });
    await vault.close();
  });

  it('a path whose version keys would pass the store key limit is refused as too long, history on or off', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false, history: true });
    // Plain names: the key is u/{26-char uid}/f/ + the name; pick a name that fits alone but not with a version suffix.
    const rest = 1024 - 'u/'.length - 26 - '/f/'.length - 5; // 5 bytes short of the limit
    const name = [...Array.from({ length: 4 }, () => 'n'.repeat(200)), 'm'.repeat(rest - 4 * 201)].join('/');
    const r = await vault.run('u', { command: 'create', path: `/memories/${name}`, file_text: 'x' });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(/too long to store/);
    // With history off too: the depth a path may have does not change with the setting.
    const off = await createVault({ store: new MemoryStore(), encryption: false, history: false });
    expect(
      JSON.stringify((await off.run('u', { command: 'create', path: `/memories/${name}`, file_text: 'x' })).content),
    ).toMatch(/too long to store/);
    await vault.close();
    await off.close();
  });
});

describe('the history allowance: meterHistory (src/vault/history-usage.ts)', () => {
  const at = new Date('2026-12-01T10:00:00Z');

  async function setup() {
    const store = new MemoryStore(() => at); // one store tick for every object: the number decides
    const codec = await createPlainCodecProvider().forUser('m');
    const file = (name: string) => `${codec.filesPrefix}${name}`;
    const put = (name: string, seq: number, bytes: number) =>
      store.put(versionKeyOf(codec.uid, file(name), seq), new Uint8Array(bytes));
    return { store, codec, put };
  }

  it('counts plaintext bytes, every version at least the floor (a tombstone, an empty or a small file), and ignores stray keys; without pruneTo it deletes nothing', async () => {
    const { store, codec, put } = await setup();
    await put('a', 1, 1000);
    await put('a', 2, 2000);
    await put('b', 5, 0);
    await put('c', 6, VERSION_FLOOR_BYTES - 1);
    await put('d', 7, VERSION_FLOOR_BYTES + 1);
    await store.put(`u/${codec.uid}/v/stray`, new Uint8Array(99));
    expect(VERSION_FLOOR_BYTES).toBe(512);
    expect(await meterHistory(store, codec)).toEqual({ bytes: 1000 + 2000 + 512 + 512 + 513, versions: 5 });
    // Down to nothing: every file's newest stays (a's 2,000, b's tombstone, c, d).
    expect(await meterHistory(store, codec, { bytes: 0, versions: 0 })).toEqual({
      bytes: 2000 + 512 + 512 + 513,
      versions: 4,
    });
  });

  it('drops the oldest first (same store time: the lower number), never a file newest, and stops once under both marks', async () => {
    const { store, codec, put } = await setup();
    for (const seq of [1, 2, 3, 4]) await put('a', seq, 1000);
    for (const seq of [7, 8]) await put('b', seq, 1000);
    const left = async () => {
      const seqs = [];
      for await (const o of listAll(store, `u/${codec.uid}/v/`)) seqs.push(parseVersionKey(codec.uid, o.key)!.seq);
      return seqs.sort((x, y) => x - y);
    };
    // Under both: nothing goes.
    expect(await meterHistory(store, codec, { bytes: 6000, versions: 6 })).toEqual({ bytes: 6000, versions: 6 });
    // The count alone past its mark: the oldest go until it is under.
    expect(await meterHistory(store, codec, { bytes: 1_000_000, versions: 5 })).toEqual({ bytes: 5000, versions: 5 });
    expect(await left()).toEqual([2, 3, 4, 7, 8]);
    // The bytes alone past theirs.
    expect(await meterHistory(store, codec, { bytes: 3500, versions: 100 })).toEqual({ bytes: 3000, versions: 3 });
    expect(await left()).toEqual([4, 7, 8]);
  });

  it('a delete that fails is counted as still there', async () => {
    const { store, codec, put } = await setup();
    for (const seq of [1, 2, 3]) await put('a', seq, 1000);
    const failing = Object.assign(Object.create(store) as MemoryStore, {
      deleteMany: async (keys: string[]) => ({ failed: keys.slice(0, 1) }),
    });
    expect(await meterHistory(failing, codec, { bytes: 1000, versions: 10 })).toEqual({ bytes: 2000, versions: 2 });
  });
});
