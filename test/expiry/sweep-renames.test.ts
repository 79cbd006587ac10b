/**
 * The sweeper finishes directory renames stopped part-way: a user who never
 * comes back must not keep files at two places. It meets each user once per sweep and hands their
 * store uid to `finishStoppedRenames` (stoppedRenameFinisher over the host's way of opening a user's
 * files). A runner on the sweeper's host that was killed is known gone at once; a live (paused) one
 * is left alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { sweep } from '../../src/expiry/sweep.js';
import { openStore } from '../../src/store/open.js';
import type { ObjectStore } from '../../src/store/port.js';
import { stoppedRenameFinisher } from '../../src/tool/commands/stopped.js';
import { PausingStore } from '../tool/pausing-store.js';
import { killPartWay, places, seed, vaultOn } from '../tool/stopped-rename.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function fileStore(): Promise<{ store: ObjectStore; url: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sweep-renames-'));
  dirs.push(dir);
  const url = pathToFileURL(dir).href;
  return { store: await openStore(url), url };
}

/** The sweeper's finisher, opening the one user of these tests through `vault`. */
function finisherFor(vault: Vault, user: string) {
  return stoppedRenameFinisher(async (storeUid) => {
    const files = await vault.files(user);
    expect(files.uid).toBe(storeUid);
    return files;
  });
}

describe('the sweeper finishes stopped directory renames', () => {
  it('a rename whose process was killed (kill -9) is finished by the next sweep, and counted', async () => {
    const { store, url } = await fileStore();
    const user = 'swept-killed';
    await seed(store, user);
    await killPartWay(url, user, 'fence', 20);
    const vault = await vaultOn(store, true);
    const before = await places(vault, user);
    expect(before.both, 'files at both places after the kill').toBeGreaterThan(0);
    const summary = await sweep({ store: new PausingStore(store), finishStoppedRenames: finisherFor(vault, user) });
    expect(summary).toMatchObject({ renamesFinished: 1, errors: 0, users: 1 });
    expect(await places(vault, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
    // Nothing is left to finish: the next sweep finds no journal.
    expect(
      await sweep({ store: new PausingStore(store), finishStoppedRenames: finisherFor(vault, user) }),
    ).toMatchObject({ renamesFinished: 0, errors: 0 });
    // A dry run never writes.
    expect(
      (await sweep({ store: new PausingStore(store), dryRun: true, finishStoppedRenames: finisherFor(vault, user) }))
        .renamesFinished,
    ).toBeUndefined();
    await vault.close();
    await store.close();
  }, 120_000);

  it("vault.expire hands the sweep its own finisher (the codec's forUid): a killed rename is finished by the vault's sweep", async () => {
    const { store, url } = await fileStore();
    const user = 'swept-by-vault';
    await seed(store, user);
    await killPartWay(url, user, 'fence', 20);
    // Names are plain in these tests (the pausing kit finds the requests by their keys); an encrypted
    // vault's codec provider has forUid too, and the same finisher uses it.
    const vault = await createVault({
      store: new PausingStore(store, { deleteExactly: true }),
      encryption: false,
      expiry: { ttlDays: 30 },
    });
    expect((await places(vault, user)).both, 'files at both places after the kill').toBeGreaterThan(0);
    expect(await vault.expire()).toMatchObject({ renamesFinished: 1, errors: 0 });
    expect(await places(vault, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
    await vault.close();
    await store.close();
  }, 120_000);

  it('a rename whose runner is alive (paused, and its journal fresh) is left to it', async () => {
    const { store } = await fileStore();
    const user = 'swept-paused';
    await seed(store, user);
    const pausing = new PausingStore(store, { deleteExactly: true });
    const paused = await createVault({ store: pausing, encryption: false });
    await paused.run(user, { command: 'view', path: '/memories/keep.md' });
    pausing.pauseAt('fence', 20);
    const first = paused.run(user, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    while (!pausing.paused) await new Promise((r) => setTimeout(r, 5));
    const vault = await vaultOn(store, true);
    const before = await places(vault, user);
    expect(
      await sweep({ store: new PausingStore(store), finishStoppedRenames: finisherFor(vault, user) }),
    ).toMatchObject({ renamesFinished: 0, errors: 0 });
    expect(await places(vault, user)).toEqual(before);
    pausing.wake();
    expect(await first).toMatchObject({ isError: false });
    expect(await places(vault, user)).toEqual({ both: 0, lost: 0, oldOnly: 0 });
    await paused.close();
    await vault.close();
    await store.close();
  }, 60_000);

  it('a user whose files cannot be opened is an error of the sweep, not a success', async () => {
    const { store } = await fileStore();
    await seed(store, 'swept-unopenable');
    const summary = await sweep({
      store: new PausingStore(store),
      finishStoppedRenames: async () => {
        throw new Error('no key');
      },
    });
    expect(summary).toMatchObject({ renamesFinished: 0, errors: 1 });
    await store.close();
  });
});
