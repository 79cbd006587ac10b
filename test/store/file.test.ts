import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile, mkdir, truncate } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { MemvaultError } from '../../src/errors.js';
import { FileStore } from '../../src/store/file.js';
import { createObjectFile } from '../../src/store/file/write.js';
import { decodeComponent, keyToComponents, lockFileName, tempFileName } from '../../src/store/file/keys.js';
import { listAll, PreconditionFailedError, type ObjectInfo, type ObjectStore } from '../../src/store/port.js';
import { runStoreContract } from './contract.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = join(here, '..', '..');
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const str = (b: Uint8Array): string => new TextDecoder().decode(b);

const sandboxes: string[] = [];
async function sandbox(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-file-store-'));
  sandboxes.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of sandboxes) await rm(dir, { recursive: true, force: true });
});

runStoreContract('file', async () => {
  const dir = await sandbox();
  return { store: await FileStore.open(join(dir, 'store')), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

/** Every path below `dir`, relative to it, directories with a trailing '/'. */
async function collect(store: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of listAll(store, prefix)) out.push(info);
  return out;
}

async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        out.push(`${relative(dir, path)}/`);
        await visit(path);
      } else {
        out.push(relative(dir, path));
      }
    }
  };
  await visit(dir);
  return out.sort();
}

function runNode(
  script: string,
  args: string[],
): {
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  pid: number | undefined;
  kill(): void;
  firstLine: Promise<string>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', script), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', () => reject(new Error(`child exited before printing: ${stderr}`)));
  });
  firstLine.catch(() => undefined);
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { done, pid: child.pid, kill: () => child.kill('SIGKILL'), firstLine };
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  const pid = child.pid!;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

const SAFE_NAME = /^([a-z0-9_.-]|%[0-9A-F]{2}|%)+[~+]?$/;
const DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;

function assertPortableName(name: string): void {
  expect(name).toMatch(SAFE_NAME);
  expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
  expect(name).not.toMatch(/^\.\.?$/);
  expect(name).not.toMatch(/[. ]$/);
  expect(name.replace(/[~+]$/, '')).not.toMatch(DEVICE);
}

describe('FileStore key mapping', () => {
  const hostile = [
    '../../../etc/passwd',
    '..',
    '../',
    '/abs/path',
    'a//b',
    'trailing/',
    '//',
    '\\\\server\\share\\x',
    'C:\\Windows\\system32',
    '%2e%2e%2f..%2f',
    '.\u0000.',
    'x/./y/../z',
    'nul',
    'COM1.txt',
    'aux/con/prn.md/lpt9',
    'A',
    'a',
    'a~',
    'a+',
    'a~lock',
    'a'.repeat(1024),
    'é'.repeat(512),
    '/'.repeat(200),
    `${'%'.repeat(300)}/${'Z'.repeat(400)}`,
  ];

  it('keeps hostile keys inside the root with portable names, and reads them all back', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(join(dir, 'root'), { durable: false });
    for (const key of hostile) await store.put(key, text(`body of ${key}`));
    // Nothing was created beside the root.
    expect(await readdir(dir)).toEqual(['root']);
    await store.idle(); // lock files go once the call has answered
    const paths = await tree(join(dir, 'root'));
    expect(paths.filter((p) => !p.endsWith('/'))).toHaveLength(hostile.length);
    for (const path of paths) for (const name of path.split('/').filter(Boolean)) assertPortableName(name);
    // No two entries of one directory differ only in case (case-insensitive disks would merge them).
    const folded = paths.map((p) => p.toLowerCase());
    expect(new Set(folded).size).toBe(paths.length);
    for (const key of hostile) expect(str((await store.get(key))!.body)).toBe(`body of ${key}`);
    const listed = (await store.list('')).objects.map((o) => o.key);
    expect(listed).toEqual([...hostile].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    await store.deleteMany(hostile);
    await store.idle(); // lock files go once the call has answered
    expect(await tree(join(dir, 'root'))).toEqual([]);
  });

  it('maps every key to decodable, portable components that no other key shares (property)', () => {
    const keyArb = fc
      .string({
        unit: fc.constantFrom(
          'a',
          'A',
          'z',
          '.',
          '/',
          '%',
          '~',
          '+',
          ' ',
          '\\',
          'é',
          '😀',
          '\u0000',
          'c',
          'o',
          'n',
          '1',
          '_',
          '-',
        ),
        minLength: 1,
        maxLength: 400,
      })
      .filter((k) => Buffer.byteLength(k) <= 1024);
    fc.assert(
      fc.property(keyArb, keyArb, (a, b) => {
        const ca = keyToComponents(a);
        for (const name of ca) assertPortableName(name);
        const decoded = Buffer.concat(
          ca.map((name, i) => {
            const d = decodeComponent(name);
            expect(d.kind).toBe(i === ca.length - 1 ? 'object' : name.endsWith('+') ? 'continuation' : 'directory');
            return d.kind === 'directory' ? Buffer.concat([d.bytes, Buffer.from('/')]) : d.bytes;
          }),
        );
        expect(decoded.toString('utf8')).toBe(a);
        if (a !== b) expect(ca.join('/').toLowerCase()).not.toBe(keyToComponents(b).join('/').toLowerCase());
      }),
      { numRuns: 500 },
    );
  });

  it('cuts a long segment into continuation pieces and lists it under a prefix that ends mid-piece', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir, { durable: false });
    const key = `p/${'Q'.repeat(300)}`; // 900 escaped characters: several pieces
    expect(keyToComponents(key).filter((c) => c.endsWith('+')).length).toBeGreaterThanOrEqual(4);
    await store.put(key, text('long'));
    await store.put('p/Q', text('short'));
    expect((await store.list(`p/${'Q'.repeat(123)}`)).objects.map((o) => o.key)).toEqual([key]);
    expect((await store.list('p/Q')).objects.map((o) => o.key)).toEqual(['p/Q', key]);
  });

  it('rejects empty, over-long and ill-formed keys without writing anything', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir);
    for (const key of ['', 'a'.repeat(1025), 'é'.repeat(513), 'lone \uD800 surrogate']) {
      await expect(store.put(key, text('x'))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(store.get(key)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('FileStore files on disk', () => {
  it('creates its root with mode 0700 and objects with mode 0600, and keeps no lock or temp files', async () => {
    const dir = join(await sandbox(), 'a', 'b');
    const store = await FileStore.open(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await store.put('x/y', text('1'));
    await store.put('x/y', text('2'), { ifNoneMatch: '*' }).catch(() => undefined);
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['x/', 'x/y~']);
    expect((await stat(join(dir, 'x'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'x', 'y~'))).mode & 0o777).toBe(0o600);
  });

  it('removes directories emptied by deletes, up to (not including) the root', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir);
    await store.put('a/b/c/d', text('1'));
    await store.put('a/x', text('2'));
    await store.delete('a/b/c/d');
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['a/', 'a/x~']);
    await store.deleteMany(['a/x']);
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual([]);
    expect((await stat(dir)).isDirectory()).toBe(true);
  });

  it('recreates a directory that a concurrent delete pruned (no lost writes)', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir, { durable: false });
    for (let i = 0; i < 150; i += 1) {
      await store.put('d/e/y', text('y'));
      await Promise.all([store.delete('d/e/y'), store.put(`d/e/x${i}`, text(`x${i}`)), store.delete(`d/e/x${i - 1}`)]);
      expect(str((await store.get(`d/e/x${i}`))!.body)).toBe(`x${i}`);
    }
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['d/', 'd/e/', 'd/e/x149~']);
  });

  it('gives a rewrite of identical bytes a new etag, so a stale ifMatch fails', async () => {
    const store = await FileStore.open(await sandbox());
    const v1 = await store.put('k', text('same'));
    const v2 = await store.put('k', text('same'));
    expect(v2.etag).not.toBe(v1.etag);
    await expect(store.put('k', text('late'), { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    const copy = await store.copy('k', 'k');
    expect(copy.etag).not.toBe(v2.etag);
  });

  it('stamps lastModified from the injected clock and keeps tags through copies', async () => {
    let now = new Date('2030-01-02T03:04:05.678Z');
    const store = await FileStore.open(await sandbox(), { now: () => now });
    await store.put('k', text('x'), { tags: { ttl: 'short' } });
    expect((await store.head('k'))!.lastModified.toISOString()).toBe('2030-01-02T03:04:05.678Z');
    now = new Date('2030-02-01T00:00:00.000Z');
    await store.copy('k', 'k', { metadata: { touched: '1' } });
    expect((await store.head('k'))!.lastModified.toISOString()).toBe('2030-02-01T00:00:00.000Z');
    expect((await store.list(''))!.objects[0]!.lastModified.toISOString()).toBe('2030-02-01T00:00:00.000Z');
    expect(await store.tagsOf('k')).toEqual({ ttl: 'short' });
    expect(await store.tagsOf('missing')).toBeUndefined();
  });

  it('caps a page at 1,000 keys', async () => {
    const store = await FileStore.open(await sandbox(), { durable: false });
    for (let i = 0; i < 1001; i += 1) await store.put(`k/${String(i).padStart(4, '0')}`, new Uint8Array(0));
    const first = await store.list('k/', { maxKeys: 5000 });
    expect(first.objects).toHaveLength(1000);
    expect(first.continuationToken).toBeDefined();
    const second = await store.list('k/', { continuationToken: first.continuationToken! });
    expect(second.objects.map((o) => o.key)).toEqual(['k/1000']);
    expect(second.continuationToken).toBeUndefined();
    await expect(store.list('k/', { continuationToken: 'not a token!' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('fails operations after close', async () => {
    const store = await FileStore.open(await sandbox());
    await store.close();
    await expect(store.get('k')).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: 'the local store is closed',
    });
  });
});

describe('FileStore crash safety', () => {
  it('ignores a torn temp file left beside the object, and removes it from list once stale', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir, { tempStaleMs: 60_000 });
    const old = await store.put('a/k', text('old object'));
    const [dirName, fileName] = keyToComponents('a/k') as [string, string];
    // What a writer killed mid-write leaves: a half-written temp file next to the object.
    const freshTemp = join(dir, dirName, tempFileName(fileName, process.pid, 'aaaaaaaaaaaaaaaa'));
    const staleTemp = join(dir, dirName, tempFileName(fileName, 999_999_999, 'bbbbbbbbbbbbbbbb'));
    await writeFile(freshTemp, 'MVOB\u0001 torn');
    await writeFile(staleTemp, 'MVOB\u0001 torn');
    const longAgo = new Date(Date.now() - 3_600_000);
    await utimes(staleTemp, longAgo, longAgo);
    const got = await store.get('a/k');
    expect(str(got!.body)).toBe('old object');
    expect(got!.etag).toBe(old.etag);
    expect((await store.list('')).objects.map((o) => o.key)).toEqual(['a/k']);
    // The stale one was cleaned up while listing; the fresh one may belong to a live writer.
    expect(await tree(dir)).toEqual(['a/', `a/${fileName}`, relative(dir, freshTemp)].sort());
    await store.put('a/k', text('new object'), { ifMatch: old.etag });
    expect(str((await store.get('a/k'))!.body)).toBe('new object');
  });

  it('reports a damaged object file as a store failure instead of serving it', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir);
    await store.put('k', text('a body that will be cut short'));
    await truncate(join(dir, 'k~'), 40);
    await expect(store.get('k')).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: 'the local store failed: ECORRUPT',
    });
    await expect(store.head('k')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await writeFile(join(dir, 'k~'), 'not an object at all');
    await expect(store.get('k')).rejects.toMatchObject({ message: 'the local store failed: ECORRUPT' });
    // An operator can still remove it.
    await store.delete('k');
    expect(await readdir(dir)).toEqual([]);
  });

  it(
    'reads a whole object (old or new) after writers are killed mid-write, and breaks their locks',
    { timeout: 120_000 },
    async () => {
      const dir = await sandbox();
      const size = 256 * 1024;
      const store = new FileStore(dir, { lockStaleMs: 3_600_000, lockTimeoutMs: 10_000 });
      const seenVersions = new Set<number>();
      for (let round = 0; round < 12; round += 1) {
        const child = runNode('crash-writer.ts', [dir, 'crash/key', String(size)]);
        expect(await child.firstLine).toBe('ready');
        // Kill at a varying point of the write loop (the delay only picks the moment; nothing is timed).
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 40)));
        child.kill();
        await child.done;
        const got = await store.get('crash/key');
        expect(got!.size).toBe(size);
        expect(got!.body.byteLength).toBe(size);
        const first = got!.body[0]!;
        expect(got!.body.every((b) => b === first)).toBe(true);
        seenVersions.add(first);
        // A lock the killed writer held is broken (its pid is dead), so this write neither hangs nor fails.
        await store.put('crash/key', new Uint8Array(size).fill(0), { ifMatch: got!.etag });
      }
      expect(seenVersions.size).toBeGreaterThan(0);
    },
  );
});

describe('FileStore create-only writes (lock-free: link)', () => {
  it(
    'racing deletes of the last object in their directory (which prune it): every create lands',
    { timeout: 60_000 },
    async () => {
      const dir = await sandbox();
      const store = await FileStore.open(dir);
      for (let round = 0; round < 40; round += 1) {
        await store.put(`d${round % 4}/old`, text('x'));
        // The delete empties the directory and prunes it while the create is on its way into it.
        const [created] = await Promise.all([
          store.put(`d${round % 4}/new${round}`, text(`n${round}`), { ifNoneMatch: '*' }),
          store.delete(`d${round % 4}/old`),
        ]);
        expect(str((await store.get(`d${round % 4}/new${round}`))!.body)).toBe(`n${round}`);
        expect((await store.head(`d${round % 4}/new${round}`))!.etag).toBe(created.etag);
        await store.delete(`d${round % 4}/new${round}`);
      }
      await store.idle(); // lock files go once the call has answered
      expect(await tree(dir)).toEqual([]);
    },
  );

  it('recreate a directory pruned between the caller’s check and the temp file, and write nothing over a taken name', async () => {
    const dir = await sandbox();
    const loc = { dir: join(dir, 'gone'), name: 'k~', file: join(dir, 'gone', 'k~') };
    let ensured = 0;
    const ensure = async () => {
      ensured += 1;
      await mkdir(loc.dir);
    };
    expect(await createObjectFile(loc, text('x'), true, ensure)).toBe(true);
    expect(ensured).toBe(1);
    expect(await createObjectFile(loc, text('y'), true, ensure)).toBe(false);
    expect(ensured).toBe(1);
    expect(await readFile(loc.file, 'utf8')).toBe('x');
    expect(await readdir(loc.dir)).toEqual(['k~']);
  });

  it('lets exactly one of a create-once copy (which takes the lock) and create-once puts (which do not) win, whatever their timing; the key holds the winner', async () => {
    const store = await FileStore.open(await sandbox());
    await store.put('source', text('copied'));
    for (let round = 0; round < 40; round += 1) {
      const key = `k${round}`;
      // The copy first; the puts land at varying points of its look-then-write (the timing only varies the moment).
      const copy = store.copy('source', key, { ifNoneMatch: '*' });
      await new Promise((resolve) => setTimeout(resolve, round % 5));
      const puts = [1, 2].map((i) => store.put(key, text(`writer ${i}`), { ifNoneMatch: '*' }));
      const results = await Promise.allSettled([copy, ...puts]);
      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ i, etag: r.value.etag }] : []));
      expect(winners).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(PreconditionFailedError);
      const got = (await store.get(key))!;
      expect(str(got.body)).toBe(winners[0]!.i === 0 ? 'copied' : `writer ${winners[0]!.i}`);
      expect(got.etag).toBe(winners[0]!.etag);
    }
  });

  it(
    'a conditional delete that finds its object already deleted deletes nothing, not a file created since',
    { timeout: 60_000 },
    async () => {
      const dir = await sandbox();
      const store = await FileStore.open(dir, { durable: false });
      let createdAndKept = 0;
      for (let round = 0; round < 150; round += 1) {
        const key = `r${round % 10}/k`;
        const marker = await store.put(key, new Uint8Array(0));
        // Two deleters of the same version (a fence clean-up and the sweeper) and a create racing them.
        const deletes = [store.delete(key, { ifMatch: marker.etag }), store.delete(key, { ifMatch: marker.etag })];
        // The create goes out once the first delete is done, while the second is on its way to the lock.
        const create = deletes[0]!.then(async () => {
          for (let tick = 0; tick < round % 4; tick++) await new Promise((resolve) => setImmediate(resolve));
          return store.put(key, text(`new ${round}`), { ifNoneMatch: '*' });
        });
        const [created] = await Promise.allSettled([create, ...deletes]);
        if (created.status === 'fulfilled') {
          // Acknowledged: the file must be there, whatever the deleters of the old version did.
          expect(str((await store.get(key))!.body)).toBe(`new ${round}`);
          createdAndKept += 1;
        }
        await store.delete(key);
      }
      expect(createdAndKept).toBeGreaterThan(0);
    },
  );

  it('a create-only write needs no lock: it lands while a live process holds the key’s lock, which a replacing write waits on', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir, { lockStaleMs: 3_600_000, lockTimeoutMs: 300 });
    await store.put('held/other', text('x'));
    const components = keyToComponents('held/k');
    await writeFile(
      join(dir, ...components.slice(0, -1), lockFileName(components[components.length - 1]!)),
      JSON.stringify({ host: hostname(), pid: process.ppid, instance: 'parent', time: Date.now(), token: 'live' }),
    );
    await store.put('held/k', text('created'), { ifNoneMatch: '*' });
    expect(str((await store.get('held/k'))!.body)).toBe('created');
    await expect(store.put('held/k', text('replaced'))).rejects.toMatchObject({
      message: 'the local store failed: ELOCKED',
    });
    expect(str((await store.get('held/k'))!.body)).toBe('created');
  });

  it('take no lock and leave no temp file, won or lost; a create-only copy onto its own source is refused', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir);
    await store.put('k', text('first'), { ifNoneMatch: '*' });
    await expect(store.put('k', text('second'), { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.copy('k', 'k', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await store.copy('k', 'c', { ifNoneMatch: '*' });
    await expect(store.copy('k', 'c', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['c~', 'k~']);
    expect(str((await store.get('c'))!.body)).toBe('first');
  });
});

describe('FileStore locks across processes', () => {
  it(
    '4 processes x 100 read-modify-write appends to one key: all 400 entries present',
    { timeout: 300_000 },
    async () => {
      const dir = await sandbox();
      const workers = Array.from({ length: 4 }, (_, id) =>
        runNode('append-worker.ts', [dir, 'shared/log', '100', `w${id}`]),
      );
      const results = await Promise.all(workers.map((w) => w.done));
      for (const r of results) expect(r).toMatchObject({ code: 0, stderr: '' });
      const conflicts = results.reduce((sum, r) => sum + (JSON.parse(r.stdout) as { conflicts: number }).conflicts, 0);
      const lines = str((await new FileStore(dir).get('shared/log'))!.body)
        .trimEnd()
        .split('\n');
      expect(lines).toHaveLength(400);
      for (let id = 0; id < 4; id += 1) {
        // Each worker's own entries appear once each, in its order.
        expect(lines.filter((l) => l.startsWith(`w${id}:`))).toEqual(
          Array.from({ length: 100 }, (_, n) => `w${id}:${n}`),
        );
      }
      // The processes did contend; otherwise this would not test the lock.
      expect(conflicts).toBeGreaterThan(0);
      expect(await tree(dir)).toEqual(['shared/', 'shared/log~']);
    },
  );

  it(
    '4 processes create the same 60 keys once each (the lock-free create-only path): every key has exactly one winner, whose bytes it holds',
    { timeout: 300_000 },
    async () => {
      const dir = await sandbox();
      const workers = Array.from({ length: 4 }, (_, id) =>
        runNode('create-worker.ts', [dir, 'race/k', '60', `w${id}`]),
      );
      const results = await Promise.all(workers.map((w) => w.done));
      for (const r of results) expect(r).toMatchObject({ code: 0, stderr: '' });
      const wins = results.map((r) => JSON.parse(r.stdout) as { id: string; won: number[] });
      const winnerOf = new Map<number, string>();
      for (const { id, won } of wins)
        for (const n of won) {
          expect(winnerOf.has(n)).toBe(false); // never two winners of one key
          winnerOf.set(n, id);
        }
      expect([...winnerOf.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
      const store = new FileStore(dir);
      for (const [n, id] of winnerOf) expect(str((await store.get(`race/k${n}`))!.body)).toBe(`${id}:${n}`);
      // No temp file is left behind by the losers.
      expect((await tree(dir)).filter((p) => !p.endsWith('~') && !p.endsWith('/'))).toEqual([]);
    },
  );

  it(
    'a create-only writer killed mid-write leaves every key whole or absent, and its temp file is removed by a listing',
    { timeout: 120_000 },
    async () => {
      const dir = await sandbox();
      const size = 256 * 1024;
      const store = new FileStore(dir, { tempStaleMs: 0 });
      for (let round = 0; round < 8; round += 1) {
        const child = runNode('create-worker.ts', [dir, `crash${round}/k`, String(size), 'c', 'crash']);
        expect(await child.firstLine).toBe('ready');
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 40)));
        child.kill();
        await child.done;
        const listed = await collect(store, `crash${round}/`);
        expect(listed.length).toBeGreaterThan(0);
        for (const info of listed) {
          const got = (await store.get(info.key))!;
          expect(got.body.byteLength).toBe(size);
          expect(got.body.every((b) => b === got.body[0])).toBe(true);
        }
      }
      // The listings above removed the killed writers' temp files (tempStaleMs 0: their pids are dead).
      expect((await tree(dir)).filter((p) => !p.endsWith('~') && !p.endsWith('/'))).toEqual([]);
    },
  );

  const lockPathOf = (dir: string, key: string): string => {
    const components = keyToComponents(key);
    return join(dir, ...components.slice(0, -1), lockFileName(components[components.length - 1]!));
  };

  it('breaks a lock whose owner pid is dead at once', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir, { lockStaleMs: 3_600_000, lockTimeoutMs: 10_000 });
    await store.put('k', text('before'));
    await store.idle(); // our own lock file is gone before one is planted
    await writeFile(
      lockPathOf(dir, 'k'),
      JSON.stringify({ host: hostname(), pid: await deadPid(), instance: 'gone', time: Date.now(), token: 'dead' }),
    );
    await store.put('k', text('after'));
    expect(str((await store.get('k'))!.body)).toBe('after');
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['k~']);
    // A predecessor with this process's pid (a container restarted as pid 1) is dead too.
    await writeFile(
      lockPathOf(dir, 'k'),
      JSON.stringify({ host: hostname(), pid: process.pid, instance: 'previous', time: Date.now(), token: 'old' }),
    );
    await store.put('k', text('again'));
    expect(str((await store.get('k'))!.body)).toBe('again');
    await store.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual(['k~']);
  });

  it('a locked call answered before its lock file went never makes the next call on the key fail (no waiting allowed), and idle() sees the lock file gone', async () => {
    const dir = await sandbox();
    // No waiting at all: a call that met this process's own lock file would fail with ELOCKED.
    const store = await FileStore.open(dir, { lockTimeoutMs: 0, durable: false });
    let etag = (await store.put('k', text('0'))).etag;
    for (let i = 1; i <= 30; i++) {
      etag = (await store.put('k', text(String(i)), { ifMatch: etag })).etag;
      // A lost condition is answered too, and leaves the key to the next call.
      await expect(store.put('k', text('stale'), { ifMatch: 'not-the-etag' })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
    }
    // Calls of one turn at once queue on the key the same way.
    const [a, b] = await Promise.all([store.put('k', text('a')), store.put('k', text('b'))]);
    expect([a.etag, b.etag]).toContain((await store.head('k'))!.etag);
    await store.idle();
    expect(await tree(dir)).toEqual(['k~']);
    await store.delete('k');
    expect(await tree(dir)).toEqual([]); // a delete answers once its directory is pruned (after its lock file went)
  });

  it('waits for a live owner, fails with ELOCKED after the timeout, and breaks the lock once it is stale', async () => {
    const dir = await sandbox();
    const lockPath = lockPathOf(dir, 'k');
    const patient = await FileStore.open(dir, { lockStaleMs: 3_600_000, lockTimeoutMs: 300 });
    await patient.put('k', text('before'));
    await patient.idle(); // our own lock file is gone before one is planted
    // The parent of this test process is alive: its lock must be respected.
    await writeFile(
      lockPath,
      JSON.stringify({ host: hostname(), pid: process.ppid, instance: 'parent', time: Date.now(), token: 'live' }),
    );
    const error = await patient.put('k', text('blocked')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemvaultError);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', message: 'the local store failed: ELOCKED' });
    expect(str((await patient.get('k'))!.body)).toBe('before');
    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toMatchObject({ token: 'live' });
    // A live owner that has held the lock for longer than lockStaleMs is presumed hung.
    await writeFile(
      lockPath,
      JSON.stringify({
        host: hostname(),
        pid: process.ppid,
        instance: 'parent',
        time: Date.now() - 7_200_000,
        token: 'hung',
      }),
    );
    await patient.put('k', text('after'));
    expect(str((await patient.get('k'))!.body)).toBe('after');
    await patient.idle();
    // An unreadable lock (owner died before writing it) is judged by its age.
    await writeFile(lockPath, '');
    const longAgo = new Date(Date.now() - 7_200_000);
    await utimes(lockPath, longAgo, longAgo);
    await patient.delete('k');
    await patient.idle(); // lock files go once the call has answered
    expect(await tree(dir)).toEqual([]);
  });
});

describe('FileStore errors', () => {
  it('keeps host paths out of every error, giving only the errno code', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(join(dir, 'root'));
    // A plain file where the directory of key 'p/x' belongs makes the file system refuse.
    await writeFile(join(dir, 'root', 'p'), 'in the way');
    await mkdir(join(dir, 'root', 'q~'));
    const failures: unknown[] = [
      await store.put('p/x', text('x')).catch((e: unknown) => e),
      await store.copy('missing', 'elsewhere').catch((e: unknown) => e),
      await store.get('q').catch((e: unknown) => e),
    ];
    for (const e of failures) {
      expect(e).toBeInstanceOf(MemvaultError);
      const error = e as MemvaultError;
      expect(error.message).toMatch(/^(the local store failed: E[A-Z]+|the copy source does not exist)$/);
      expect(error.cause).toBeUndefined();
      for (const rendered of [
        error.message,
        String(error),
        JSON.stringify(error),
        JSON.stringify(Object.entries(error)),
      ]) {
        expect(rendered).not.toContain(dir);
        expect(rendered).not.toContain(tmpdir());
      }
    }
    expect((failures[0] as MemvaultError).code).toBe('STORE_UNAVAILABLE');
    expect((failures[1] as MemvaultError).code).toBe('NOT_FOUND');
    expect((failures[2] as MemvaultError).message).toBe('the local store failed: EISDIR');
  });
});
