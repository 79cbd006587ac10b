/**
 * The edit commands' size and line limits at their exact edges: a file may hold exactly
 * maxFileBytes UTF-8 bytes and 999,999 lines; one byte or one line more is refused with the spec's
 * message and nothing is written. Also the snippet of an edit that deletes text.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { MAX_LINES, numbered } from '../../src/tool/text.js';

const USER = 'alice';
const MAX = 64;

async function vaultOf(maxFileBytes = MAX): Promise<Vault> {
  return createVault({ store: new MemoryStore(), pii: false, quota: { maxFileBytes } });
}

async function content(vault: Vault, path: string): Promise<string> {
  const file = await (await vault.files(USER)).read(path);
  return new TextDecoder().decode(file!.data);
}

describe('maxFileBytes counts UTF-8 bytes and allows exactly the limit', () => {
  it('str_replace to exactly the limit passes; one byte over is refused, nothing written', async () => {
    const vault = await vaultOf();
    // 'é' is 2 bytes: 30 of them and 'ab' are 62 bytes; replacing 'ab' by 'xyz'/'wxyz' gives 63/64/65.
    const start = `${'é'.repeat(30)}ab`;
    expect((await vault.run(USER, { command: 'create', path: '/memories/f', file_text: start })).isError).toBe(false);
    expect(
      (await vault.run(USER, { command: 'str_replace', path: '/memories/f', old_str: 'ab', new_str: 'wxyz' })).isError,
    ).toBe(false);
    expect(Buffer.byteLength(await content(vault, '/memories/f'))).toBe(MAX);
    const over = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/f',
      old_str: 'wxyz',
      new_str: 'vwxyz',
    });
    expect(over).toEqual({
      isError: true,
      code: 'TOO_LARGE',
      content: messages.fileTooLarge('/memories/f', MAX + 1, MAX),
    });
    expect(await content(vault, '/memories/f')).toBe(`${'é'.repeat(30)}wxyz`);
  });

  it('insert past the limit is refused the same way; up to it passes', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/i', file_text: 'a'.repeat(60) });
    const over = await vault.run(USER, {
      command: 'insert',
      path: '/memories/i',
      insert_line: 1,
      insert_text: 'bcd\n',
    });
    expect(over).toEqual({ isError: true, code: 'TOO_LARGE', content: messages.fileTooLarge('/memories/i', 65, MAX) });
    expect(await content(vault, '/memories/i')).toBe('a'.repeat(60));
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/i', insert_line: 1, insert_text: 'bc\n' })).isError,
    ).toBe(false);
    expect(await content(vault, '/memories/i')).toBe(`${'a'.repeat(60)}\nbc\n`);
  });
});

describe('999,999 lines', () => {
  it('an insert that makes exactly 999,999 lines passes; one line more is refused with the spec message', async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false, quota: { maxFileBytes: 4 * 1024 * 1024 } });
    const lines = '\n'.repeat(MAX_LINES - 1);
    await vault.run(USER, { command: 'create', path: '/memories/l', file_text: lines });
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/l', insert_line: 0, insert_text: 'one\n' })).isError,
    ).toBe(false);
    expect(
      await vault.run(USER, { command: 'insert', path: '/memories/l', insert_line: 0, insert_text: 'two\n' }),
    ).toEqual({
      isError: true,
      code: 'TOO_LARGE',
      content: messages.tooManyLinesWrite('/memories/l'),
    });
    // A file of more characters than lines is not refused for its characters.
    const wide = await vault.run(USER, {
      command: 'create',
      path: '/memories/w',
      file_text: 'x'.repeat(MAX_LINES + 10),
    });
    expect(wide.isError).toBe(false);
  });
});

describe('the snippet of an edit that removes text', () => {
  it('shows the lines around where the text was, numbered as they are now', async () => {
    const vault = await vaultOf(1024);
    await vault.run(USER, { command: 'create', path: '/memories/s', file_text: 'l1\nl2\nl3\nl4\nl5\nl6\n' });
    const removed = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/s',
      old_str: 'l4\n',
      new_str: '',
    });
    expect(removed.content).toBe(
      messages.edited([numbered('l2', 2), numbered('l3', 3), numbered('l5', 4), numbered('l6', 5)].join('\n')),
    );
    // A one-character replacement at a line's start: the snippet ends two lines after that line.
    const one = await vault.run(USER, { command: 'str_replace', path: '/memories/s', old_str: 'l1', new_str: 'X' });
    expect(one.content).toBe(messages.edited([numbered('X', 1), numbered('l2', 2), numbered('l3', 3)].join('\n')));
  });
});
