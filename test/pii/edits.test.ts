/**
 * Through the whole chain (createVault -> vault.run): what an edit stores
 * is checked as the file it produces, not as the fragment it was given, and edits match the text
 * as the model wrote or saw it. Run on the in-memory store and on the embedded file store (plain
 * codec, so the bytes on disk show that redaction, not encryption, removed a value).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { PiiMiddlewareOptions } from '../../src/pipeline/pii-redactor.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { storedText } from '../kit/stores.js';

type Run = Vault['run'];

/** One value per type, the label that makes it certain, and a cut point where neither half is detected. */
const VALUES = [
  { type: 'EMAIL', value: 'jane.doe@example.com', label: 'e-mail:', cut: 8 },
  { type: 'PHONE', value: '+1 415 555 0132', label: 'phone:', cut: 10 },
  { type: 'CREDIT_CARD', value: '4111 1111 1111 1111', label: 'card:', cut: 9 },
  { type: 'IBAN', value: 'DE89 3704 0044 0532 0130 00', label: 'IBAN:', cut: 9 },
  { type: 'US_SSN', value: '536-22-8711', label: 'SSN:', cut: 6 },
  { type: 'IP_ADDRESS', value: '81.2.69.77', label: 'server ip:', cut: 7 },
  { type: 'SECRET', value: 'ghp_R8x2Lm4Nq7Vt1Bz9Kc3Hw6Jy5Pd0Fs2Ga8Ue', label: 'token:', cut: 6 },
  // Detected only next to its label: the label-then-value bypass.
  { type: 'SECRET', value: 'Tr0ut&Pine2023', label: 'password:', cut: 3 },
] as const;

const stores: Array<
  [string, () => Promise<{ store: ObjectStore; raw: () => Promise<string>; cleanup: () => Promise<void> }>]
> = [
  [
    'memory store',
    async () => {
      const store = new MemoryStore();
      return { store, raw: () => storedText(store), cleanup: async () => {} };
    },
  ],
  [
    'file store',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-pii-'));
      const store = await FileStore.open(dir);
      const raw = async () => {
        const parts: string[] = [];
        for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
          const full = join(entry.parentPath, entry.name);
          parts.push(full);
          if (entry.isFile()) parts.push(await readFile(full, 'utf8'));
        }
        return parts.join('\n');
      };
      return { store, raw, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  ],
];

let open: Array<{ vault: Vault; cleanup: () => Promise<void> }> = [];
afterEach(async () => {
  for (const o of open) {
    await o.vault.close();
    await o.cleanup();
  }
  open = [];
});

function text(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

describe.each(stores)('edits through vault.run (%s)', (_name, makeStore) => {
  async function setup(pii?: PiiMiddlewareOptions) {
    const { store, raw, cleanup } = await makeStore();
    const vault = await createVault({ store, encryption: false, ...(pii ? { pii } : {}) });
    open.push({ vault, cleanup });
    const run: Run = (uid, input) => vault.run(uid, input);
    const view = async (path: string) => text((await run('u', { command: 'view', path })).content);
    /** The file's text as stored (view output without the header and line numbers), one '\n' after each line. */
    const content = async (path: string) =>
      (await view(path))
        .split('\n')
        .slice(1)
        .map((l) => `${l.replace(/^\s*\d+\t/, '')}\n`)
        .join('');
    return { run, view, content, raw };
  }

  describe.each(VALUES)('$type $value', ({ value, label, cut }) => {
    const whole = `${label} ${value}`;

    it('piece by piece: a value assembled by str_replace is redacted like the same text in one create', async () => {
      const { run, content, raw } = await setup();
      // The halves with a gap between them, then the gap removed: new_str is empty.
      const split = `${label} ${value.slice(0, cut)}<gap>${value.slice(cut)}\n`;
      expect((await run('u', { command: 'create', path: '/memories/a.md', file_text: split })).isError).toBe(false);
      const edit = await run('u', { command: 'str_replace', path: '/memories/a.md', old_str: '<gap>', new_str: '' });
      expect(edit.isError).toBe(false);
      await run('u', { command: 'create', path: '/memories/b.md', file_text: `${whole}\n` });
      expect(await content('/memories/a.md')).toBe(await content('/memories/b.md'));
      expect(await content('/memories/a.md')).toContain('[REDACTED:');
      expect(await raw()).not.toContain(value);
      // The answer's snippet shows what was stored, not the value.
      expect(text(edit.content)).not.toContain(value);
    });

    it('label then value: a value written after its label by str_replace is redacted', async () => {
      const { run, content, raw } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: `${label} TBD\n` });
      expect(
        (await run('u', { command: 'str_replace', path: '/memories/a.md', old_str: 'TBD', new_str: value })).isError,
      ).toBe(false);
      await run('u', { command: 'create', path: '/memories/b.md', file_text: `${whole}\n` });
      expect(await content('/memories/a.md')).toBe(await content('/memories/b.md'));
      expect(await raw()).not.toContain(value);
    });

    it('value then label: a label written before an unlabelled value is redacted', async () => {
      const { run, content, raw } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: `x ${value}\n` });
      await run('u', { command: 'str_replace', path: '/memories/a.md', old_str: 'x ', new_str: `${label} ` });
      await run('u', { command: 'create', path: '/memories/b.md', file_text: `${whole}\n` });
      expect(await content('/memories/a.md')).toBe(await content('/memories/b.md'));
      expect(await raw()).not.toContain(value);
    });

    it('insert: the pieces as two lines, then joined; and a value inserted under its label', async () => {
      const { run, raw } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: `${label} ${value.slice(0, cut)}\n` });
      await run('u', {
        command: 'insert',
        path: '/memories/a.md',
        insert_line: 1,
        insert_text: `${value.slice(cut)}\n`,
      });
      // Joining the two lines: old_str is the line break, new_str empty.
      const joined = await run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: `${value.slice(0, cut)}\n`,
        new_str: value.slice(0, cut),
      });
      expect(joined.isError).toBe(false);
      expect(await raw()).not.toContain(value);
    });

    it('reject policy: an edit that completes a value is refused and changes nothing', async () => {
      const { run, content } = await setup({
        policy: {
          EMAIL: 'reject',
          PHONE: 'reject',
          CREDIT_CARD: 'reject',
          IBAN: 'reject',
          US_SSN: 'reject',
          IP_ADDRESS: 'reject',
          SECRET: 'reject',
        },
      });
      const split = `${label} ${value.slice(0, cut)}<gap>${value.slice(cut)}\n`;
      expect((await run('u', { command: 'create', path: '/memories/a.md', file_text: split })).isError).toBe(false);
      const edit = await run('u', { command: 'str_replace', path: '/memories/a.md', old_str: '<gap>', new_str: '' });
      expect(edit).toMatchObject({ isError: true, code: 'PII_REJECTED' });
      expect(text(edit.content)).not.toContain(value);
      expect(await content('/memories/a.md')).toBe(split);
    });
  });

  it('an AWS secret key inserted on the line after its key id is redacted (context on another line)', async () => {
    const { run, raw } = await setup();
    await run('u', { command: 'create', path: '/memories/aws.md', file_text: 'AKIAQ3EGRT5XKZ7J2MWN\n' });
    await run('u', {
      command: 'insert',
      path: '/memories/aws.md',
      insert_line: 1,
      insert_text: 'kP8v2Qx9rT4mZ7nB1cD6fG3hJ5kL0pR2sV8wY4zA\n',
    });
    expect(await raw()).not.toContain('kP8v2Qx9rT4mZ7nB1cD6fG3hJ5kL0pR2sV8wY4zA');
  });

  it('a value completed far inside a large file is found (the scan window follows the change)', async () => {
    const { run, content, raw } = await setup();
    const filler = 'Meeting notes, nothing personal here at all.\n'.repeat(6000); // ~270 KB on each side
    await run('u', {
      command: 'create',
      path: '/memories/big.md',
      file_text: `${filler}mail jane.doe<gap>@example.com\n${filler}`,
    });
    await run('u', { command: 'str_replace', path: '/memories/big.md', old_str: '<gap>', new_str: '' });
    expect(await raw()).not.toContain('jane.doe@example.com');
    const shown = await content('/memories/big.md');
    expect(shown.length).toBeGreaterThan(0);
  });

  describe('verbatim edits (item 4)', () => {
    it('old_str that a detector misfires on out of context still matches, and is replaced as written', async () => {
      const { run, content } = await setup();
      await run('u', {
        command: 'create',
        path: '/memories/rel.md',
        file_text: 'We shipped release 10.1.2.3 on Monday.\n',
      });
      expect(await content('/memories/rel.md')).toBe('We shipped release 10.1.2.3 on Monday.\n');
      // Alone, "10.1.2.3" reads as an address; the old code redacted old_str and could never match.
      const edit = await run('u', {
        command: 'str_replace',
        path: '/memories/rel.md',
        old_str: '10.1.2.3',
        new_str: '10.1.2.4',
      });
      expect(edit).toMatchObject({ isError: false });
      expect(text(edit.content)).not.toContain('REDACTED');
      expect(await content('/memories/rel.md')).toBe('We shipped release 10.1.2.4 on Monday.\n');
    });

    it('a failed match quotes old_str as the model wrote it, never a placeholder', async () => {
      const { run } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: 'hello\n' });
      const result = await run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'mail jane.doe@example.com',
        new_str: 'x',
      });
      expect(result).toMatchObject({ isError: true, code: 'NO_MATCH' });
      expect(text(result.content)).toContain('`mail jane.doe@example.com`');
      expect(text(result.content)).not.toContain('REDACTED');
    });

    it('text the model sees (placeholders included) can be edited verbatim', async () => {
      const { run, content } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: 'mail jane.doe@example.com\n' });
      expect(await content('/memories/a.md')).toBe('mail [REDACTED:EMAIL]\n');
      const edit = await run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'mail [REDACTED:EMAIL]',
        new_str: 'mail (removed)',
      });
      expect(edit.isError).toBe(false);
      expect(await content('/memories/a.md')).toBe('mail (removed)\n');
    });

    it('a value the model wrote, redacted on the way in, may be quoted as it wrote it', async () => {
      const { run, content } = await setup();
      await run('u', {
        command: 'create',
        path: '/memories/a.md',
        file_text: 'mail jane.doe@example.com\nphone later\n',
      });
      const edit = await run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'mail jane.doe@example.com',
        new_str: 'mail: see CRM',
      });
      expect(edit.isError).toBe(false);
      expect(await content('/memories/a.md')).toBe('mail: see CRM\nphone later\n');
    });

    it('editing next to a stored placeholder leaves it alone, and the snippet shows the stored text', async () => {
      const { run, content } = await setup();
      await run('u', { command: 'create', path: '/memories/a.md', file_text: 'SSN: 536-22-8711 (old)\n' });
      const edit = await run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: '(old)',
        new_str: '(checked)',
      });
      expect(edit.isError).toBe(false);
      expect(text(edit.content)).toContain('SSN: [REDACTED:US_SSN] (checked)');
      expect(await content('/memories/a.md')).toBe('SSN: [REDACTED:US_SSN] (checked)\n');
    });

    it('reject policy: an edit near a value stored before the policy changed is not refused for it', async () => {
      const { store, cleanup } = await makeStore();
      const before = await createVault({ store, encryption: false, pii: false });
      await before.run('u', {
        command: 'create',
        path: '/memories/a.md',
        file_text: 'card 4111 1111 1111 1111, note\n',
      });
      const vault = await createVault({ store, encryption: false, pii: { policy: { CREDIT_CARD: 'reject' } } });
      open.push({ vault, cleanup: async () => {} }, { vault: before, cleanup });
      const edit = await vault.run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'note',
        new_str: 'expired',
      });
      expect(edit.content).toMatch(/has been edited/);
      // ... but a second card the edit brings in is refused.
      const second = await vault.run('u', {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'expired',
        new_str: '5555 5555 5555 4444',
      });
      expect(second).toMatchObject({ isError: true, code: 'PII_REJECTED' });
    });
  });
});
