/**
 * Objects under a user's prefix that are not the user's files: one planted
 * object must not deny a user their memory. Shared by the memory, file-store and radosgw suites.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { createVault, type VaultLogger } from '../../src/memvault.js';
import type { ObjectStore } from '../../src/store/port.js';

export interface LoggedLine {
  level: string;
  fields: unknown;
  message: string | undefined;
}

export function recordingLogger(): { logger: VaultLogger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const at = (level: string) => (fields: object | string, message?: string) =>
    void lines.push({ level, fields, message });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const ALICE = 'alice-planted-7731@example.com';
const BOB = 'bob-planted-7731@example.com';
/** A plaintext name someone with console access gave a "folder" (must never reach a log or the model). */
const CONSOLE_FOLDER = 'PLANTEDCONSOLEFOLDER';

const text = (result: { content: unknown }) => JSON.stringify(result.content);

/** Entries of a directory view (after its header and total line), directories with their '/'. */
function listedPaths(result: { content: unknown }): string[] {
  const content = result.content;
  const shown =
    typeof content === 'string' ? content : (content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
  return shown
    .split('\n')
    .slice(2)
    .map((line) => line.slice(line.indexOf('\t') + 1));
}

/**
 * Plants, under alice's prefix: bob's object copied into her directory, S3-console folder markers
 * (her encrypted directory key with a trailing '/', a plaintext one, an empty segment), garbage names
 * and bytes; and one object at a name of hers whose bytes do not open. Then: every listing works and
 * shows only her files; direct reads of the damaged file are the integrity error; rename and delete of
 * the directory still work; each skipped object is logged by uid and key hash, never by name.
 */
export async function plantedObjectsScenario(store: ObjectStore): Promise<{ skipped: number }> {
  const keyProvider = await createLocalKeyProvider(new Uint8Array(randomBytes(32)));
  const codec = await createEncryptedCodecProvider({ store, keyProvider });
  const { logger, lines } = recordingLogger();
  const vault = await createVault({ store, codec, logger });
  try {
    const run = (user: string, input: Record<string, unknown>) => vault.run(user, input);
    for (const path of [
      '/memories/notes/a.md',
      '/memories/notes/b.md',
      '/memories/notes/deep/c.md',
      '/memories/top.md',
    ]) {
      expect((await run(ALICE, { command: 'create', path, file_text: `text of ${path}\n` })).isError).toBe(false);
    }
    expect((await run(BOB, { command: 'create', path: '/memories/notes/bobs.md', file_text: 'bob\n' })).isError).toBe(
      false,
    );

    const alice = await codec.forUser(ALICE);
    const bob = await codec.forUser(BOB);
    const notesPrefix = alice.prefixFor('/memories/notes');
    const bobKey = bob.keyFor('/memories/notes/bobs.md');
    const bobObject = (await store.get(bobKey))!;
    const bobName = bobKey.slice(bob.prefixFor('/memories/notes').length);
    const planted = [
      // bob's object, name and bytes, copied into alice's directory
      [`${notesPrefix}${bobName}`, bobObject.body],
      // S3-console folder markers: her own encrypted directory, a plaintext folder, an empty segment
      [notesPrefix, new Uint8Array()],
      [`${alice.filesPrefix}${CONSOLE_FOLDER}/`, new Uint8Array()],
      [`${notesPrefix}deep//x`, new Uint8Array([1, 2, 3])],
      // garbage names: not base64url, base64url of random bytes, too short for a SIV
      [`${notesPrefix}not base64!`, new Uint8Array(randomBytes(64))],
      [`${notesPrefix}${randomBytes(40).toString('base64url')}`, new Uint8Array(randomBytes(100))],
      [`${alice.filesPrefix}AAAA`, new Uint8Array(randomBytes(10))],
    ] as const;
    for (const [key, body] of planted) await store.put(key, body);
    // A name of hers whose bytes are garbage: listed (listings never open bodies), unreadable.
    await store.put(alice.keyFor('/memories/notes/damaged.md'), new Uint8Array(randomBytes(120)));

    const notes = await run(ALICE, { command: 'view', path: '/memories/notes' });
    expect(notes.isError).toBe(false);
    expect(listedPaths(notes).sort()).toEqual(
      [
        '/memories/notes/a.md',
        '/memories/notes/b.md',
        '/memories/notes/damaged.md',
        '/memories/notes/deep/',
        '/memories/notes/deep/c.md',
      ].sort(),
    );
    const root = await run(ALICE, { command: 'view', path: '/memories' });
    expect(root.isError).toBe(false);
    expect(listedPaths(root)).toContain('/memories/top.md');
    expect(listedPaths(root).sort()).toEqual(
      [
        '/memories/notes/',
        '/memories/notes/a.md',
        '/memories/notes/b.md',
        '/memories/notes/damaged.md',
        '/memories/notes/deep/',
        '/memories/top.md',
      ].sort(),
    );
    expect(text(root)).not.toContain(CONSOLE_FOLDER);
    expect(text(root)).not.toContain('bob');
    // The console folder made no directory: the name is free for a file.
    const consoleView = await run(ALICE, { command: 'view', path: `/memories/${CONSOLE_FOLDER}` });
    expect(consoleView.isError).toBe(true);
    expect(text(consoleView)).toContain('does not exist');
    expect(
      (await run(ALICE, { command: 'create', path: `/memories/${CONSOLE_FOLDER}`, file_text: 'a file\n' })).isError,
    ).toBe(false);

    // Direct reads of the object whose bytes do not open stay the integrity error.
    const damaged = await run(ALICE, { command: 'view', path: '/memories/notes/damaged.md' });
    expect(damaged.isError).toBe(true);
    expect(damaged.code).toBe('INTEGRITY');
    // Her own files read as ever; bob still sees his.
    expect(text(await run(ALICE, { command: 'view', path: '/memories/notes/a.md' }))).toContain(
      'text of /memories/notes/a.md',
    );
    expect(text(await run(BOB, { command: 'view', path: '/memories/notes' }))).toContain('/memories/notes/bobs.md');

    // Tree commands over the directory holding planted objects still work.
    expect((await run(ALICE, { command: 'delete', path: '/memories/notes/damaged.md' })).isError).toBe(false);
    const renamed = await run(ALICE, { command: 'rename', old_path: '/memories/notes', new_path: '/memories/moved' });
    expect(renamed.isError, text(renamed)).toBe(false);
    expect(listedPaths(await run(ALICE, { command: 'view', path: '/memories/moved' })).sort()).toEqual(
      ['/memories/moved/a.md', '/memories/moved/b.md', '/memories/moved/deep/', '/memories/moved/deep/c.md'].sort(),
    );
    // What is left below the old name is not hers: the directory is gone for her, the name is free.
    expect((await run(ALICE, { command: 'view', path: '/memories/notes' })).isError).toBe(true);
    expect((await run(ALICE, { command: 'create', path: '/memories/notes', file_text: 'now a file\n' })).isError).toBe(
      false,
    );
    expect((await run(ALICE, { command: 'delete', path: '/memories/moved' })).isError).toBe(false);
    expect((await run(ALICE, { command: 'view', path: '/memories/moved' })).isError).toBe(true);
    // The planted objects are left where they are (nothing deletes what it did not write).
    for (const [key] of planted) expect(await store.head(key), key).not.toBeNull();

    // The operator hears of each skip by uid, reason and key hash; never by key, name or content.
    const skips = lines.filter((l) => l.level === 'warn' && /listing skipped/.test(l.message ?? ''));
    expect(skips.length).toBeGreaterThanOrEqual(planted.length);
    const reasons = new Set(skips.map((l) => (l.fields as { reason: string }).reason));
    expect(reasons).toEqual(new Set(['folder_marker', 'not_decryptable']));
    for (const line of skips) {
      const fields = line.fields as Record<string, unknown>;
      expect(fields['uid']).toBe(alice.uid);
      expect(String(fields['object'])).toMatch(/^sha256:[0-9a-f]{32}$/);
    }
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(CONSOLE_FOLDER);
    expect(logged).not.toContain(ALICE);
    for (const [key] of planted) expect(logged).not.toContain(key.slice(alice.filesPrefix.length) || '\u0000');
    return { skipped: skips.length };
  } finally {
    await vault.close();
  }
}
