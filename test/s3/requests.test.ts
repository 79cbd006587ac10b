/**
 * Requests per command on a real S3 server (RGW), counted by the accounting middleware on the S3
 * client's stack (every HTTP attempt) and read back from `ctx.stats.requests`, i.e. what metrics
 * and audit records see. test/tool/requests.test.ts pins the same figures on the memory store.
 *
 * Two modes of the S3 store:
 * - 'check-first' (default, right for RGW 16, which ignores If-Match on DeleteObject): every
 *   conditional delete (the clean-up of a fence marker) is reaped, a PUT If-Match of a reaping
 *   marker before an unconditional DELETE (src/store/fence.ts), so a file rename or delete costs one
 *   request more than in 'native' mode, and a directory rename or delete one per file.
 * - 'native' (right for AWS S3): the condition travels as a header only. RGW 16 does not enforce
 *   it, so on RGW this mode is run for counting only, never for correctness.
 * Every other command costs the same in both modes.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { Middleware } from '../../src/pipeline/context.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import type { ConditionChecks, S3Store } from '../../src/store/s3.js';
import { emptyStore, recordS3SuiteRun, s3Available, s3ClientConfig, s3SkipReason, s3Url } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const masterKey = randomBytes(32).toString('base64');
const U = 'counted-user';
const opened: Vault[] = [];
let prefixes = 0;

interface CountingVault {
  vault: Vault;
  prefix: string;
  /** Runs one command that must succeed; returns the requests it made. */
  count(input: Record<string, unknown>, user?: string): Promise<RequestCounter>;
}

async function countingVault(
  mode: ConditionChecks,
  prefix = `requests/${mode}-${++prefixes}`,
  history = false,
): Promise<CountingVault> {
  let seen: RequestCounter | undefined;
  // Outermost: what the audit logger and metrics read once the command is done.
  const capture: Middleware = async (ctx, next) => {
    const result = await next();
    seen = { ...ctx.stats.requests };
    return result;
  };
  const vault = await createVault({
    store: s3Url(prefix),
    s3: s3ClientConfig(),
    s3Options: { conditionChecks: mode },
    encryption: { masterKey },
    outerMiddlewares: [capture],
    // The tables below pin the protocol's own requests (history off); history is on by default, and
    // what it adds is pinned in "history on" below.
    history,
  });
  opened.push(vault);
  return {
    vault,
    prefix,
    count: async (input, user = U) => {
      seen = undefined;
      const outer: RequestCounter = {};
      const r = await withRequestCounter(outer, () => vault.run(user, input));
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
      // The per-command stats and an enclosing counter agree: nothing is counted outside the command.
      expect(seen).toEqual(outer);
      return outer;
    },
  };
}

async function seed(vault: Vault, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    const r = await vault.run(U, { command: 'create', path, file_text: text });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
  }
}

/** A write by the model also reads the user's settings (pause memory, src/pipeline/pause.ts): one GET. */
const write = (counts: RequestCounter): RequestCounter => ({ ...counts, GET: (counts['GET'] ?? 0) + 1 });

describe.skipIf(!s3Available())(
  `requests per command on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    afterAll(async () => {
      for (const vault of opened) {
        await emptyStore(vault.store as S3Store);
        await vault.close();
      }
    }, 120_000);

    it("a user's first command: + 1 GET of the wrapped key and 1 LIST of one key (+ 1 LIST and 1 PUT the very first time); cached afterwards", async () => {
      const prefix = `requests/first-${++prefixes}`;
      const { count } = await countingVault('check-first', prefix);
      // Never seen before: the key record is missing (GET 404; beside it the LIST of one key of the
      // user's key state marks, docs/encryption.md "Key records never move backwards"); a key is made
      // only for a user with no objects at all (LIST of one key under u/{uid}/: a lost record is an
      // error, never a new key), then created (PUT If-None-Match: *); the look for the user's stopped
      // directory renames (one LIST of their journals, at most every 10 s per instance:
      // src/tool/commands/stopped.ts); then the view's own LIST.
      expect(await count({ command: 'view', path: '/memories' })).toEqual({ GET: 1, PUT: 1, LIST: 4 });
      expect(await count({ command: 'view', path: '/memories' })).toEqual({ LIST: 1 });
      // The user's first write in a process lists their files once (the quota's usage figure).
      // (+ 1 LIST: the check a created name runs after its PUT, src/vault/names.ts.)
      expect(await count({ command: 'create', path: '/memories/q.md', file_text: 'q' })).toEqual(
        write({ LIST: 2, PUT: 1 }),
      );
      expect(await count({ command: 'create', path: '/memories/r.md', file_text: 'r' })).toEqual(
        write({ LIST: 1, PUT: 1 }),
      );
      // Another process (a fresh vault, fresh key cache) on the same prefix: reads the record once, and
      // beside it the newest key state mark (a LIST of one key); the stopped renames' look; the view.
      const other = await countingVault('check-first', prefix);
      expect(await other.count({ command: 'view', path: '/memories' })).toEqual({ GET: 1, LIST: 3 });
      expect(await other.count({ command: 'view', path: '/memories' })).toEqual({ LIST: 1 });
    });

    // What each mode adds, per command. Only conditional deletes differ (the clean-up of a fence
    // marker, deleted If-Match its own ETag): native sends the conditional DELETE, which AWS decides
    // atomically; check-first reaps the marker (src/store/fence.ts: a PUT If-Match of a reaping
    // marker before an unconditional DELETE, since RGW ignores the DELETE's condition).
    // An overwrite (create over an existing file) meets the file with its create-only PUT, then HEADs
    // it (its size settles the quota; on check-first it might be a reaping marker, whose DELETE a file
    // written over it would not survive) and replaces exactly that version, in both modes.
    const table: Array<{ mode: ConditionChecks; reapPut: number }> = [
      { mode: 'check-first', reapPut: 1 },
      { mode: 'native', reapPut: 0 },
    ];

    it.each(table)('$mode: every command costs what README and docs/s3.md say', async ({ mode, reapPut }) => {
      const { vault, count } = await countingVault(mode);
      await vault.run(U, { command: 'view', path: '/memories' }); // loads (creates) the user's key
      await seed(vault, { '/memories/d/x.md': 'a\nb\n' });
      const plus = (counts: RequestCounter, type: string, n: number): RequestCounter =>
        n === 0 ? counts : { ...counts, [type]: (counts[type] ?? 0) + n };

      expect(await count({ command: 'view', path: '/memories/d/x.md' })).toEqual({ GET: 1 });
      expect(await count({ command: 'view', path: '/memories/d/x.md', view_range: [2, 2] })).toEqual({ GET: 1 });
      expect(await count({ command: 'view', path: '/memories' })).toEqual({ LIST: 1 });
      // Another directory is tried as a file first (GET 404).
      expect(await count({ command: 'view', path: '/memories/d' })).toEqual({ GET: 1, LIST: 1 });
      // create: the PUT (If-None-Match: *), then the created name's check ("write, then check", so
      // that two instances never make one name both a file and a directory): a LIST of one key that
      // nothing lies below it and a HEAD per ancestor that none is a file. Nothing is looked at before
      // the PUT (that check refuses a directory at the path too, taking the write back), and the quota
      // admits a create as a new file without a HEAD. An overwrite first tries the create-only PUT;
      // its 412 says the name is a file already, so no check follows.
      expect(await count({ command: 'create', path: '/memories/y.md', file_text: 'y' })).toEqual(
        write({ LIST: 1, PUT: 1 }),
      );
      expect(await count({ command: 'create', path: '/memories/d/z.md', file_text: 'z' })).toEqual(
        write({
          LIST: 1,
          HEAD: 1,
          PUT: 1,
        }),
      );
      expect(await count({ command: 'create', path: '/memories/d/z.md', file_text: 'overwritten' })).toEqual(
        write({
          HEAD: 1,
          PUT: 2,
        }),
      );
      expect(await count({ command: 'str_replace', path: '/memories/d/x.md', old_str: 'a', new_str: 'A' })).toEqual(
        write({
          GET: 1,
          PUT: 1,
        }),
      );
      expect(await count({ command: 'insert', path: '/memories/d/x.md', insert_line: 0, insert_text: 'i' })).toEqual(
        write({
          GET: 1,
          PUT: 1,
        }),
      );

      // rename of a file: GET the source (it is re-encrypted for its new path, so no server-side
      // copy) and, in parallel, LIST below it (a name that is also a directory moves whole), PUT
      // If-None-Match: * at the destination, LIST after it (the created name's check), PUT a "moved" marker If-Match the copied version over the source (the
      // fence: the point where the file moves, enforced by the server), DELETE the marker If-Match its
      // ETag; check-first reaps it instead (+ 1 PUT of a reaping marker before the DELETE).
      expect(await count({ command: 'rename', old_path: '/memories/y.md', new_path: '/memories/y2.md' })).toEqual(
        write(plus({ GET: 1, LIST: 2, PUT: 2, DELETE: 1 }, 'PUT', reapPut)),
      );
      // ... plus one HEAD per new ancestor directory (a file must not be in the way), after the PUT.
      expect(await count({ command: 'rename', old_path: '/memories/y2.md', new_path: '/memories/n/e/w.md' })).toEqual(
        write(plus({ GET: 1, LIST: 2, PUT: 2, DELETE: 1, HEAD: 2 }, 'PUT', reapPut)),
      );
      // delete of a file: HEAD and LIST (in parallel) tell a file from a directory (a name that is
      // both loses both halves); the file is fenced ("deleted" marker, PUT If-Match the HEAD's ETag)
      // and the marker deleted (If-Match; check-first reaps it: + 1 PUT).
      expect(await count({ command: 'delete', path: '/memories/n/e/w.md' })).toEqual(
        write(plus({ HEAD: 1, LIST: 1, PUT: 1, DELETE: 1 }, 'PUT', reapPut)),
      );

      // rename of a directory of n files (docs/s3.md: 4n + 11, + n PUT in check-first): GET as a file
      // (404) and LIST the sources, GET the journal (404), HEAD that no file is at the destination and
      // LIST that nothing is below it (+ HEAD per ancestor: no file above), PUT the journal, LIST the
      // open journals (+ GET per other one: none here; no overlapping rename or delete), GET + PUT
      // per file, HEAD + LIST of the destination once all is copied (its names' check), the fence per
      // source (PUT If-Match of a "moved" marker) and the marker's DELETE If-Match (reaped in
      // check-first: + 1 PUT), GET the journal (still this run's: not taken over), DELETE it.
      for (const n of [3, 5]) {
        const files: Record<string, string> = {};
        for (let i = 0; i < n; i++) files[`/memories/r${n}/f${i}.md`] = `file ${i}\n`;
        await seed(vault, files);
        const renamed = await count({ command: 'rename', old_path: `/memories/r${n}`, new_path: `/memories/s${n}` });
        expect(renamed).toEqual(write({ GET: n + 3, LIST: 4, HEAD: 2, PUT: 2 * n + 1 + n * reapPut, DELETE: n + 1 }));
        const total = Object.values(renamed).reduce((a, b) => a + b, 0);
        expect(total).toBe(4 * n + 11 + n * reapPut + 1);
      }
      // delete of a directory of n files: HEAD (not a file), LIST per 1,000 keys, then per file the
      // fence (PUT If-Match the listed ETag) and the marker's DELETE (+ the reaping PUT in
      // check-first): 2n + 2 (3n + 2 in check-first).
      const deleted = await count({ command: 'delete', path: '/memories/s5' });
      expect(deleted).toEqual(write({ HEAD: 1, LIST: 1, PUT: 5 + 5 * reapPut, DELETE: 5 }));
      expect(Object.values(deleted).reduce((a, b) => a + b, 0)).toBe(2 * 5 + 2 + 5 * reapPut + 1);
    });

    // File history (docs/versions.md): the same commands with history off and on, in one run. A
    // read adds the LIST of the file's newest version (sent beside its GET); every version written
    // adds its create-only PUT under v/; every file a delete or a move ends adds its tombstone PUT.
    it('history on: what each command adds to its cost with history off', async () => {
      const runs: Array<Record<string, RequestCounter>> = [];
      for (const history of [false, true]) {
        const prefix = `requests/history-${history}-${++prefixes}`;
        const { vault, count } = await countingVault('check-first', prefix, history);
        await vault.run(U, { command: 'view', path: '/memories' });
        await seed(vault, {
          '/memories/d/x.md': 'a\nb\n',
          '/memories/r/f0.md': '0\n',
          '/memories/r/f1.md': '1\n',
          '/memories/r/f2.md': '2\n',
        });
        await seed(vault, { '/memories/t/f0.md': '0\n', '/memories/t/f1.md': '1\n', '/memories/t/f2.md': '2\n' });
        const counts: Record<string, RequestCounter> = {};
        counts['view file'] = await count({ command: 'view', path: '/memories/d/x.md' });
        counts['view dir'] = await count({ command: 'view', path: '/memories/d' });
        counts['view root'] = await count({ command: 'view', path: '/memories' });
        counts['create'] = await count({ command: 'create', path: '/memories/d/z.md', file_text: 'z' });
        counts['overwrite'] = await count({ command: 'create', path: '/memories/d/z.md', file_text: 'overwritten' });
        counts['str_replace'] = await count({
          command: 'str_replace',
          path: '/memories/d/x.md',
          old_str: 'a',
          new_str: 'A',
        });
        counts['insert'] = await count({
          command: 'insert',
          path: '/memories/d/x.md',
          insert_line: 0,
          insert_text: 'i',
        });
        counts['rename file'] = await count({
          command: 'rename',
          old_path: '/memories/d/z.md',
          new_path: '/memories/d/z2.md',
        });
        counts['delete file'] = await count({ command: 'delete', path: '/memories/d/z2.md' });
        counts['rename dir of 3'] = await count({
          command: 'rename',
          old_path: '/memories/r',
          new_path: '/memories/s',
        });
        counts['delete dir of 3'] = await count({ command: 'delete', path: '/memories/s' });
        // A process's first write of the user lists their usage (the quota); with history on, the history too.
        const later = await countingVault('check-first', prefix, history);
        counts['first write of a process'] = await later.count({
          command: 'create',
          path: '/memories/d/w.md',
          file_text: 'w',
        });
        counts['delete dir of 3 written by another process'] = await later.count({
          command: 'delete',
          path: '/memories/t',
        });
        runs.push(counts);
      }
      const [off, on] = runs as [Record<string, RequestCounter>, Record<string, RequestCounter>];
      const added = Object.fromEntries(
        Object.keys(off).map((name) => {
          const diff: RequestCounter = {};
          for (const type of new Set([...Object.keys(off[name]!), ...Object.keys(on[name]!)])) {
            const d = (on[name]![type] ?? 0) - (off[name]![type] ?? 0);
            if (d !== 0) diff[type] = d;
          }
          return [name, diff];
        }),
      );
      // A write numbered by the clock (a create, an overwrite, a copy: it replaced no version this
      // process knew) lists the history's newest number beside its version's PUT, and numbers itself
      // again when it landed below it (docs/versions.md, "Sequence numbers"); an edit does not.
      expect(added).toEqual({
        'view file': { LIST: 1 },
        'view dir': { LIST: 1 }, // the GET that finds no file there lists its history too
        'view root': {},
        create: { LIST: 1, PUT: 1 },
        overwrite: { LIST: 1, PUT: 1 },
        str_replace: { PUT: 1 },
        insert: { PUT: 1 },
        // the source's read checks freshness (LIST beside its GET), the copy's version and newest
        // number, the source's tombstone
        'rename file': { LIST: 2, PUT: 2 },
        // the tombstone; the file is looked at by a GET in place of the HEAD: its record numbers the
        // tombstone one past the version it ends (docs/versions.md, "Sequence numbers")
        'delete file': { GET: 1, HEAD: -1, PUT: 1 },
        // 2n + 1 LISTs: each source's read and each copy's newest number, and the first read of the
        // directory's name as a file (GET 404); 2n PUTs
        'rename dir of 3': { LIST: 7, PUT: 6 },
        // the tombstones, and the name looked at by a GET (404) in place of the HEAD; the files' records
        // are known from this process's writes of them
        'delete dir of 3': { GET: 1, HEAD: -1, PUT: 3 },
        // the quota's usage listing counts the history apart (one LIST per 1,000 versions), the version
        // and the newest number
        'first write of a process': { LIST: 2, PUT: 1 },
        // records this process has not seen: one GET per file before its fence
        'delete dir of 3 written by another process': { GET: 4, HEAD: -1, PUT: 3 },
      });
      // The figures with history off are the table above's (pinned there); with history on:
      expect(on['str_replace']).toEqual(write({ GET: 1, PUT: 2 }));
      expect(on['view file']).toEqual({ GET: 1, LIST: 1 });
    });

    it('a lost conditional write costs one more GET + PUT per retry (the losing PUT is counted)', async () => {
      const { vault, prefix, count } = await countingVault('check-first');
      await seed(vault, { '/memories/c.md': 'one\ntwo\n' });
      // Another instance (its own vault, so not serialised by our in-process locks) edits the file
      // between our GET and our PUT, once. It runs outside this command's async context (started
      // before it), so its own requests are not counted here.
      const rival = (await countingVault('check-first', prefix)).vault;
      const store = vault.store as S3Store;
      const realGet = store.get.bind(store);
      let openGate: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const rivalDone = (async () => {
        await gate;
        const r = await rival.run(U, {
          command: 'insert',
          path: '/memories/c.md',
          insert_line: 0,
          insert_text: 'rival',
        });
        expect(r.isError).toBe(false);
      })();
      let intercepted = false;
      store.get = async (key) => {
        const object = await realGet(key);
        if (!intercepted && object) {
          intercepted = true;
          openGate();
          await rivalDone;
        }
        return object;
      };
      try {
        expect(await count({ command: 'str_replace', path: '/memories/c.md', old_str: 'two', new_str: 'TWO' })).toEqual(
          write({ GET: 2, PUT: 2 }),
        );
      } finally {
        store.get = realGet;
      }
      const file = await (await vault.files(U)).read('/memories/c.md');
      expect(Buffer.from(file!.data).toString('utf8')).toBe('rival\none\nTWO\n');
    });

    it('a directory view lists 1,000 keys per request', { timeout: 180_000 }, async () => {
      const { vault, count } = await countingVault('check-first');
      await vault.run(U, { command: 'view', path: '/memories' });
      const files = await vault.files(U);
      for (let b = 0; b < 1500; b += 100) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) => files.write(`/memories/many/f${b + i}.md`, new Uint8Array([65]))),
        );
      }
      // The writes took longer than the look interval: a command first, so the counted ones make no look of their own.
      await vault.run(U, { command: 'view', path: '/memories/many/f0.md' });
      expect(await count({ command: 'view', path: '/memories' })).toEqual({ LIST: 2 });
      expect(await count({ command: 'view', path: '/memories/many' })).toEqual({ GET: 1, LIST: 2 });
    });
  },
);
