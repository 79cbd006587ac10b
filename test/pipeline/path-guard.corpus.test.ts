import { beforeAll, describe, expect, it } from 'vitest';
import type { Vault } from '../../src/memvault.js';
import { canonicalizePath, InvalidPathError } from '../../src/pipeline/path-guard.js';
import { attackPaths, legitimatePaths } from './corpus.js';
import { memoryVault, RecordingStore, userSpaceOf, viaHandler } from './helpers.js';

const SECRETS = ['ROOT-SECRET-passwd', 'BOB-SECRET-notes', 'ALICE-OWN-NOTE'];

describe('attack corpus against vault.handlers(user).view', () => {
  const attacks = attackPaths();
  let vault: Vault;
  let store: RecordingStore;
  let inMallorySpace: (key: string) => boolean;

  beforeAll(async () => {
    store = new RecordingStore();
    ({ vault } = await memoryVault({ store }));
    inMallorySpace = await userSpaceOf('mallory');
    // Things an escape could reach: a raw key at the top of the bucket, another user's file, and
    // for good measure a file of mallory's own that no attack path names.
    await store.put('etc/passwd', new TextEncoder().encode(SECRETS[0]));
    await vault.run('bob', { command: 'create', path: '/memories/secret.md', file_text: SECRETS[1] });
    await vault.run('bob', { command: 'create', path: '/memories/etc/passwd', file_text: SECRETS[1] });
    await vault.run('mallory', { command: 'create', path: '/memories/own/note.md', file_text: SECRETS[2] });
    store.touched.length = 0;
  });

  it(`has several hundred attacks from many families (${attacks.length})`, () => {
    expect(attacks.length).toBeGreaterThan(500);
    expect(new Set(attacks.map((a) => a.family.split(' ')[0])).size).toBeGreaterThan(15);
  });

  it('every attack is an error result, never reads outside the user, never shows a secret', async () => {
    const failures: string[] = [];
    for (const attack of attacks) {
      const outcome = await viaHandler(vault, 'mallory', { command: 'view', path: attack.path });
      if (outcome.ok) failures.push(`accepted: ${JSON.stringify(attack.path)} (${attack.family})`);
      if (SECRETS.some((s) => JSON.stringify(outcome.content).includes(s)))
        failures.push(`leaked: ${JSON.stringify(attack.path)}`);
      if (JSON.stringify(outcome.content).includes('    at '))
        failures.push(`stack trace: ${JSON.stringify(attack.path)}`);
    }
    expect(failures).toEqual([]);
    const foreign = store.touched.filter((key) => !inMallorySpace(key));
    expect(foreign).toEqual([]);
  });

  it('every attack the guard must catch is refused by the guard itself (INVALID_PATH)', () => {
    const missed: string[] = [];
    for (const attack of attacks.filter((a) => a.guardRejects)) {
      try {
        canonicalizePath(attack.path);
        missed.push(`${JSON.stringify(attack.path)} (${attack.family})`);
      } catch (error) {
        if (!(error instanceof InvalidPathError)) throw error;
      }
    }
    expect(missed).toEqual([]);
  });

  it('refusals name the problem for the model', async () => {
    const outcome = await viaHandler(vault, 'mallory', { command: 'view', path: '/memories/%2e%2e/%2e%2e/etc/passwd' });
    expect(outcome).toEqual({
      ok: false,
      content: expect.stringMatching(
        /^Error: Invalid path "\/memories\/%2e%2e\/%2e%2e\/etc\/passwd": .*"\.\." in disguise/,
      ),
    });
  });
});

describe('legitimate names against vault.handlers(user).view', () => {
  const names = legitimatePaths();

  it(`are never refused as invalid paths (${names.length} names)`, async () => {
    const { vault } = await memoryVault();
    const refused: string[] = [];
    for (const path of names) {
      const outcome = await viaHandler(vault, 'alice', { command: 'view', path });
      if (outcome.ok) continue;
      // A missing file is the expected answer; anything else (INVALID_PATH above all) is a false positive.
      if (!/^The path .* does not exist\. Please provide a valid path\.$/s.test(outcome.content))
        refused.push(`${JSON.stringify(path)}: ${outcome.content}`);
    }
    expect(refused).toEqual([]);
    expect(names.length).toBeGreaterThan(300);
  });

  it('round-trip: a created file is viewed back under the same name; NFC and NFD spell one file', async () => {
    const { vault, store } = await memoryVault();
    // Image names hold text here, which view rightly refuses to show as an image.
    const files = names.filter(
      (p) =>
        !/\.(png|jpe?g)$/i.test(p) &&
        !p.endsWith('/') &&
        p !== '/memories' &&
        !p.endsWith('/.') &&
        canonicalizePath(p).split('/').length <= 12,
    );
    const wrong: string[] = [];
    for (const [i, path] of files.entries()) {
      // Directories of one run may be files of another (`/memories/c` and `/memories/c/...`): one vault per name.
      const user = `user-${i}`;
      const created = await vault.run(user, { command: 'create', path, file_text: `content of ${i}\n` });
      const viewed = await vault.run(user, { command: 'view', path: canonicalizePath(path).normalize('NFD') });
      if (created.isError || viewed.isError || !String(viewed.content).includes(`content of ${i}`))
        wrong.push(`${JSON.stringify(path)}: ${String(created.content)} / ${String(viewed.content)}`);
    }
    expect(wrong).toEqual([]);
    expect(files.length).toBeGreaterThan(300);
    // Nothing landed anywhere but in the users' own prefixes.
    expect(store.keys().every((key) => key.startsWith('u/'))).toBe(true);
  });
});
