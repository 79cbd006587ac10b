/**
 * view's character cap at its exact edges: a line longer than the cap is cut at its
 * end, keeping its beginning (a test with one repeated character could not tell the two ends
 * apart); the cap counts number, tab, text and line break of each line; the truncation notes name
 * the right lines.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { LINE_NUMBER_WIDTH, numbered } from '../../src/tool/text.js';

const USER = 'alice';
const LIMIT = 100;

async function vaultWith(text: string, viewChars = LIMIT): Promise<Vault> {
  const vault = await createVault({
    store: new MemoryStore(),
    pii: false,
    quota: { viewChars, maxViewOutputChars: viewChars + 1000 },
  });
  expect((await vault.run(USER, { command: 'create', path: '/memories/f.txt', file_text: text })).isError).toBe(false);
  return vault;
}

async function view(vault: Vault, range?: [number, number]): Promise<string> {
  const result = await vault.run(USER, {
    command: 'view',
    path: '/memories/f.txt',
    ...(range ? { view_range: range } : {}),
  });
  expect(result.isError).toBe(false);
  return result.content as string;
}

/** Distinct characters, so that a cut at the wrong place shows. */
const distinct = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + from + i)).join('');

describe('view: a line longer than the cap', () => {
  it('is cut at its end: the first limit - 8 characters are shown, then the note, then how to read on', async () => {
    const long = distinct(300);
    const vault = await vaultWith(`${long}\nsecond\n`);
    expect(await view(vault)).toBe(
      [
        messages.fileHeader('/memories/f.txt'),
        numbered(long.slice(0, LIMIT - LINE_NUMBER_WIDTH - 2), 1),
        messages.lineTruncated(1, LIMIT),
        messages.viewTruncated(1, 1, 2, LIMIT),
      ].join('\n'),
    );
  });

  it('a long line that is the only one: cut, and no note about more lines', async () => {
    const long = distinct(150);
    const vault = await vaultWith(long);
    expect(await view(vault)).toBe(
      [
        messages.fileHeader('/memories/f.txt'),
        numbered(long.slice(0, LIMIT - LINE_NUMBER_WIDTH - 2), 1),
        messages.lineTruncated(1, LIMIT),
      ].join('\n'),
    );
  });

  it('a long line after shorter ones ends the page before it, uncut; viewing from it cuts it', async () => {
    const long = distinct(200, 500);
    const vault = await vaultWith(`a\nb\n${long}\nz\n`);
    expect(await view(vault)).toBe(
      [
        messages.fileHeader('/memories/f.txt'),
        numbered('a', 1),
        numbered('b', 2),
        messages.viewTruncated(1, 2, 4, LIMIT),
      ].join('\n'),
    );
    expect(await view(vault, [3, -1])).toBe(
      [
        messages.fileHeader('/memories/f.txt'),
        numbered(long.slice(0, LIMIT - LINE_NUMBER_WIDTH - 2), 3),
        messages.lineTruncated(3, LIMIT),
        messages.viewTruncated(3, 3, 4, LIMIT),
      ].join('\n'),
    );
  });
});

describe('view: the cap counts every character the model reads', () => {
  it('lines that fill the cap exactly are all shown; one character more ends the page a line earlier', async () => {
    // Each line costs 6 (number) + 1 (tab) + 17 (text) + 1 (break) = 25: four fill 100 exactly.
    const line = (n: number) => `line-${String(n).padStart(2, '0')}-abcdefghi`;
    expect(LINE_NUMBER_WIDTH + 1 + line(1).length + 1).toBe(25);
    const four = Array.from({ length: 4 }, (_, i) => line(i + 1));
    const exact = await vaultWith(`${four.join('\n')}\n`);
    expect(await view(exact)).toBe(
      [messages.fileHeader('/memories/f.txt'), ...four.map((l, i) => numbered(l, i + 1))].join('\n'),
    );

    const over = await vaultWith(`${four.slice(0, 3).join('\n')}\n${four[3]}x\n`);
    expect(await view(over)).toBe(
      [
        messages.fileHeader('/memories/f.txt'),
        ...four.slice(0, 3).map((l, i) => numbered(l, i + 1)),
        messages.viewTruncated(1, 3, 4, LIMIT),
      ].join('\n'),
    );
  });

  it('a line of exactly limit - 8 characters is shown whole, without a cut note; one more is cut', async () => {
    const fits = distinct(LIMIT - LINE_NUMBER_WIDTH - 2);
    expect(await view(await vaultWith(fits))).toBe(
      [messages.fileHeader('/memories/f.txt'), numbered(fits, 1)].join('\n'),
    );
    const cut = distinct(LIMIT - LINE_NUMBER_WIDTH - 1);
    expect(await view(await vaultWith(cut))).toBe(
      [messages.fileHeader('/memories/f.txt'), numbered(cut.slice(0, -1), 1), messages.lineTruncated(1, LIMIT)].join(
        '\n',
      ),
    );
  });

  it('CR of CRLF lines is neither shown nor counted', async () => {
    const four = Array.from({ length: 4 }, (_, i) => `crlf-line-${i + 1}-abcde`);
    expect(four[0]!.length).toBe(17);
    expect(await view(await vaultWith(`${four.join('\r\n')}\r\n`))).toBe(
      [messages.fileHeader('/memories/f.txt'), ...four.map((l, i) => numbered(l, i + 1))].join('\n'),
    );
  });
});
