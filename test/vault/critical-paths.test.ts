/**
 * Critical paths: requests that need no answer from each other go out together.
 *
 * A create's name check (src/vault/names.ts: a LIST, a HEAD per ancestor) and the write of its kept
 * version need no answer from each other, so they go out together once the create's PUT has landed:
 * its latency is two round trips, not three. The version never goes out before the
 * PUT it keeps (the history is never ahead of the file), and a create the check takes back takes its
 * version back too (test/tool/create-refused.test.ts scans the store for that). A delete's (and a
 * rename's) tombstone follows its fence and goes out beside the marker's clean-up; the command
 * answers once both have settled.
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';

/** A memory store that logs every call, and holds LISTs below the files until released. */
function gatedStore() {
  const store = new MemoryStore();
  const log: string[] = [];
  let release!: () => void;
  let gate: Promise<void> | null = null;
  const view = Object.create(store) as MemoryStore;
  const kind = (key: string) => (key.split('/')[2] === 'v' ? 'version' : 'file');
  view.put = async (key, body, options) => {
    log.push(`put ${kind(key)}`);
    const result = await store.put(key, body, options);
    log.push(`put ${kind(key)} done`);
    return result;
  };
  view.list = async (prefix, options) => {
    const checking = gate !== null && prefix.split('/')[2] === 'f';
    log.push(checking ? 'list (name check)' : 'list');
    if (checking) await gate;
    const page = await store.list(prefix, options);
    if (checking) log.push('list (name check) done');
    return page;
  };
  const hold = () => {
    gate = new Promise<void>((resolve) => (release = resolve));
  };
  return { store: view, log, hold, release: () => release() };
}

describe('a create sends its name check and its version together', () => {
  it('the version is written while the name check is still waiting for its answer, and only after the file itself', async () => {
    const { store, log, hold, release } = gatedStore();
    const vault = await createVault({ store, encryption: { masterKey: Buffer.alloc(32, 3).toString('base64') } });
    expect((await vault.run('u', { command: 'create', path: '/memories/seed.md', file_text: 'x\n' })).isError).toBe(
      false,
    );
    log.length = 0;
    hold();
    const created = vault.run('u', { command: 'create', path: '/memories/new.md', file_text: 'hello\n' });
    // Wait until the version's PUT has landed, while the name check's LIST is held.
    for (let i = 0; i < 1000 && !log.includes('put version done'); i++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(log).toContain('put version done');
    expect(log).not.toContain('list (name check) done');
    release();
    expect((await created).isError).toBe(false);
    // The file's PUT landed before the version's went out.
    expect(log.indexOf('put file done')).toBeLessThan(log.indexOf('put version'));
    expect(log.indexOf('list (name check)')).toBeLessThan(log.indexOf('list (name check) done'));
    await vault.close();
  });
});

describe('a delete sends the tombstone and the marker clean-up together, and answers after both', () => {
  it('the tombstone lands while the clean-up is held; the command answers only once the tombstone has', async () => {
    const store = new MemoryStore();
    const log: string[] = [];
    let releaseDelete!: () => void;
    let releaseTombstone!: () => void;
    const deleteHeld = new Promise<void>((resolve) => (releaseDelete = resolve));
    const tombstoneHeld = new Promise<void>((resolve) => (releaseTombstone = resolve));
    let holding = false;
    const view = Object.create(store) as MemoryStore;
    // A store like S3, which fences with a marker (no deleteExactly) and then cleans it up.
    Object.assign(view, { deleteExactly: undefined });
    view.delete = async (key, options) => {
      if (holding) {
        log.push('marker clean-up');
        await deleteHeld;
        log.push('marker clean-up done');
      }
      return store.delete(key, options);
    };
    view.put = async (key, body, options) => {
      const tombstone = holding && key.split('/')[2] === 'v' && body.byteLength === 0;
      if (tombstone) {
        log.push('tombstone');
        await tombstoneHeld;
      }
      const result = await store.put(key, body, options);
      if (tombstone) log.push('tombstone done');
      return result;
    };
    const vault = await createVault({ store: view, encryption: { masterKey: Buffer.alloc(32, 4).toString('base64') } });
    expect((await vault.run('u', { command: 'create', path: '/memories/gone.md', file_text: 'bye\n' })).isError).toBe(
      false,
    );
    holding = true;
    let answered = false;
    const deleted = vault.run('u', { command: 'delete', path: '/memories/gone.md' }).then((r) => {
      answered = true;
      return r;
    });
    const settle = async (until: () => boolean) => {
      for (let i = 0; i < 1000 && !until(); i++) await new Promise((resolve) => setImmediate(resolve));
    };
    // Both went out: the tombstone while the clean-up is held, and the clean-up while the tombstone is.
    await settle(() => log.includes('tombstone') && log.includes('marker clean-up'));
    expect(log).toEqual(expect.arrayContaining(['tombstone', 'marker clean-up']));
    releaseDelete();
    await settle(() => log.includes('marker clean-up done'));
    await settle(() => answered);
    expect(answered).toBe(false); // the tombstone is still held
    releaseTombstone();
    expect((await deleted).isError).toBe(false);
    expect(log.indexOf('tombstone done')).toBeGreaterThan(log.indexOf('marker clean-up done'));
    expect((await vault.history('u', '/memories/gone.md')).versions.map((v) => v.end ?? 'content')).toEqual([
      'deleted',
      'content',
    ]);
    await vault.close();
  });
});

describe('on a store that offers deleteExactly, the delete is the fence', () => {
  it('no marker is written; the tombstone goes out only once the delete landed, and the command answers after it', async () => {
    const store = new MemoryStore();
    const log: string[] = [];
    let releaseDelete!: () => void;
    const deleteHeld = new Promise<void>((resolve) => (releaseDelete = resolve));
    let holding = false;
    const view = Object.create(store) as MemoryStore;
    view.deleteExactly = async (key, ifMatch) => {
      log.push('delete');
      if (holding) await deleteHeld;
      await store.deleteExactly(key, ifMatch);
      log.push('delete done');
    };
    view.put = async (key, body, options) => {
      if (holding) log.push(key.split('/')[2] === 'v' ? 'put version' : 'put file');
      return store.put(key, body, options);
    };
    const vault = await createVault({ store: view, encryption: { masterKey: Buffer.alloc(32, 5).toString('base64') } });
    for (const name of ['gone', 'moved'])
      expect(
        (await vault.run('u', { command: 'create', path: `/memories/${name}.md`, file_text: 'bye\n' })).isError,
      ).toBe(false);
    holding = true;
    let answered = false;
    const deleted = vault.run('u', { command: 'delete', path: '/memories/gone.md' }).then((r) => {
      answered = true;
      return r;
    });
    for (let i = 0; i < 5000 && !log.includes('delete'); i++) await new Promise((resolve) => setTimeout(resolve, 1));
    for (let i = 0; i < 200; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['delete']); // held: nothing follows it yet
    expect(answered).toBe(false);
    releaseDelete();
    expect((await deleted).isError).toBe(false);
    expect(log).toEqual(['delete', 'delete done', 'put version']); // the tombstone, after the delete
    log.length = 0;
    expect(
      (await vault.run('u', { command: 'rename', old_path: '/memories/moved.md', new_path: '/memories/there.md' }))
        .isError,
    ).toBe(false);
    // The copy and its version, then the source deleted (no marker PUT), then its tombstone.
    expect(log).toEqual(['put file', 'put version', 'delete', 'delete done', 'put version']);
    expect((await vault.history('u', '/memories/gone.md')).versions.map((v) => v.end ?? 'content')).toEqual([
      'deleted',
      'content',
    ]);
    expect((await vault.history('u', '/memories/moved.md')).versions.map((v) => v.end ?? 'content')).toEqual([
      'moved',
      'content',
    ]);
    await vault.close();
  });
});

describe('a create the name check takes back leaves no version, whatever its version PUT answered', () => {
  it('a version PUT that landed but whose answer was lost is found by its record and deleted with the create', async () => {
    const store = new MemoryStore();
    let loseVersionAnswers = false;
    const view = Object.create(store) as MemoryStore;
    view.put = async (key, body, options) => {
      const result = await store.put(key, body, options);
      if (loseVersionAnswers && key.split('/')[2] === 'v')
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      return result;
    };
    const vault = await createVault({ store: view, encryption: { masterKey: Buffer.alloc(32, 6).toString('base64') } });
    expect((await vault.run('u', { command: 'create', path: '/memories/dir/a.md', file_text: 'a\n' })).isError).toBe(
      false,
    );
    const before = store.keys();
    loseVersionAnswers = true;
    const refused = await vault.run('u', { command: 'create', path: '/memories/dir', file_text: 'x\n' });
    expect(refused.isError).toBe(true);
    expect(store.keys()).toEqual(before);
    await vault.close();
  });
});
