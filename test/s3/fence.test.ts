/**
 * The fence scenarios, each on radosgw with another vault instance (its own S3 client, so no
 * shared in-process locks) racing at the exact request where the old protocol had its window:
 *
 * - a directory rename racing an insert from another instance, landing between the rename's HEAD
 *   check and its DELETE (RGW ignores If-Match on DELETE): the insert must never be lost;
 * - two renames of one directory from two instances: exactly one wins, every file in one place;
 * - the sweeper against a re-create of an expired file landing after the sweeper's checks and
 *   before its deleting request: the re-created file survives.
 * (An edit of a copy between a crash and the rerun: test/s3/tree-integrity.test.ts, "does not
 * resume onto a copy the user edited".)
 */
import { DeleteObjectCommand, DeleteObjectsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { s3Deleter } from '../../src/expiry/deleter.js';
import { sweep } from '../../src/expiry/sweep.js';
import { FENCE_METADATA } from '../../src/store/fence.js';
import { parseS3Url, type S3Store } from '../../src/store/s3.js';
import { emptyStore, recordS3SuiteRun, s3Available, s3ClientConfig, s3SkipReason, s3Url } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const U = 'fence-user';
const opened: Vault[] = [];

async function pair(name: string, options: Record<string, unknown> = {}): Promise<{ a: Vault; b: Vault; url: string }> {
  const url = s3Url(`${name}-${randomBytes(3).toString('hex')}`);
  const masterKey = randomBytes(32).toString('base64');
  const a = await createVault({ store: url, s3: s3ClientConfig(), encryption: { masterKey }, ...options });
  const b = await createVault({ store: url, s3: s3ClientConfig(), encryption: { masterKey }, ...options });
  opened.push(a, b);
  return { a, b, url };
}

async function textAt(vault: Vault, path: string): Promise<string | null> {
  const file = await (await vault.files(U)).read(path);
  return file ? Buffer.from(file.data).toString('utf8') : null;
}

/**
 * The scenario tests' one way into a vault's requests: `before` runs right before each request
 * `client` sends, `after` right after its answer (both awaited, so a hook can run another
 * instance's whole command at that exact point).
 */
function intercept(
  client: S3Client,
  hooks: { before?: (command: object) => Promise<void>; after?: (command: object) => Promise<void> },
): void {
  const send = client.send.bind(client) as (command: object) => Promise<unknown>;
  (client as { send: unknown }).send = async (command: object) => {
    await hooks.before?.(command);
    const out = await send(command);
    await hooks.after?.(command);
    return out;
  };
}

/** Run `hook` once, right before the first request of one of `kinds` that `vault`'s S3 client sends. */
function before(
  vault: Vault,
  kinds: Array<new (...args: never[]) => object>,
  hook: () => Promise<void>,
): { fired: () => boolean; only?: (command: object) => boolean } {
  let fired = false;
  const handle: { fired: () => boolean; only?: (command: object) => boolean } = { fired: () => fired };
  intercept((vault.store as S3Store).client, {
    before: async (command) => {
      if (!fired && kinds.some((k) => command instanceof k) && (handle.only?.(command) ?? true)) {
        fired = true;
        await hook();
      }
    },
  });
  return handle;
}

/** A fence marker's PUT (its metadata names the fence), as opposed to a file's. */
function isFencePut(command: object): boolean {
  return command instanceof PutObjectCommand && command.input.Metadata?.[FENCE_METADATA] !== undefined;
}

/** Narrow a `before(vault, [PutObjectCommand], ...)` hook to the first fence marker's PUT. */
function fenceOnly(hook: { only?: (command: object) => boolean }): void {
  hook.only = isFencePut;
}

describe.skipIf(!s3Available())(
  `fence and marker race scenarios on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    afterAll(async () => {
      for (const vault of opened) {
        await emptyStore(vault.store as S3Store).catch(() => undefined);
        await vault.close();
      }
    }, 120_000);

    it('a directory rename never loses an insert another instance makes while it moves the file', async () => {
      const { a, b } = await pair('rename-vs-insert');
      await a.run(U, { command: 'create', path: '/memories/src/a.md', file_text: 'one\n' });
      let rival: { isError: boolean; content: unknown } | undefined;
      // The rival's insert lands right before the rename's first DELETE: on the old protocol that is
      // the source's delete, after the HEAD that checked its version; with fences, the clean-up of
      // the marker that already replaced the source.
      const hook = before(a, [DeleteObjectCommand], async () => {
        rival = await b.run(U, { command: 'insert', path: '/memories/src/a.md', insert_line: 1, insert_text: 'rival' });
      });
      const renamed = await a.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      expect(hook.fired()).toBe(true);
      expect(renamed).toMatchObject({ isError: false });
      expect(await textAt(a, '/memories/src/a.md')).toBeNull();
      const moved = await textAt(a, '/memories/dst/a.md');
      if (!rival!.isError)
        expect(moved).toBe('one\nrival\n'); // acknowledged: it must be at the new place
      else {
        expect(rival!.content).toBe('Error: The path /memories/src/a.md does not exist');
        expect(moved).toBe('one\n');
      }
      // And it is never at the old place, nor anything else.
      expect((await b.run(U, { command: 'view', path: '/memories' })).content).not.toContain('/memories/src');
    });

    it('an edit racing the fence of a moved file either lands first (and moves) or finds no file, many times over', async () => {
      const { a, b } = await pair('rename-vs-inserts');
      const names = Array.from({ length: 12 }, (_, i) => `f${i}.md`);
      for (const n of names) await a.run(U, { command: 'create', path: `/memories/src/${n}`, file_text: `${n}\n` });
      const acknowledged: Array<{ name: string; line: string }> = [];
      let stop = false;
      const editor = (async () => {
        for (let i = 0; !stop; i++) {
          const name = names[i % names.length]!;
          const line = `edit-${i}`;
          const r = await b.run(U, {
            command: 'insert',
            path: `/memories/src/${name}`,
            insert_line: 1,
            insert_text: line,
          });
          if (!r.isError) acknowledged.push({ name, line });
        }
      })();
      await sleep(100);
      const renamed = await a.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      stop = true;
      await editor;
      expect(renamed).toMatchObject({ isError: false });
      for (const n of names) expect(await textAt(a, `/memories/src/${n}`)).toBeNull();
      for (const { name, line } of acknowledged)
        expect(await textAt(a, `/memories/dst/${name}`), `${line} in ${name}`).toContain(`${line}\n`);
    });

    it('a rename whose source is deleted under it keeps an insert another instance made into the copy', async () => {
      const { a, b } = await pair('rename-copy-edited');
      await a.run(U, { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
      let rival: { isError: boolean; content: unknown } | undefined;
      let deleted: { isError: boolean } | undefined;
      // Right before the rename's fence of the source: the copy at the new place is visible; another
      // instance edits it (acknowledged), then deletes the source. The rename's fence loses and it
      // takes its copy back, but only the version it wrote: the edited copy stays, edit and all.
      const hook = before(a, [PutObjectCommand], async () => {
        rival = await b.run(U, { command: 'insert', path: '/memories/b.md', insert_line: 1, insert_text: 'rival' });
        deleted = await b.run(U, { command: 'delete', path: '/memories/a.md' });
      });
      fenceOnly(hook);
      const renamed = await a.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' });
      expect(hook.fired()).toBe(true);
      expect(rival).toMatchObject({ isError: false });
      expect(deleted).toMatchObject({ isError: false });
      expect(renamed).toMatchObject({ isError: true });
      expect(await textAt(a, '/memories/a.md')).toBeNull();
      expect(await textAt(a, '/memories/b.md')).toBe('one\nrival\n');
    });

    it('a directory rename refused while copying never takes back a copy another instance edited', async () => {
      const { a, b } = await pair('takeback-vs-insert');
      await a.run(U, { command: 'create', path: '/memories/src/f0.md', file_text: 'f0\n' });
      await a.run(U, { command: 'create', path: '/memories/src/f1.md', file_text: 'f1\n' });
      // 1. Before the rename's first PUT (its journal; the destination was found empty): a rival
      //    writes /memories/dst/f1.md, so the copy of f1 meets someone else's file and the rename is
      //    refused; the copy of f0 it created must be taken back.
      // 2. Right before the take-back's first request that could remove the copy (old code: the
      //    DELETE after its HEAD; now the fence PUT), the rival inserts into that copy.
      const events: string[] = [];
      let stage = 0;
      let insert: { isError: boolean; content: unknown } | undefined;
      intercept((a.store as S3Store).client, {
        before: async (command) => {
          if (stage === 0 && command instanceof PutObjectCommand) {
            stage = 1;
            expect(
              await b.run(U, { command: 'create', path: '/memories/dst/f1.md', file_text: 'theirs\n' }),
            ).toMatchObject({ isError: false });
          } else if (stage === 1 && (command instanceof DeleteObjectCommand || isFencePut(command))) {
            stage = 2;
            insert = await b.run(U, {
              command: 'insert',
              path: '/memories/dst/f0.md',
              insert_line: 1,
              insert_text: 'rival',
            });
            events.push(insert.isError ? 'insert refused' : 'insert acknowledged');
          }
        },
      });
      const renamed = await a.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      expect(stage).toBe(2);
      expect(renamed).toMatchObject({ isError: true, content: 'Error: The destination /memories/dst already exists' });
      // A refused rename changes nothing of the sources.
      expect(await textAt(a, '/memories/src/f0.md')).toBe('f0\n');
      expect(await textAt(a, '/memories/src/f1.md')).toBe('f1\n');
      expect(await textAt(a, '/memories/dst/f1.md')).toBe('theirs\n');
      // The insert into the copy was acknowledged (it reached the copy before the take-back): it stays.
      expect(events).toEqual(['insert acknowledged']);
      expect(await textAt(a, '/memories/dst/f0.md')).toBe('f0\nrival\n');
    });

    it('a create taken back on a name conflict never takes an edit another instance made meanwhile', async () => {
      const { a, b } = await pair('name-takeback-vs-insert');
      await a.run(U, { command: 'create', path: '/memories/seed.md', file_text: 'seed\n' }); // keys loaded
      let stage = 0;
      let insert: { isError: boolean; content: unknown } | undefined;
      intercept((a.store as S3Store).client, {
        before: async (command) => {
          if (stage === 0 && command instanceof PutObjectCommand) {
            // After a's checks, before its PUT: b makes /memories/x a directory, so a's write-then-check
            // finds the conflict and takes its file back.
            stage = 1;
            expect(await b.run(U, { command: 'create', path: '/memories/x/y.md', file_text: 'y\n' })).toMatchObject({
              isError: false,
            });
          } else if (stage === 1 && (command instanceof DeleteObjectCommand || isFencePut(command))) {
            // Right before the take-back's first removing request, b edits the file it can see.
            stage = 2;
            insert = await b.run(U, { command: 'insert', path: '/memories/x', insert_line: 1, insert_text: 'rival' });
          }
        },
      });
      const created = await a.run(U, { command: 'create', path: '/memories/x', file_text: 'x\n' });
      expect(stage).toBe(2);
      expect(created).toMatchObject({ isError: true });
      expect(insert).toMatchObject({ isError: false });
      // Acknowledged, so it stays (the name is then both a file and a directory, which reads and a
      // delete handle); never deleted with the taken-back create.
      expect(await textAt(a, '/memories/x')).toBe('x\nrival\n');
      expect(await textAt(a, '/memories/x/y.md')).toBe('y\n');
    });

    /** Run `hook` right after the first reaping marker's PUT (src/store/fence.ts) that `client` sends has been answered. */
    function afterReapingPut(client: S3Client, hook: () => Promise<void>): { fired: () => boolean } {
      let fired = false;
      intercept(client, {
        after: async (command) => {
          if (!fired && command instanceof PutObjectCommand && command.input.Metadata?.[FENCE_METADATA] === 'reaping') {
            fired = true;
            await hook();
          }
        },
      });
      return { fired: () => fired };
    }

    it("a create of a path being vacated, landing right before the marker's clean-up DELETE, is never deleted by it", async () => {
      const { a, b } = await pair('create-vs-cleanup');
      await a.run(U, { command: 'create', path: '/memories/a.md', file_text: 'old\n' });
      let created: Promise<{ isError: boolean; content: unknown }> | undefined;
      // The delete fences a.md, then clears the marker. Right before that DELETE another instance
      // re-creates a.md: on the old protocol its PUT over the marker landed after the HEAD check and
      // the DELETE took the new file with it. Now the create meets the reaping marker and waits.
      before(a, [DeleteObjectCommand], async () => {
        created = b.run(U, { command: 'create', path: '/memories/a.md', file_text: 'new\n' });
        await sleep(30);
      });
      expect(await a.run(U, { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
      expect(created).toBeDefined();
      expect(await created).toMatchObject({ isError: false });
      expect(await textAt(a, '/memories/a.md')).toBe('new\n');
    });

    it('a clean-up that stalls after its reaping PUT sends no DELETE: a create that waited it out is kept', async () => {
      const { a, b } = await pair('create-vs-stalled-cleanup');
      await a.run(U, { command: 'create', path: '/memories/a.md', file_text: 'old\n' });
      let created: { isError: boolean; content: unknown } | undefined;
      const hook = afterReapingPut((a.store as S3Store).client, async () => {
        created = await b.run(U, { command: 'create', path: '/memories/a.md', file_text: 'new\n' });
      });
      expect(await a.run(U, { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
      expect(hook.fired()).toBe(true);
      expect(created).toMatchObject({ isError: false });
      expect(await textAt(a, '/memories/a.md')).toBe('new\n');
      expect(await textAt(b, '/memories/a.md')).toBe('new\n');
    });

    it("a file created over an expired file's marker while the sweeper clears it survives", async () => {
      for (const stall of [false, true]) {
        const { a, b, url } = await pair('sweep-cleanup-vs-create');
        await a.run(U, { command: 'create', path: '/memories/old.md', file_text: 'old\n' });
        await sleep(1100);
        const store = a.store as S3Store;
        const { bucket, prefix } = parseS3Url(url);
        const client = store.client;
        let created: Promise<{ isError: boolean; content: unknown }> | undefined;
        const racing = {
          send: async (command: object) => {
            const reaping =
              command instanceof PutObjectCommand && command.input.Metadata?.[FENCE_METADATA] === 'reaping';
            if (!stall && created === undefined && command instanceof DeleteObjectCommand) {
              created = b.run(U, { command: 'create', path: '/memories/old.md', file_text: 'new\n' });
              await sleep(30);
            }
            const out = await client.send(command as never);
            if (stall && created === undefined && reaping) {
              created = b.run(U, { command: 'create', path: '/memories/old.md', file_text: 'new\n' });
              await created;
            }
            return out;
          },
        } as unknown as S3Client;
        const summary = await sweep({
          store,
          ttl: { ttlDays: 1 },
          now: () => new Date(Date.now() + 2 * DAY_MS),
          graceMs: 0,
          deleter: s3Deleter({ client: racing, bucket, prefix, mode: 'recheck' }),
        });
        expect(summary, `stall ${stall}`).toMatchObject({ errors: 0, expired: 1 });
        expect(created, `stall ${stall}`).toBeDefined();
        expect(await created).toMatchObject({ isError: false });
        expect(await textAt(b, '/memories/old.md'), `stall ${stall}`).toBe('new\n');
      }
    });

    it('the same rename of one directory from another instance while it runs: told it is busy, never run twice; every file in one place', async () => {
      const { a, b } = await pair('same-rename-twice');
      for (let i = 0; i < 6; i++)
        await a.run(U, { command: 'create', path: `/memories/src/f${i}.md`, file_text: `f${i}\n` });
      // Right after a's journal is written (its first PUT), b asks for the very same rename. On the
      // old code b took a's live journal for a crashed run of its own and ran it beside a: both
      // answered success, and one could drop the journal while the other still fenced.
      let second: Promise<{ isError: boolean; code?: string; content: unknown }> | undefined;
      intercept((a.store as S3Store).client, {
        after: async (command) => {
          if (second === undefined && command instanceof PutObjectCommand) {
            second = b.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
            await sleep(150);
          }
        },
      });
      const first = await a.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      expect(second).toBeDefined();
      const other = await second!;
      expect(first, JSON.stringify(first.content)).toMatchObject({ isError: false });
      // b either met a's journal (busy) or came after a had finished (the source is gone).
      expect(other, JSON.stringify(other.content)).toMatchObject({ isError: true });
      expect(['CONFLICT', 'NOT_FOUND']).toContain(other.code);
      for (let i = 0; i < 6; i++) {
        expect(await textAt(a, `/memories/dst/f${i}.md`), `f${i}`).toBe(`f${i}\n`);
        expect(await textAt(a, `/memories/src/f${i}.md`), `f${i}`).toBeNull();
      }
    });

    it('two renames of one directory from two instances: exactly one wins, every file in exactly one place', async () => {
      const { a, b } = await pair('two-renames');
      for (let i = 0; i < 6; i++)
        await a.run(U, { command: 'create', path: `/memories/src/f${i}.md`, file_text: `f${i}\n` });
      const [ra, rb] = await Promise.all([
        a.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/x' }),
        b.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/y' }),
      ]);
      const wins = [ra, rb].filter((r) => !r.isError);
      expect(wins.length).toBeLessThanOrEqual(1);
      const winner = !ra.isError ? '/memories/x' : !rb.isError ? '/memories/y' : undefined;
      for (let i = 0; i < 6; i++) {
        const places = await Promise.all(
          ['/memories/src', '/memories/x', '/memories/y'].map((d) => textAt(a, `${d}/f${i}.md`)),
        );
        expect(
          places.filter((t) => t !== null),
          `f${i}`,
        ).toEqual([`f${i}\n`]);
        if (winner) expect(await textAt(a, `${winner}/f${i}.md`)).toBe(`f${i}\n`);
      }
    });

    it('the sweeper keeps a file re-created after its checks, before its deleting request', async () => {
      const { a, b, url } = await pair('sweep-vs-recreate');
      await a.run(U, { command: 'create', path: '/memories/old.md', file_text: 'old\n' });
      await sleep(1100);
      const store = a.store as S3Store;
      const { bucket, prefix } = parseS3Url(url);
      // The sweeper's client: the re-create (by another instance) lands right before the sweeper's
      // first request that removes anything (old protocol: DeleteObjects after the HEADs; fences: the
      // conditional PUT of the marker).
      const client = store.client;
      let fired = false;
      const racing = {
        send: async (command: object) => {
          if (!fired && (command instanceof DeleteObjectsCommand || command instanceof PutObjectCommand)) {
            fired = true;
            expect(await b.run(U, { command: 'create', path: '/memories/old.md', file_text: 'new\n' })).toMatchObject({
              isError: false,
            });
          }
          return client.send(command as never);
        },
      } as unknown as S3Client;
      const summary = await sweep({
        store,
        ttl: { ttlDays: 1 },
        now: () => new Date(Date.now() + 2 * DAY_MS),
        graceMs: 0,
        deleter: s3Deleter({ client: racing, bucket, prefix, mode: 'recheck' }),
      });
      expect(fired).toBe(true);
      expect(summary).toMatchObject({ changedDuringSweep: 1, errors: 0 });
      expect(await textAt(b, '/memories/old.md')).toBe('new\n');
    });
  },
);
