/**
 * File history (src/vault/history.ts, src/vault/version-record.ts, src/crypto/version-record-format.ts)
 * at its edges, fast (memory store, a store clock the test moves, no pauses): what a user of
 * history, restore and dropVersion sees at each boundary, every error's code and message, the
 * malformed and moved records, a writer racing a restore. The mutation target `versions` runs this.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemvaultError } from '../../src/errors.js';
import { createVault, type Vault } from '../../src/index.js';
import {
  bodyHashOf as formatBodyHash,
  checkCurrentFresh,
  checkVersionPlace,
  VERSION_METADATA as FORMAT_METADATA,
  versionRecordPath,
} from '../../src/crypto/version-record-format.js';
import { MemoryStore } from '../../src/store/memory.js';
import { parseVersionKey, userFilesPrefix, userHistoryPrefix, versionKeyOf } from '../../src/store/layout.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../../src/store/port.js';
import { dropVersion, listHistory, MAX_LISTED_VERSIONS } from '../../src/vault/history.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import {
  bodyHashOf,
  clockSeq,
  nextSeq,
  openVersionRecord,
  sealVersionRecord,
  SEQ_PER_MS,
  staleVersionError,
  VERSION_METADATA,
  type VersionRecord,
} from '../../src/vault/version-record.js';

const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
const enc = (s: string) => new TextEncoder().encode(s);
const text = (d: Uint8Array | undefined) => (d === undefined ? undefined : Buffer.from(d).toString('utf8'));

/** A memory store whose clock the test sets (LastModified of every write). */
function clockedStore(start = Date.now()) {
  const clock = { now: start };
  const store = new MemoryStore(() => new Date(clock.now));
  return { store, clock };
}

async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<void> {
  const r = await vault.run(user, input);
  expect(r.isError, JSON.stringify(r.content)).toBe(false);
}

async function versionKeys(store: ObjectStore, uid: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, userHistoryPrefix(uid))) keys.push(o.key);
  return keys;
}

describe('version-record-format', () => {
  it('names the metadata field, the record path and the body hash exactly', () => {
    expect(FORMAT_METADATA).toBe('memvault-version');
    expect(VERSION_METADATA).toBe('memvault-version');
    expect(versionRecordPath('/memories/a/b.md')).toBe('/memories/.memvault/version/a/b.md');
    const body = enc('hello');
    const expected = createHash('sha256').update(body).digest('base64url');
    expect(formatBodyHash(body)).toBe(expected);
    expect(bodyHashOf(body)).toBe(expected);
    expect(formatBodyHash(new Uint8Array(0))).toBe('47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU');
  });
});

describe('version numbers', () => {
  it('clockSeq is the clock x 1,000 and never repeats; nextSeq is one past and lifts the clock numbers', () => {
    expect(SEQ_PER_MS).toBe(1000);
    const before = Date.now();
    const a = clockSeq();
    const b = clockSeq();
    expect(a).toBeGreaterThanOrEqual(before * 1000);
    expect(b).toBeGreaterThan(a);
    expect(nextSeq(41)).toBe(42);
    expect(clockSeq()).toBeGreaterThan(b); // a lower number does not lower the clock numbers
    // A number a little ahead of the clock (an edit of a version from a writer 50 ms ahead) lifts them.
    // (Relative to what was issued so far, so that the test holds whatever ran before it in this process.)
    const ahead = Math.max(clockSeq(), Date.now() * 1000) + 50_000;
    expect(nextSeq(ahead)).toBe(ahead + 1);
    expect(clockSeq()).toBe(ahead + 2); // never at or below what this process issued
    expect(clockSeq()).toBe(ahead + 3);
  });
});

describe('version records', () => {
  const codecP = createPlainCodecProvider().forUser('rec');
  const path = '/memories/r.md';
  const body = enc('body');
  const record = (over: Partial<VersionRecord> = {}): VersionRecord => ({
    seq: 7,
    actor: 'model',
    time: 1234,
    bodyHash: bodyHashOf(body),
    ...over,
  });
  /** The plain codec seals as is: the record is readable JSON in base64url. */
  const raw = (value: unknown) => ({ [VERSION_METADATA]: Buffer.from(JSON.stringify(value)).toString('base64url') });
  const damaged = {
    code: 'INTEGRITY',
    message:
      'Error: A stored version record did not open: the object is damaged or was moved from another file or user.',
  };

  it('seals exactly its fields, and only the ones present', async () => {
    const codec = await codecP;
    const json = (r: VersionRecord) =>
      JSON.parse(Buffer.from(sealVersionRecord(codec, path, r), 'base64url').toString('utf8')) as unknown;
    expect(json(record())).toEqual({ s: 7, a: 'model', t: 1234, h: bodyHashOf(body) });
    expect(json(record({ end: 'moved', keptAt: 0 }))).toEqual({
      s: 7,
      a: 'model',
      t: 1234,
      h: bodyHashOf(body),
      d: 'moved',
      k: 0,
    });
    expect(Object.keys(json(record({ end: 'expired', keptAt: 5 })) as object)).toEqual(['s', 'a', 't', 'h', 'd', 'k']);
  });

  it('opens what it sealed, with every actor, end and keptAt (0 too)', async () => {
    const codec = await codecP;
    for (const actor of ['model', 'host', 'restore', 'sweeper'] as const) {
      const r = record({ actor });
      expect(openVersionRecord(codec, path, { [VERSION_METADATA]: sealVersionRecord(codec, path, r) }, body)).toEqual(
        r,
      );
    }
    for (const end of ['deleted', 'moved', 'expired'] as const) {
      const r = record({ end, keptAt: 0 });
      expect(openVersionRecord(codec, path, { [VERSION_METADATA]: sealVersionRecord(codec, path, r) }, body)).toEqual(
        r,
      );
    }
    const plain = openVersionRecord(
      codec,
      path,
      { [VERSION_METADATA]: sealVersionRecord(codec, path, record()) },
      body,
    )!;
    expect('end' in plain).toBe(false);
    expect('keptAt' in plain).toBe(false);
    expect(openVersionRecord(codec, path, {}, body)).toBeUndefined();
    expect(openVersionRecord(codec, path, { other: 'x' }, body)).toBeUndefined();
  });

  it('refuses every malformed field with the damaged-record error', async () => {
    const codec = await codecP;
    const h = bodyHashOf(body);
    const good = { s: 7, a: 'model', t: 1, h };
    expect(openVersionRecord(codec, path, raw(good), body)).toEqual({ seq: 7, actor: 'model', time: 1, bodyHash: h });
    expect(openVersionRecord(codec, path, raw({ ...good, s: 1 }), body)?.seq).toBe(1);
    expect(openVersionRecord(codec, path, raw({ ...good, k: Number.MAX_SAFE_INTEGER }), body)?.keptAt).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    for (const bad of [
      { ...good, s: '7' },
      { ...good, s: 0 },
      { ...good, s: -3 },
      { ...good, s: 1.5 },
      { ...good, s: Number.MAX_SAFE_INTEGER + 1 },
      { ...good, s: undefined },
      { ...good, t: '1' },
      { ...good, t: undefined },
      { ...good, h: 5 },
      { ...good, h: undefined },
      { ...good, a: 'admin' },
      { ...good, a: undefined },
      { ...good, d: 'lost' },
      { ...good, d: null },
      { ...good, k: '5' },
      { ...good, k: 1.5 },
      { ...good, k: null },
      { ...good, h: bodyHashOf(enc('other')) },
    ]) {
      expect(() => openVersionRecord(codec, path, raw(bad), body), JSON.stringify(bad)).toThrow(
        expect.objectContaining(damaged),
      );
    }
    // Not JSON, and bytes that are not UTF-8 (without a NUL): the same error, never a SyntaxError.
    expect(() =>
      openVersionRecord(codec, path, { [VERSION_METADATA]: Buffer.from('{"s":').toString('base64url') }, body),
    ).toThrow(expect.objectContaining(damaged));
    const notUtf8 = Buffer.concat([
      Buffer.from('{"s":7,"a":"model","t":1,"h":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`${h}"}`),
    ]);
    expect(() => openVersionRecord(codec, path, { [VERSION_METADATA]: notUtf8.toString('base64url') }, body)).toThrow(
      expect.objectContaining(damaged),
    );
    // JSON that is no object (null would fail the destructuring with a TypeError): the same error.
    for (const notObject of [null, 7, '"s"']) {
      expect(() => openVersionRecord(codec, path, raw(notObject), body), String(notObject)).toThrow(
        expect.objectContaining(damaged),
      );
    }
  });

  it('the checks every reader makes (src/crypto/verified-read.ts): a kept version names its own number; a current file is not older than its history', () => {
    const misplaced = {
      code: 'INTEGRITY',
      message: 'Error: A stored version does not match its place in the history: it was moved or damaged.',
    };
    const r = record();
    expect(checkVersionPlace(r, 7)).toBe(r);
    for (const [found, seq] of [
      [r, 6],
      [r, 8],
      [undefined, 7],
    ] as const) {
      expect(() => checkVersionPlace(found, seq)).toThrow(expect.objectContaining(misplaced));
    }
    const stale = expect.objectContaining({ code: 'INTEGRITY', message: staleVersionError('/memories/x.md').message });
    for (const [seq, newest] of [
      [5, null],
      [5, 5],
      [6, 5],
      [undefined, null],
    ] as const) {
      expect(() => checkCurrentFresh('/memories/x.md', seq, newest), `${seq} ${newest}`).not.toThrow();
    }
    for (const [seq, newest] of [
      [4, 5],
      [undefined, 5],
      [undefined, 1],
    ] as const) {
      expect(() => checkCurrentFresh('/memories/x.md', seq, newest), `${seq} ${newest}`).toThrow(stale);
    }
  });

  it('an encrypted record is bound to its path and user: moved to another file it does not open', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: { masterKey: MASTER_KEY }, history: true });
    await ok(vault, 'u', { command: 'create', path: '/memories/a.md', file_text: 'A' });
    await ok(vault, 'u', { command: 'create', path: '/memories/b.md', file_text: 'B' });
    const keys = (await versionKeys(store, (await listAllUids(store))[0]!)).sort();
    expect(keys).toHaveLength(2);
    const [k0, k1] = keys as [string, string];
    const o0 = (await store.get(k0))!;
    const o1 = (await store.get(k1))!;
    // Swap the two records (each keeps its own body): neither opens for the other path.
    await store.put(k0, o0.body, { metadata: { ...o0.metadata, [VERSION_METADATA]: o1.metadata[VERSION_METADATA]! } });
    await expect(vault.history('u', '/memories')).rejects.toMatchObject(damaged);
    await vault.close();
  });

  it('the stale-version error names the path and the way back', () => {
    const e = staleVersionError('/memories/x.md');
    expect(e.code).toBe('INTEGRITY');
    expect(e.message).toBe(
      'Error: /memories/x.md holds an older version of the file than its history records: it was put back by something other than memvault. It is not shown; the operator can restore it (memvault user restore).',
    );
  });
});

async function listAllUids(store: ObjectStore): Promise<string[]> {
  const uids = new Set<string>();
  for await (const o of listAll(store, 'u/')) uids.add(o.key.split('/')[1]!);
  return [...uids];
}

describe('listHistory', () => {
  it('lists each file newest first with path, number, actor, time, size and end; a delete is a tombstone', async () => {
    const { store } = clockedStore();
    const vault = await createVault({ store, encryption: { masterKey: MASTER_KEY }, history: true });
    const t0 = Date.now();
    await ok(vault, 'u', { command: 'create', path: '/memories/d/a.md', file_text: 'one\n' });
    await ok(vault, 'u', { command: 'str_replace', path: '/memories/d/a.md', old_str: 'one', new_str: 'three' });
    await (await vault.files('u')).write('/memories/d/b.md', enc('host'));
    await ok(vault, 'u', { command: 'delete', path: '/memories/d/b.md' });
    const { versions } = await vault.history('u', '/memories/d');
    const a = versions.filter((v) => v.path === '/memories/d/a.md');
    const b = versions.filter((v) => v.path === '/memories/d/b.md');
    expect(a.map((v) => [v.actor, v.size, v.end])).toEqual([
      ['model', 6, undefined],
      ['model', 4, undefined],
    ]);
    expect(a[0]!.seq).toBe(a[1]!.seq + 1);
    expect(b.map((v) => [v.actor, v.size, v.end])).toEqual([
      ['model', 0, 'deleted'],
      ['host', 4, undefined],
    ]);
    expect('end' in a[0]!).toBe(false);
    expect(b[0]!.seq).toBeGreaterThan(b[1]!.seq);
    for (const v of versions) {
      expect(v.time).toBeInstanceOf(Date);
      expect(v.time.getTime()).toBeGreaterThanOrEqual(t0);
      expect(v.time.getTime()).toBeLessThanOrEqual(Date.now());
    }
    // One file's history alone, the whole user's, and a path with none.
    expect((await vault.history('u', '/memories/d/a.md')).versions).toEqual(a);
    expect((await vault.history('u', '/memories')).versions).toHaveLength(4);
    expect(await vault.history('u', '/memories/none.md')).toEqual({ versions: [], truncated: false });
    // A file named like a directory's prefix is not inside it.
    await ok(vault, 'u', { command: 'create', path: '/memories/dd.md', file_text: 'x' });
    expect((await vault.history('u', '/memories/d')).versions).toHaveLength(4);
    await vault.close();
  });

  it('stops at the limit and says it was truncated; exactly the limit is not truncated', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false, history: true });
    for (const name of ['a', 'b', 'c'])
      await ok(vault, 'p', { command: 'create', path: `/memories/${name}.md`, file_text: name });
    const codec = await createPlainCodecProvider().forUser('p');
    const ctx = { store, codec, files: undefined as never };
    expect(MAX_LISTED_VERSIONS).toBe(10_000);
    expect((await listHistory(ctx, '/memories')).truncated).toBe(false);
    expect(await listHistory(ctx, '/memories', 3)).toMatchObject({ truncated: false });
    const two = await listHistory(ctx, '/memories', 2);
    expect(two.truncated).toBe(true);
    expect(two.versions.map((v) => v.path)).toEqual(['/memories/a.md', '/memories/b.md']);
    expect((await listHistory(ctx, '/memories', 0)).versions).toEqual([]);
    await vault.close();
  });

  it('passes over stray objects, foreign names and versions dropped meanwhile; pages through the listing', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false, history: true });
    for (const name of ['a', 'b', 'c'])
      await ok(vault, 'p', { command: 'create', path: `/memories/${name}.md`, file_text: name });
    const codec = await createPlainCodecProvider().forUser('p');
    await store.put(`${userHistoryPrefix(codec.uid)}stray`, enc('x'));
    await store.put(`${userHistoryPrefix(codec.uid)}%E0%A4%A/@${'0'.repeat(16)}`, enc('x')); // a name that does not decode
    const keys = (await versionKeys(store, codec.uid)).filter((k) => parseVersionKey(codec.uid, k));
    const goneKey = keys.find((k) => k.includes('/b.md/'))!;
    // Two objects a page, and the b version gone between the listing and its GET.
    const paged = Object.assign(Object.create(store) as MemoryStore, {
      list: (prefix: string, options: { continuationToken?: string } = {}) =>
        store.list(prefix, { ...options, maxKeys: 2 }),
      get: (key: string) => (key === goneKey ? Promise.resolve(null) : store.get(key)),
    });
    const { versions, truncated } = await listHistory({ store: paged, codec, files: undefined as never }, '/memories');
    expect(truncated).toBe(false);
    expect(versions.map((v) => v.path)).toEqual(['/memories/a.md', '/memories/c.md']);
    await vault.close();
  });

  it('a version copied under another number of the same file is refused as moved', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: { masterKey: MASTER_KEY }, history: true });
    await ok(vault, 'u', { command: 'create', path: '/memories/a.md', file_text: 'A' });
    const uid = (await listAllUids(store))[0]!;
    const [key] = await versionKeys(store, uid);
    const parsed = parseVersionKey(uid, key!)!;
    const o = (await store.get(key!))!;
    await store.put(versionKeyOf(uid, parsed.fileKey, parsed.seq + 5), o.body, { metadata: o.metadata });
    await expect(vault.history('u', '/memories/a.md')).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: 'Error: A stored version does not match its place in the history: it was moved or damaged.',
    });
    await vault.close();
  });
});

describe('restore', () => {
  async function setup(encryption: false | { masterKey: string } = { masterKey: MASTER_KEY }) {
    const { store, clock } = clockedStore();
    const vault = await createVault({ store, encryption, history: true });
    const tick = () => {
      clock.now += 10_000;
      return new Date(clock.now - 5_000); // a moment between the last write and the next
    };
    return { store, clock, vault, tick };
  }

  it('restores, deletes and leaves files as they were at the time, counts each, sorts by path, and a dry run changes nothing', async () => {
    const { store, vault, tick } = await setup();
    const names = ['q', 'c', 'x', 'a', 'm', 'k'];
    for (const n of names) await ok(vault, 'u', { command: 'create', path: `/memories/${n}.md`, file_text: `${n}1` });
    await ok(vault, 'u', { command: 'create', path: '/memories/gone.md', file_text: 'g' });
    await ok(vault, 'u', { command: 'delete', path: '/memories/gone.md' });
    const asOf = tick();
    for (const n of ['q', 'x', 'm'])
      await ok(vault, 'u', { command: 'str_replace', path: `/memories/${n}.md`, old_str: `${n}1`, new_str: `${n}2` });
    await ok(vault, 'u', { command: 'create', path: '/memories/new.md', file_text: 'n' });
    tick();
    const files = await vault.files('u');
    const snapshot = async () => {
      const keys: string[] = [];
      for await (const o of listAll(store, 'u/')) keys.push(`${o.key}:${o.etag}`);
      return keys;
    };
    const before = await snapshot();
    const dry = await vault.restore('u', { asOf, dryRun: true });
    expect(await snapshot()).toEqual(before);
    const expected = [
      ['/memories/a.md', 'unchanged'],
      ['/memories/c.md', 'unchanged'],
      ['/memories/gone.md', 'unchanged'],
      ['/memories/k.md', 'unchanged'],
      ['/memories/m.md', 'restored'],
      ['/memories/new.md', 'deleted'],
      ['/memories/q.md', 'restored'],
      ['/memories/x.md', 'restored'],
    ];
    expect(dry.files.map((f) => [f.path, f.action])).toEqual(expected);
    expect(dry).toMatchObject({ asOf, dryRun: true, restored: 3, deleted: 1, unchanged: 4, conflicts: 0 });
    const history = await vault.history('u', '/memories/q.md');
    expect(dry.files.find((f) => f.path === '/memories/q.md')!.seq).toBe(history.versions[1]!.seq);
    expect(dry.files.find((f) => f.path === '/memories/a.md')!.seq).toBe(
      (await vault.history('u', '/memories/a.md')).versions[0]!.seq,
    );
    expect('seq' in dry.files.find((f) => f.path === '/memories/gone.md')!).toBe(false);
    expect('seq' in dry.files.find((f) => f.path === '/memories/new.md')!).toBe(false);

    const done = await vault.restore('u', { asOf, dryRun: false });
    expect(done.files.map((f) => [f.path, f.action])).toEqual(expected);
    expect(done).toMatchObject({ dryRun: false, restored: 3, deleted: 1, unchanged: 4, conflicts: 0 });
    for (const n of names) expect(text((await files.read(`/memories/${n}.md`))?.data)).toBe(`${n}1`);
    expect(await files.read('/memories/new.md')).toBeNull();
    expect(await files.read('/memories/gone.md')).toBeNull();
    // The restore is a version of its own (actor restore), and the deletion a tombstone.
    const q = (await vault.history('u', '/memories/q.md')).versions;
    expect(q.map((v) => [v.actor, v.size])).toEqual([
      ['restore', 2],
      ['model', 2],
      ['model', 2],
    ]);
    expect((await vault.history('u', '/memories/new.md')).versions[0]).toMatchObject({ end: 'deleted', size: 0 });
    // Restoring again changes nothing.
    const again = await vault.restore('u', { asOf, dryRun: false });
    expect(again).toMatchObject({ restored: 0, deleted: 0, unchanged: 8, conflicts: 0 });
    await vault.close();
  });

  it('a version kept exactly at asOf counts; one a millisecond later does not; a restore of one file leaves the others', async () => {
    const { vault, clock } = await setup(false);
    const at = clock.now;
    await ok(vault, 'p', { command: 'create', path: '/memories/a.md', file_text: 'first' });
    await ok(vault, 'p', { command: 'create', path: '/memories/b.md', file_text: 'b1' });
    clock.now = at + 1;
    await ok(vault, 'p', { command: 'str_replace', path: '/memories/a.md', old_str: 'first', new_str: 'second' });
    await ok(vault, 'p', { command: 'str_replace', path: '/memories/b.md', old_str: 'b1', new_str: 'b2' });
    const files = await vault.files('p');
    expect(
      (await vault.restore('p', { path: '/memories/a.md', asOf: new Date(at + 1), dryRun: false })).unchanged,
    ).toBe(1);
    expect(text((await files.read('/memories/a.md'))?.data)).toBe('second');
    const r = await vault.restore('p', { path: '/memories/a.md', asOf: new Date(at), dryRun: false });
    expect(r.files).toEqual([{ path: '/memories/a.md', action: 'restored', seq: expect.any(Number) }]);
    expect(text((await files.read('/memories/a.md'))?.data)).toBe('first');
    expect(text((await files.read('/memories/b.md'))?.data)).toBe('b2');
    // Before the file existed: it is deleted.
    expect((await vault.restore('p', { path: '/memories/a.md', asOf: new Date(at - 1), dryRun: false })).files).toEqual(
      [{ path: '/memories/a.md', action: 'deleted' }],
    );
    expect(await files.read('/memories/a.md')).toBeNull();
    await vault.close();
  });

  it('a version numbered past asOf by more than the clock margin is passed over, even if its record says kept earlier; at the margin it is opened', async () => {
    const { store, clock, vault } = await setup(false);
    const codec = await createPlainCodecProvider().forUser('p');
    const path = '/memories/k.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'old' });
    const asOf = clock.now + 1000;
    clock.now += 100_000; // the rewritten versions are kept (LastModified) well after asOf
    const fileKey = `${userFilesPrefix(codec.uid)}k.md`;
    const putVersion = async (seq: number, content: string, keptAt: number) => {
      const body = enc(content);
      const metadata = {
        [VERSION_METADATA]: sealVersionRecord(codec, path, {
          seq,
          actor: 'model',
          time: asOf,
          bodyHash: bodyHashOf(body),
          keptAt,
        }),
      };
      await store.put(versionKeyOf(codec.uid, fileKey, seq), body, { metadata });
    };
    // Numbered one past the margin: made after asOf, whatever its record says.
    await putVersion((asOf + 2000) * SEQ_PER_MS + 1, 'late', asOf - 1);
    // (The current file is older than these put-in versions, so it does not count as fresh: a restore rewrites it either way; the number says which version.)
    const pick = async () => (await vault.restore('p', { path, asOf: new Date(asOf), dryRun: true })).files[0]!.seq;
    const first = (await vault.history('p', path)).versions.at(-1)!.seq;
    expect(await pick()).toBe(first);
    // Numbered exactly at the margin, kept (by its record) at asOf: it is the one.
    const atMargin = (asOf + 2000) * SEQ_PER_MS;
    await putVersion(atMargin, 'rekeyed', asOf);
    expect(await pick()).toBe(atMargin);
    // Kept (by its record) a millisecond after asOf: not the one.
    await putVersion(atMargin, 'rekeyed', asOf + 1);
    expect(await pick()).toBe(first);
    await vault.close();
  });

  it('a file put back by someone else (no record, or an older one) is rewritten even when its bytes are the ones wanted', async () => {
    const { store, clock, vault } = await setup();
    const path = '/memories/s.md';
    await ok(vault, 'u', { command: 'create', path, file_text: 'v1' });
    const asOf = new Date(clock.now + 1);
    const uid = (await listAllUids(store))[0]!;
    const fileKey = (await listAllKeys(store, `u/${uid}/f/`))[0]!;
    const old = (await store.get(fileKey))!;
    clock.now += 10_000;
    await ok(vault, 'u', { command: 'str_replace', path, old_str: 'v1', new_str: 'v2' });
    await store.put(fileKey, old.body, { metadata: old.metadata }); // v1 put back with its old record
    const files = await vault.files('u');
    await expect(files.read(path)).rejects.toMatchObject({ code: 'INTEGRITY' });
    const r = await vault.restore('u', { path, asOf, dryRun: false });
    expect(r.files).toEqual([{ path, action: 'restored', seq: expect.any(Number) }]);
    expect(text((await files.read(path))?.data)).toBe('v1');
    // And a damaged current object (it does not open): replaced by the restore.
    await store.put(fileKey, enc('garbage that is no sealed object at all'));
    expect((await vault.restore('u', { path, asOf, dryRun: false })).restored).toBe(1);
    expect(text((await files.read(path))?.data)).toBe('v1');
    await vault.close();
  });

  it('a writer racing every attempt makes the file a conflict after five tries; another failure is passed through', async () => {
    const { store, clock, vault } = await setup(false);
    const path = '/memories/r.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'one' });
    const asOf = new Date(clock.now + 1);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'str_replace', path, old_str: 'one', new_str: 'two' });
    let filePuts = 0;
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      put: (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) => {
        if (key.split('/')[2] === 'f') {
          filePuts += 1;
          return Promise.reject(new PreconditionFailedError(key));
        }
        return store.put(key, body, options);
      },
    });
    const raced = await createVault({ store: racing, encryption: false, history: true });
    expect(await raced.restore('p', { path, asOf, dryRun: false })).toMatchObject({
      files: [{ path, action: 'conflict' }],
      conflicts: 1,
      restored: 0,
    });
    expect(filePuts).toBe(5);
    const failing = Object.assign(Object.create(store) as MemoryStore, {
      put: (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) =>
        key.split('/')[2] === 'f' ? Promise.reject(new Error('disk on fire')) : store.put(key, body, options),
    });
    const broken = await createVault({ store: failing, encryption: false, history: true });
    await expect(broken.restore('p', { path, asOf, dryRun: false })).rejects.toThrow();
    expect(text((await (await vault.files('p')).read(path))?.data)).toBe('two');
    await raced.close();
    await broken.close();
    await vault.close();
  });

  it('a writer that wins once is looked at again: the restore then writes over what it wrote', async () => {
    const { store, clock, vault } = await setup(false);
    const path = '/memories/w.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'one' });
    const asOf = new Date(clock.now + 1);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'str_replace', path, old_str: 'one', new_str: 'two' });
    let raced = false;
    const other = await createVault({ store, encryption: false, history: true });
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      put: async (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) => {
        if (!raced && key.split('/')[2] === 'f' && options?.ifMatch) {
          raced = true;
          await ok(other, 'p', { command: 'str_replace', path, old_str: 'two', new_str: 'three' });
        }
        return store.put(key, body, options);
      },
    });
    const restorer = await createVault({ store: racing, encryption: false, history: true });
    expect((await restorer.restore('p', { path, asOf, dryRun: false })).files).toEqual([
      { path, action: 'restored', seq: expect.any(Number) },
    ]);
    expect(text((await (await vault.files('p')).read(path))?.data)).toBe('one');
    expect((await vault.history('p', path)).versions.map((v) => v.actor)).toEqual([
      'restore',
      'model',
      'model',
      'model',
    ]);
    await other.close();
    await restorer.close();
    await vault.close();
  });

  it('a path without history restores nothing', async () => {
    const { clock, vault } = await setup(false);
    await ok(vault, 'p', { command: 'create', path: '/memories/a.md', file_text: 'a' });
    const r = await vault.restore('p', { path: '/memories/none', asOf: new Date(clock.now), dryRun: false });
    expect(r).toMatchObject({ files: [], restored: 0, deleted: 0, unchanged: 0, conflicts: 0 });
    await vault.close();
  });

  it('a file re-created while the restore deletes it stays: the marker is removed only If-Match its own ETag', async () => {
    const { store, clock, vault } = await setup(false);
    const path = '/memories/late.md';
    const asOf = new Date(clock.now);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'create', path, file_text: 'after asOf' });
    const other = await createVault({ store, encryption: false, history: true });
    let raced = false;
    // A store like S3 (no deleteExactly): the restore fences with a marker, then deletes it.
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      deleteExactly: undefined,
      delete: async (key: string, options?: Parameters<MemoryStore['delete']>[1]) => {
        if (!raced && key.split('/')[2] === 'f') {
          raced = true; // another instance re-creates the file over the marker first
          await ok(other, 'p', { command: 'create', path, file_text: 'written meanwhile' });
        }
        return store.delete(key, options);
      },
    });
    const restorer = await createVault({ store: racing, encryption: false, history: true });
    expect((await restorer.restore('p', { path, asOf, dryRun: false })).files).toEqual([{ path, action: 'deleted' }]);
    expect(raced).toBe(true);
    expect(text((await (await vault.files('p')).read(path))?.data)).toBe('written meanwhile');
    await other.close();
    await restorer.close();
    await vault.close();
  });

  it('a file created between the look and the write is looked at again, never written over blindly', async () => {
    for (const damagedCurrent of [false, true]) {
      const { store, clock, vault } = await setup(false);
      const path = '/memories/c.md';
      await ok(vault, 'p', { command: 'create', path, file_text: 'keep' });
      const asOf = new Date(clock.now);
      clock.now += 10_000;
      const fileKey = (await listAllKeys(store, 'u/')).find((k) => k.split('/')[2] === 'f')!;
      if (damagedCurrent) {
        await store.put(fileKey, enc('keep but put back without a record'));
      } else {
        await ok(vault, 'p', { command: 'delete', path });
      }
      const other = await createVault({ store, encryption: false, history: true });
      let raced = false;
      const racing = Object.assign(Object.create(store) as MemoryStore, {
        put: async (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) => {
          if (!raced && key === fileKey) {
            raced = true; // another instance writes exactly the bytes the restore wants, first
            if (damagedCurrent) await (await other.files('p')).write(path, enc('keep'));
            else await ok(other, 'p', { command: 'create', path, file_text: 'keep' });
          }
          return store.put(key, body, options);
        },
      });
      const restorer = await createVault({ store: racing, encryption: false, history: true });
      const r = await restorer.restore('p', { path, asOf, dryRun: false });
      expect(raced).toBe(true);
      expect(
        r.files.map((f) => f.action),
        String(damagedCurrent),
      ).toEqual(['unchanged']);
      expect(text((await (await vault.files('p')).read(path))?.data)).toBe('keep');
      expect((await vault.history('p', path)).versions[0]!.actor).not.toBe('restore');
      await other.close();
      await restorer.close();
      await vault.close();
    }
  });

  it('a version dropped while the restore picks one is passed over', async () => {
    const { store, clock, vault } = await setup(false);
    const path = '/memories/d.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'one' });
    const asOf = new Date(clock.now + 10); // the next edit, numbered within the clock margin, is looked at
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'str_replace', path, old_str: 'one', new_str: 'two' });
    const newestKey = (await listAllKeys(store, 'u/')).filter((k) => k.split('/')[2] === 'v').sort()[0]!;
    const dropping = Object.assign(Object.create(store) as MemoryStore, {
      get: (key: string) => (key === newestKey ? Promise.resolve(null) : store.get(key)),
    });
    const restorer = await createVault({ store: dropping, encryption: false, history: true });
    const first = (await vault.history('p', path)).versions[1]!.seq;
    expect((await restorer.restore('p', { path, asOf, dryRun: true })).files).toEqual([
      { path, action: 'restored', seq: first },
    ]);
    await restorer.close();
    await vault.close();
  });

  it('a current file that cannot be read for another reason than integrity fails the restore', async () => {
    const { store, clock, vault } = await setup(false);
    const path = '/memories/e.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'one' });
    const asOf = new Date(clock.now);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'str_replace', path, old_str: 'one', new_str: 'two' });
    const fileKey = (await listAllKeys(store, 'u/')).find((k) => k.split('/')[2] === 'f')!;
    for (const failure of [
      new Error('network down'),
      new MemvaultError('KEY_UNAVAILABLE', 'Error: key service down'),
    ]) {
      const failing = Object.assign(Object.create(store) as MemoryStore, {
        get: (key: string) => (key === fileKey ? Promise.reject(failure) : store.get(key)),
      });
      const restorer = await createVault({ store: failing, encryption: false, history: true });
      await expect(restorer.restore('p', { path, asOf, dryRun: false })).rejects.toBe(failure);
      await restorer.close();
    }
    expect(text((await (await vault.files('p')).read(path))?.data)).toBe('two');
    await vault.close();
  });

  it('a file below what is now a file is a conflict', async () => {
    const { clock, vault } = await setup(false);
    await ok(vault, 'p', { command: 'create', path: '/memories/d/f.md', file_text: 'f' });
    const asOf = new Date(clock.now + 1);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'delete', path: '/memories/d' });
    await ok(vault, 'p', { command: 'create', path: '/memories/d', file_text: 'now a file' });
    const r = await vault.restore('p', { path: '/memories/d/f.md', asOf, dryRun: false });
    expect(r).toMatchObject({ files: [{ path: '/memories/d/f.md', action: 'conflict' }], conflicts: 1 });
    await vault.close();
  });
});

async function listAllKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, prefix)) keys.push(o.key);
  return keys;
}

describe('dropVersion', () => {
  it('drops one version for good, says false when there is none, and refuses a number that is not a positive integer', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false, history: true });
    const path = '/memories/a.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'secret' });
    await ok(vault, 'p', { command: 'str_replace', path, old_str: 'secret', new_str: 'clean' });
    const [newest, older] = (await vault.history('p', path)).versions;
    expect(await vault.dropVersion('p', path, older!.seq)).toBe(true);
    expect((await vault.history('p', path)).versions.map((v) => v.seq)).toEqual([newest!.seq]);
    expect(await vault.dropVersion('p', path, older!.seq)).toBe(false);
    expect(await vault.dropVersion('p', '/memories/none.md', 1)).toBe(false);
    expect(await vault.dropVersion('p', path, 1)).toBe(false);
    // The vault checks its arguments first (src/entry/arguments.ts); history.ts refuses the same on its own.
    const codec = await createPlainCodecProvider().forUser('p');
    const ctx = { store, codec, files: undefined as never };
    for (const bad of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, Infinity]) {
      await expect(vault.dropVersion('p', path, bad)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(dropVersion(ctx, path, bad)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: 'memvault: a version is named by its sequence number, a positive integer',
      });
    }
    expect((await vault.history('p', path)).versions).toHaveLength(1);
    await vault.close();
  });
});

async function setupFar() {
  const { store, clock } = clockedStore();
  const vault = await createVault({ store, encryption: false, history: true });
  return { store, clock, vault };
}

// Last: the far-ahead tombstone lifts this process's version numbers a day ahead.
describe('restore after a clock far ahead', () => {
  it('numbers the restored version above the newest kept one, even a tombstone numbered by a clock far ahead', async () => {
    const { store, clock, vault } = await setupFar();
    const codec = await createPlainCodecProvider().forUser('p');
    const path = '/memories/t.md';
    await ok(vault, 'p', { command: 'create', path, file_text: 'keep' });
    const asOf = new Date(clock.now + 1);
    clock.now += 10_000;
    await ok(vault, 'p', { command: 'delete', path });
    // A tombstone from a writer whose clock ran a day ahead.
    const ahead = (Date.now() + 86_400_000) * SEQ_PER_MS + 777;
    const empty = new Uint8Array(0);
    const fileKey = `${userFilesPrefix(codec.uid)}t.md`;
    await store.put(versionKeyOf(codec.uid, fileKey, ahead), empty, {
      metadata: {
        [VERSION_METADATA]: sealVersionRecord(codec, path, {
          seq: ahead,
          actor: 'model',
          time: Date.now(),
          bodyHash: bodyHashOf(empty),
          end: 'deleted',
        }),
      },
    });
    const fresh = await createVault({ store, encryption: false, history: true }); // no numbers remembered
    expect((await fresh.restore('p', { path, asOf, dryRun: false })).restored).toBe(1);
    expect(text((await (await fresh.files('p')).read(path))?.data)).toBe('keep');
    const newest = (await fresh.history('p', path)).versions[0]!;
    expect(newest.actor).toBe('restore');
    expect(newest.seq).toBeGreaterThan(ahead);
    await fresh.close();
    await vault.close();
  });
});
