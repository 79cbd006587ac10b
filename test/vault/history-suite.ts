/**
 * File history (docs/versions.md), held to the same behaviour on every store: the memory and file
 * stores here (test/vault/history.test.ts), radosgw in test/s3/history.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { USERS_PREFIX } from '../../src/store/layout.js';
import { FaultyStore } from '../faulty-store.js';
import { sweep } from '../../src/expiry/sweep.js';

export interface HistoryStores {
  /** A fresh, empty store for one test (an object, so that tests can scan and tamper with it). */
  make(): Promise<ObjectStore>;
}

const text = (data: Uint8Array | undefined) => (data === undefined ? undefined : Buffer.from(data).toString('utf8'));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function historySuite(name: string, stores: HistoryStores, options: { timeoutMs?: number } = {}): void {
  const masterKey = randomBytes(32).toString('base64');
  const opened: Vault[] = [];
  const timeout = options.timeoutMs ?? 30_000;

  async function open(store: ObjectStore, extra: Parameters<typeof createVault>[0] = {}): Promise<Vault> {
    const vault = await createVault({ store, encryption: { masterKey }, history: true, ...extra });
    opened.push(vault);
    return vault;
  }

  async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<string> {
    const r = await vault.run(user, input);
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    return typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
  }

  async function read(vault: Vault, user: string, path: string): Promise<string | undefined> {
    return text((await (await vault.files(user)).read(path))?.data);
  }

  /** A moment strictly between what was written before and what is written after (store clocks count whole ms, some whole seconds). */
  async function moment(): Promise<Date> {
    await pause(1100);
    const at = new Date();
    await pause(1100);
    return at;
  }

  /** Every raw key of a user's objects, by kind (f: files, v: versions). */
  async function rawKeys(store: ObjectStore): Promise<string[]> {
    const keys: string[] = [];
    for await (const o of listAll(store, USERS_PREFIX)) keys.push(o.key);
    return keys;
  }

  describe(`file history on ${name}`, () => {
    afterAll(async () => {
      for (const vault of opened) await vault.close();
    });

    it(
      "undoes a model's bad edit, and the undo itself",
      async () => {
        const vault = await open(await stores.make());
        await ok(vault, 'u1', { command: 'create', path: '/memories/notes.md', file_text: 'keep this\nand this\n' });
        const before = await moment();
        await ok(vault, 'u1', {
          command: 'str_replace',
          path: '/memories/notes.md',
          old_str: 'keep this\nand this',
          new_str: 'garbage',
        });
        const afterBad = await moment();
        expect(await read(vault, 'u1', '/memories/notes.md')).toBe('garbage\n');

        const { versions } = await vault.history('u1', '/memories/notes.md');
        expect(versions.map((v) => [v.path, v.actor, v.size])).toEqual([
          ['/memories/notes.md', 'model', 8],
          ['/memories/notes.md', 'model', 19],
        ]);
        expect(versions[0]!.seq).toBe(versions[1]!.seq + 1); // an edit is numbered one past what it replaced

        const dry = await vault.restore('u1', { path: '/memories/notes.md', asOf: before, dryRun: true });
        expect(dry.files).toEqual([{ path: '/memories/notes.md', action: 'restored', seq: versions[1]!.seq }]);
        expect(await read(vault, 'u1', '/memories/notes.md')).toBe('garbage\n'); // a dry run changes nothing

        const done = await vault.restore('u1', { path: '/memories/notes.md', asOf: before });
        expect(done.restored).toBe(1);
        expect(await read(vault, 'u1', '/memories/notes.md')).toBe('keep this\nand this\n');
        const after = await vault.history('u1', '/memories/notes.md');
        expect(after.versions.map((v) => v.actor)).toEqual(['restore', 'model', 'model']);

        // The restore is a version too: undo it.
        await vault.restore('u1', { path: '/memories/notes.md', asOf: afterBad });
        expect(await read(vault, 'u1', '/memories/notes.md')).toBe('garbage\n');
        // Restoring what is already there changes nothing.
        const again = await vault.restore('u1', { path: '/memories/notes.md', asOf: afterBad });
        expect(again).toMatchObject({ restored: 0, unchanged: 1 });
        // The host's writes are kept and attributed too.
        await (await vault.files('u1')).write('/memories/notes.md', new TextEncoder().encode('from the host\n'));
        expect((await vault.history('u1', '/memories/notes.md')).versions.map((v) => v.actor)).toEqual([
          'host',
          'restore',
          'restore',
          'model',
          'model',
        ]);
      },
      timeout,
    );

    it(
      "undoes a model's directory delete and a directory rename; the tree never shows versions",
      async () => {
        const store = await stores.make();
        const vault = await open(store);
        const files = {
          '/memories/projects/a.md': 'A\n',
          '/memories/projects/b.md': 'B\n',
          '/memories/projects/deep/c.md': 'C\n',
          '/memories/other.md': 'O\n',
        };
        for (const [path, body] of Object.entries(files))
          await ok(vault, 'u2', { command: 'create', path, file_text: body });
        await ok(vault, 'u2', { command: 'str_replace', path: '/memories/projects/a.md', old_str: 'A', new_str: 'A2' });
        const beforeDelete = await moment();
        await ok(vault, 'u2', { command: 'delete', path: '/memories/projects' });
        expect((await vault.run('u2', { command: 'view', path: '/memories/projects' })).isError).toBe(true);
        const tree = await ok(vault, 'u2', { command: 'view', path: '/memories' });
        expect(tree).not.toContain('projects');
        expect(tree).not.toMatch(/@|\.memvault/);

        // Tombstones record the delete, attributed to the model.
        const listed = await vault.history('u2', '/memories/projects');
        expect(
          listed.versions
            .filter((v) => v.end === 'deleted' && v.actor === 'model')
            .map((v) => v.path)
            .sort(),
        ).toEqual(['/memories/projects/a.md', '/memories/projects/b.md', '/memories/projects/deep/c.md']);

        const restored = await vault.restore('u2', { path: '/memories/projects', asOf: beforeDelete });
        expect(restored).toMatchObject({ restored: 3, deleted: 0 });
        expect(await read(vault, 'u2', '/memories/projects/a.md')).toBe('A2\n');
        expect(await read(vault, 'u2', '/memories/projects/b.md')).toBe('B\n');
        expect(await read(vault, 'u2', '/memories/projects/deep/c.md')).toBe('C\n');
        expect(await ok(vault, 'u2', { command: 'view', path: '/memories' })).toContain('projects');

        const beforeRename = await moment();
        await ok(vault, 'u2', { command: 'rename', old_path: '/memories/projects', new_path: '/memories/archive' });
        await ok(vault, 'u2', { command: 'create', path: '/memories/later.md', file_text: 'L\n' });
        expect(await read(vault, 'u2', '/memories/projects/a.md')).toBeUndefined();
        // Whole user, as of before the rename: the moved files are back where they were, what was made since is gone.
        const whole = await vault.restore('u2', { asOf: beforeRename });
        expect(whole).toMatchObject({ restored: 3, deleted: 4 }); // 3 archive/ copies and later.md deleted
        expect(await read(vault, 'u2', '/memories/projects/deep/c.md')).toBe('C\n');
        expect(await read(vault, 'u2', '/memories/archive/a.md')).toBeUndefined();
        expect(await read(vault, 'u2', '/memories/later.md')).toBeUndefined();
        expect(await read(vault, 'u2', '/memories/other.md')).toBe('O\n');
        // No plaintext name reaches a key.
        for (const key of await rawKeys(store)) expect(key).not.toMatch(/projects|archive|later|other|\.md/);
      },
      timeout * 2,
    );

    it(
      'refuses a file put back to an older ciphertext of itself (and a stripped, a resurrected and a swapped one)',
      async () => {
        const store = await stores.make();
        const vault = await open(store);
        await ok(vault, 'u3', { command: 'create', path: '/memories/k.md', file_text: 'version 1\n' });
        const fileKeys = (await rawKeys(store)).filter((k) => k.includes('/f/'));
        expect(fileKeys).toHaveLength(1);
        const key = fileKeys[0]!;
        const v1 = (await store.get(key))!;
        await ok(vault, 'u3', {
          command: 'str_replace',
          path: '/memories/k.md',
          old_str: 'version 1',
          new_str: 'version 2',
        });
        const v2 = (await store.get(key))!;

        // Put back exactly as it was stored (body and metadata): refused on view and on the host's read.
        await store.put(key, v1.body, { metadata: v1.metadata });
        const viewed = await vault.run('u3', { command: 'view', path: '/memories/k.md' });
        expect(viewed.isError).toBe(true);
        expect(JSON.stringify(viewed.content)).toContain('older version of the file');
        expect(JSON.stringify(viewed.content)).not.toContain('version 1');
        await expect((await vault.files('u3')).read('/memories/k.md')).rejects.toMatchObject({ code: 'INTEGRITY' });

        // An edit of the put-back file fails too, and puts the newest kept version back.
        const edited = await vault.run('u3', {
          command: 'str_replace',
          path: '/memories/k.md',
          old_str: 'version 1',
          new_str: 'version X',
        });
        expect(edited.isError).toBe(true);
        expect(await read(vault, 'u3', '/memories/k.md')).toBe('version 2\n');

        // Without its version record (as a version written before history was on would be): refused.
        await store.put(key, v1.body, {});
        expect((await vault.run('u3', { command: 'view', path: '/memories/k.md' })).isError).toBe(true);
        await store.put(key, v2.body, { metadata: v2.metadata });
        expect(await read(vault, 'u3', '/memories/k.md')).toBe('version 2\n');

        // Another file's record on this body: refused (the record binds the body).
        await ok(vault, 'u3', { command: 'create', path: '/memories/other.md', file_text: 'other\n' });
        const otherKey = (await rawKeys(store)).find((k) => k.includes('/f/') && k !== key)!;
        const other = (await store.get(otherKey))!;
        await store.put(key, v2.body, { metadata: other.metadata });
        expect((await vault.run('u3', { command: 'view', path: '/memories/k.md' })).isError).toBe(true);
        await store.put(key, v2.body, { metadata: v2.metadata });

        // Deleted, then its last ciphertext put back: the tombstone is newer, so it stays refused.
        await ok(vault, 'u3', { command: 'delete', path: '/memories/k.md' });
        await store.put(key, v2.body, { metadata: v2.metadata });
        expect((await vault.run('u3', { command: 'view', path: '/memories/k.md' })).isError).toBe(true);

        // Re-created after the delete: a new, newer version, read normally.
        await ok(vault, 'u3', { command: 'create', path: '/memories/k.md', file_text: 'again\n' });
        expect(await read(vault, 'u3', '/memories/k.md')).toBe('again\n');
      },
      timeout,
    );

    it(
      'restores a whole user to a point in time while writers keep writing; nothing they wrote is lost',
      async () => {
        const vault = await open(await stores.make());
        const other = await open(vault.store); // a second instance on the same store
        const paths = Array.from({ length: 6 }, (_, i) => `/memories/w/f${i}.md`);
        for (const path of paths) await ok(vault, 'u4', { command: 'create', path, file_text: `base ${path}\n` });
        const asOf = await moment();
        for (const path of paths) await ok(vault, 'u4', { command: 'create', path, file_text: `changed ${path}\n` });
        await ok(vault, 'u4', { command: 'create', path: '/memories/w/new.md', file_text: 'new\n' });

        let stop = false;
        const written: string[] = [];
        const writer = (async () => {
          for (let n = 0; !stop; n++) {
            const path = paths[n % paths.length]!;
            const body = `writer ${n}\n`;
            const r = await other.run('u4', { command: 'create', path, file_text: body });
            if (!r.isError) written.push(`${path}=${body}`);
            await pause(5);
          }
        })();
        await pause(50);
        const result = await vault.restore('u4', { asOf });
        stop = true;
        await writer;
        expect(result.conflicts).toBe(0);
        expect(result.deleted).toBe(1); // new.md did not exist at asOf
        expect(await read(vault, 'u4', '/memories/w/new.md')).toBeUndefined();
        for (const path of paths) {
          const now = (await read(vault, 'u4', path))!;
          // The restored version, or a writer's version that landed after the restore wrote this file.
          expect(now === `base ${path}\n` || /^writer \d+\n$/.test(now)).toBe(true);
        }
        // Every version a writer got acknowledged is in the history (none was overwritten unseen).
        const { versions } = await vault.history('u4', '/memories/w');
        expect(written.length).toBeGreaterThan(0);
        const kept = new Set(versions.map((v) => `${v.path}=${v.seq}`));
        expect(kept.size).toBe(versions.length);
        for (const path of paths) {
          const count = versions.filter((v) => v.path === path && v.end === undefined).length;
          const wrote = written.filter((w) => w.startsWith(`${path}=`)).length;
          // base + changed + the writer's + possibly the restore's own
          expect(count).toBeGreaterThanOrEqual(2 + wrote);
        }
      },
      timeout * 2,
    );

    it(
      'a crash in the middle of a restore leaves every file at its old or its restored state; running it again finishes',
      async () => {
        const base = await stores.make();
        const faulty = new FaultyStore(base);
        const vault = await open(faulty);
        const paths = ['/memories/c/one.md', '/memories/c/two.md', '/memories/c/three.md'];
        for (const path of paths)
          await ok(vault, 'u5', { command: 'create', path, file_text: `old ${path}\n`.repeat(50) });
        const asOf = await moment();
        for (const path of paths)
          await ok(vault, 'u5', { command: 'create', path, file_text: `new ${path}\n`.repeat(50) });
        await ok(vault, 'u5', { command: 'create', path: '/memories/c/extra.md', file_text: 'extra\n' });
        let crashes = 0;
        for (let n = 1; n < 200; n++) {
          // Put the "new" state back, then crash the restore at its n-th request.
          for (const path of paths)
            await (await vault.files('u5')).write(path, new TextEncoder().encode(`new ${path}\n`.repeat(50)));
          await (await vault.files('u5')).write('/memories/c/extra.md', new TextEncoder().encode('extra\n'));
          faulty.failAt(n);
          const outcome = await vault.restore('u5', { asOf }).then(
            () => 'done',
            () => 'crashed',
          );
          faulty.disarm();
          for (const path of paths) {
            const now = await read(vault, 'u5', path);
            expect([`old ${path}\n`.repeat(50), `new ${path}\n`.repeat(50)]).toContain(now);
          }
          if (outcome === 'done' && !faulty.fired) break;
          if (outcome === 'crashed') crashes += 1;
          await vault.restore('u5', { asOf });
          for (const path of paths) expect(await read(vault, 'u5', path)).toBe(`old ${path}\n`.repeat(50));
          expect(await read(vault, 'u5', '/memories/c/extra.md')).toBeUndefined();
        }
        expect(crashes).toBeGreaterThan(3);
      },
      timeout * 6,
    );

    it(
      'retention: N versions per file and the age window are enforced by the sweeper; the newest version of a live file stays; expiry of an idle file takes its versions (raw scan)',
      async () => {
        const store = await stores.make();
        const vault = await open(store);
        const versionKeys = async () => (await rawKeys(store)).filter((k) => k.split('/')[2] === 'v');
        await ok(vault, 'r', { command: 'create', path: '/memories/live.md', file_text: 'v0\n' });
        for (let i = 1; i <= 4; i++)
          await ok(vault, 'r', {
            command: 'str_replace',
            path: '/memories/live.md',
            old_str: `v${i - 1}`,
            new_str: `v${i}`,
          });
        await ok(vault, 'r', { command: 'create', path: '/memories/gone.md', file_text: 'g\n' });
        await ok(vault, 'r', { command: 'delete', path: '/memories/gone.md' });
        expect(await versionKeys()).toHaveLength(7);

        const history = { retentionDays: 30, maxVersions: 3 };
        const day = 24 * 60 * 60 * 1000;
        const at = (days: number) => {
          const when = new Date(Date.now() + days * day);
          return { asOf: when, now: () => when };
        };
        // Today: only the count rule applies (live.md keeps its 3 newest; gone.md's 2 are young).
        const first = await sweep({ store, history, graceMs: 0, ...at(0) });
        expect(first.versionsDropped).toBe(2);
        expect((await vault.history('r', '/memories/live.md')).versions.map((v) => v.size)).toEqual([3, 3, 3]);
        // A dry run past the window says what would go and deletes nothing.
        const dry = await sweep({ store, history, graceMs: 0, dryRun: true, ...at(31) });
        expect(dry.versionsDropped).toBe(4);
        expect(await versionKeys()).toHaveLength(5);
        // Past the window: everything of the deleted file goes; the live file keeps its newest version.
        const late = await sweep({ store, history, graceMs: 0, ...at(31) });
        expect(late.versionsDropped).toBe(4);
        expect(await versionKeys()).toHaveLength(1);
        expect(await read(vault, 'r', '/memories/live.md')).toBe('v4\n');
        expect((await vault.history('r', '/memories/live.md')).versions).toHaveLength(1);

        // Idle expiry of the file takes its last version with it.
        const expired = await sweep({ store, ttl: { ttlDays: 1 }, graceMs: 0, ...at(2) });
        expect(expired).toMatchObject({ expired: 1, versionsDropped: 1 });
        expect(await rawKeys(store).then((keys) => keys.filter((k) => k.split('/')[2] !== 'c'))).toEqual([]);
      },
      timeout,
    );

    it(
      "quotas count versions apart: a write past the history's allowance drops the oldest versions first, never a file's newest; the newest alone over it is a clear QUOTA error",
      async () => {
        const store = await stores.make();
        // 2,000 bytes of files, 2,000 bytes of history (the current versions included: write-through; each counts 512 bytes at least).
        const vault = await open(store, { quota: { maxUserBytes: 2000, maxHistoryBytes: 2000 } });
        const body = (c: string) => `${c.repeat(599)}\n`; // 600 bytes
        const versionKeys = async () => (await rawKeys(store)).filter((k) => k.split('/')[2] === 'v');
        for (const c of ['A', 'B'])
          await ok(vault, 'q', { command: 'create', path: '/memories/a.md', file_text: body(c) });
        const afterB = await moment();
        await ok(vault, 'q', { command: 'create', path: '/memories/a.md', file_text: body('C') });
        expect(await versionKeys()).toHaveLength(3); // 1,800 bytes kept
        // The fourth would keep 2,400: the oldest goes (down to 1,400 or less: the room it needs), then it fits.
        await ok(vault, 'q', { command: 'create', path: '/memories/a.md', file_text: body('D') });
        expect(await versionKeys()).toHaveLength(3);
        const seqs = (await vault.history('q', '/memories/a.md')).versions.map((v) => v.seq);
        expect(seqs).toHaveLength(3);
        expect(seqs[0]! > seqs[1]! && seqs[1]! > seqs[2]!).toBe(true);
        // What is left is D, C, B (A, the oldest, went): the undo to before C still brings back B.
        await vault.restore('q', { path: '/memories/a.md', asOf: afterB });
        expect(await read(vault, 'q', '/memories/a.md')).toBe(body('B'));
        const newestOfA = (await vault.history('q', '/memories/a.md')).versions[0]!.seq;

        // More writes of another file: the oldest versions go, never a file's newest, and another user's history is not touched.
        await ok(vault, 'q2', { command: 'create', path: '/memories/x.md', file_text: 'x\n' });
        await ok(vault, 'q', { command: 'create', path: '/memories/b.md', file_text: body('E') });
        await ok(vault, 'q', { command: 'create', path: '/memories/b.md', file_text: body('F') });
        const a = (await vault.history('q', '/memories/a.md')).versions;
        const b = (await vault.history('q', '/memories/b.md')).versions;
        expect(a[0]!.seq).toBe(newestOfA);
        expect(b.length).toBeGreaterThanOrEqual(1);
        expect(a.concat(b).reduce((n, v) => n + v.size, 0)).toBeLessThanOrEqual(2000);
        expect(await read(vault, 'q', '/memories/a.md')).toBe(body('B'));
        expect(await read(vault, 'q', '/memories/b.md')).toBe(body('F'));
        expect((await vault.history('q2', '/memories/x.md')).versions).toHaveLength(1);

        // An allowance the newest versions alone fill: refused with the quota error, nothing written.
        const tight = await open(store, { quota: { maxUserBytes: 2000, maxHistoryBytes: 1000 } });
        await ok(tight, 't', { command: 'create', path: '/memories/c.md', file_text: body('G') });
        const refused = await tight.run('t', { command: 'create', path: '/memories/d.md', file_text: body('H') });
        expect(refused.isError).toBe(true);
        expect(refused.content).toBe(
          'Error: Quota exceeded (file history per user): this create would keep a version of 600 bytes, but the newest versions of the ' +
            "user's files already hold 600 of the 1,000 bytes the history may keep, and none of them may be dropped. Nothing was written. " +
            'Delete files you no longer need, then try again.',
        );
        expect(await read(tight, 't', '/memories/d.md')).toBeUndefined();
        expect((await tight.history('t', '/memories')).versions.map((v) => v.path)).toEqual(['/memories/c.md']);
        // A rename keeps two versions the history cannot drop (its copy's, the source's tombstone): without room it is refused, nothing moves.
        const renamed = await tight.run('t', {
          command: 'rename',
          old_path: '/memories/c.md',
          new_path: '/memories/e.md',
        });
        expect(renamed).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
        expect(await read(tight, 't', '/memories/c.md')).toBe(body('G'));
        expect(await read(tight, 't', '/memories/e.md')).toBeUndefined();
      },
      timeout,
    );

    it(
      'erasure leaves no version behind (raw scan); a dropped version is gone for good',
      async () => {
        const store = await stores.make();
        const vault = await open(store);
        await ok(vault, 'gone', { command: 'create', path: '/memories/s.md', file_text: 'secret 1\n' });
        await ok(vault, 'gone', {
          command: 'str_replace',
          path: '/memories/s.md',
          old_str: 'secret 1',
          new_str: 'secret 2',
        });
        await ok(vault, 'gone', { command: 'delete', path: '/memories/s.md' });
        await ok(vault, 'stays', { command: 'create', path: '/memories/t.md', file_text: 'other user\n' });

        const { versions } = await vault.history('gone', '/memories/s.md');
        expect(versions).toHaveLength(3);
        expect(await vault.dropVersion('gone', '/memories/s.md', versions[1]!.seq)).toBe(true);
        expect(await vault.dropVersion('gone', '/memories/s.md', versions[1]!.seq)).toBe(false);
        expect((await vault.history('gone', '/memories/s.md')).versions.map((v) => v.seq)).toEqual([
          versions[0]!.seq,
          versions[2]!.seq,
        ]);

        const keysBefore = await rawKeys(store);
        expect(keysBefore.some((k) => k.includes('/v/'))).toBe(true);
        await vault.forgetUser('gone');
        const keysAfter = await rawKeys(store);
        const goneUid = keysBefore.find((k) => !keysAfter.includes(k))!.split('/')[1];
        expect(keysAfter.filter((k) => k.split('/')[1] === goneUid)).toEqual([]);
        expect(keysAfter.some((k) => k.includes('/v/'))).toBe(true); // the other user's history stays
        await expect(vault.history('gone', '/memories/s.md')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      },
      timeout,
    );
  });
}
