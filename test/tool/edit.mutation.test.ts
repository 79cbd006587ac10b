/**
 * The edit commands and the text model at their edges (mutation testing found these
 * unasserted): bytes that are not UTF-8 but hold no NUL, a BOM kept through a rewrite, line-ending
 * detection, insert_line bounds, every error code and message of create/str_replace/insert, the
 * snippet window and the size format of listings.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import {
  decodeText,
  encodeText,
  eolOf,
  formatSize,
  lineCount,
  lineOfOffset,
  numbered,
  parseText,
  renderText,
  textToLines,
} from '../../src/tool/text.js';

const USER = 'alice';

async function vaultOf(options: { createMode?: 'overwrite' | 'fail' } = {}): Promise<Vault> {
  return createVault({ store: new MemoryStore(), pii: false, ...options });
}

async function stored(vault: Vault, path: string): Promise<Uint8Array | undefined> {
  return (await (await vault.files(USER)).read(path))?.data;
}

async function writeRaw(vault: Vault, path: string, data: Uint8Array): Promise<void> {
  await (await vault.files(USER)).write(path, data);
}

const BOM = [0xef, 0xbb, 0xbf];

describe('decodeText: only UTF-8 text is text', () => {
  it('invalid UTF-8 without any NUL byte is not text (null), never replacement characters', () => {
    for (const bad of [
      [0xff],
      [0x61, 0xc3, 0x28],
      [0x80],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0x61, 0xe2, 0x82],
    ]) {
      expect(decodeText(Uint8Array.from(bad)), JSON.stringify(bad)).toBeNull();
    }
    expect(decodeText(Uint8Array.from([0x61, 0x00, 0x62]))).toBeNull();
    expect(decodeText(Uint8Array.from([0x00]))).toBeNull();
  });

  it('valid text decodes exactly, a BOM included', () => {
    expect(decodeText(encodeText('héllo 😀\r\n'))).toBe('héllo 😀\r\n');
    expect(decodeText(Uint8Array.from([...BOM, 0x61]))).toBe('\ufeffa');
    expect(decodeText(new Uint8Array(0))).toBe('');
    expect([...encodeText('\ufeffa')]).toEqual([...BOM, 0x61]);
  });

  it('edits of such a file are refused with the binary-file error, and the bytes stay as they were', async () => {
    const vault = await vaultOf();
    const bytes = Uint8Array.from([0x61, 0x62, 0xff, 0xfe, 0x63, 0x0a]);
    await writeRaw(vault, '/memories/latin1.txt', bytes);
    const replaced = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/latin1.txt',
      old_str: 'ab',
      new_str: 'xy',
    });
    expect(replaced).toMatchObject({
      isError: true,
      code: 'UNSUPPORTED_CONTENT',
      content: messages.binaryFile('/memories/latin1.txt'),
    });
    const inserted = await vault.run(USER, {
      command: 'insert',
      path: '/memories/latin1.txt',
      insert_line: 0,
      insert_text: 'x',
    });
    expect(inserted).toMatchObject({
      isError: true,
      code: 'UNSUPPORTED_CONTENT',
      content: messages.binaryFile('/memories/latin1.txt'),
    });
    expect(await stored(vault, '/memories/latin1.txt')).toEqual(bytes);
  });
});

describe('a BOM is kept on rewrite', () => {
  it('str_replace and insert keep the BOM of a file', async () => {
    const vault = await vaultOf();
    await writeRaw(vault, '/memories/bom.txt', Uint8Array.from([...BOM, ...encodeText('hello\nworld\n')]));
    expect(
      (await vault.run(USER, { command: 'str_replace', path: '/memories/bom.txt', old_str: 'world', new_str: 'there' }))
        .isError,
    ).toBe(false);
    expect([...(await stored(vault, '/memories/bom.txt'))!]).toEqual([...BOM, ...encodeText('hello\nthere\n')]);
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/bom.txt', insert_line: 2, insert_text: 'end' }))
        .isError,
    ).toBe(false);
    expect([...(await stored(vault, '/memories/bom.txt'))!]).toEqual([...BOM, ...encodeText('hello\nthere\nend\n')]);
  });
});

describe('the line model', () => {
  it('eolOf: CRLF only when every break is CRLF', () => {
    expect(eolOf('a\r\nb\r\n')).toBe('\r\n');
    expect(eolOf('a\r\nb')).toBe('\r\n');
    expect(eolOf('a\r\nb\n')).toBe('\n');
    expect(eolOf('\na\r\n')).toBe('\n');
    expect(eolOf('a\nb')).toBe('\n');
    expect(eolOf('abc')).toBe('\n');
    expect(eolOf('a\rb')).toBe('\n');
  });

  it('parseText / renderText round-trip and count lines as an editor does', () => {
    for (const text of ['', 'a', 'a\n', 'a\nb', 'a\nb\n', '\n', '\n\n', 'a\r\nb\r\n', 'a\r\nb', 'x\r\n']) {
      const parsed = parseText(text);
      expect(renderText(parsed), JSON.stringify(text)).toBe(text);
      expect(parsed.lines.length, JSON.stringify(text)).toBe(lineCount(text));
    }
    expect(parseText('a\r\nb\r\n')).toEqual({ lines: ['a', 'b'], eol: '\r\n', finalNewline: true });
    expect(parseText('a\nb')).toEqual({ lines: ['a', 'b'], eol: '\n', finalNewline: false });
    expect(parseText('\n')).toEqual({ lines: [''], eol: '\n', finalNewline: true });
    expect(parseText('')).toEqual({ lines: [], eol: '\n', finalNewline: false });
    expect(renderText({ lines: [], eol: '\n', finalNewline: true })).toBe('');
    expect(lineCount('a\n\n')).toBe(2);
  });

  it('textToLines: one trailing line break ends the last line; CRLF is one break', () => {
    expect(textToLines('a\nb\n')).toEqual(['a', 'b']);
    expect(textToLines('a\r\nb')).toEqual(['a', 'b']);
    expect(textToLines('a\n\n')).toEqual(['a', '']);
    expect(textToLines('')).toEqual(['']);
    expect(textToLines('\n')).toEqual(['']);
  });

  it('lineOfOffset and numbered', () => {
    expect(lineOfOffset('a\nb\nc', 0)).toBe(1);
    expect(lineOfOffset('a\nb\nc', 1)).toBe(1);
    expect(lineOfOffset('a\nb\nc', 2)).toBe(2);
    expect(lineOfOffset('a\nb\nc', 4)).toBe(3);
    expect(numbered('x', 7)).toBe('     7\tx');
    expect(numbered('', 1234567)).toBe('1234567\t');
  });

  it('formatSize prints sizes as the reference tool does', () => {
    expect(
      [
        0,
        -5,
        1,
        512,
        1023,
        1024,
        1536,
        1024 * 1024 - 1,
        1024 * 1024,
        5.5 * 1024 * 1024,
        1024 ** 3,
        3 * 1024 ** 4,
        1024 ** 5,
      ].map(formatSize),
    ).toEqual(['0B', '0B', '1B', '512B', '1023B', '1K', '1.5K', '1024.0K', '1M', '5.5M', '1G', '3T', '1024T']);
  });
});

describe('create: every refusal', () => {
  it('the root, a directory, a file as an ancestor, and an existing file under createMode fail', async () => {
    const vault = await vaultOf({ createMode: 'fail' });
    expect(await vault.run(USER, { command: 'create', path: '/memories', file_text: 'x' })).toMatchObject({
      isError: true,
      code: 'NOT_A_FILE',
      content: messages.rootIsDirectory('create'),
    });
    expect((await vault.run(USER, { command: 'create', path: '/memories/dir/a.md', file_text: 'x' })).content).toBe(
      messages.created('/memories/dir/a.md'),
    );
    expect(await vault.run(USER, { command: 'create', path: '/memories/dir', file_text: 'x' })).toMatchObject({
      isError: true,
      code: 'NOT_A_FILE',
      content: messages.createOnDirectory('/memories/dir'),
    });
    expect(await vault.run(USER, { command: 'create', path: '/memories/dir/a.md/b.md', file_text: 'x' })).toMatchObject(
      {
        isError: true,
        code: 'NOT_A_DIRECTORY',
        content: messages.ancestorIsFile('/memories/dir/a.md/b.md', '/memories/dir/a.md'),
      },
    );
    expect(await vault.run(USER, { command: 'create', path: '/memories/dir/a.md', file_text: 'y' })).toMatchObject({
      isError: true,
      code: 'ALREADY_EXISTS',
      content: messages.alreadyExists('/memories/dir/a.md'),
    });
    expect(new TextDecoder().decode(await stored(vault, '/memories/dir/a.md'))).toBe('x');
  });

  it('overwrite mode replaces the file', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'one' });
    expect((await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'two' })).isError).toBe(
      false,
    );
    expect(new TextDecoder().decode(await stored(vault, '/memories/a.md'))).toBe('two');
  });
});

describe('str_replace: errors and the snippet', () => {
  it('empty old_str, a missing file, the root, no match, several matches', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'aaa\nbbb\naaa\n' });
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories/a.md', old_str: '', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'INVALID_INPUT',
      content: messages.emptyOldStr(),
    });
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories/nope.md', old_str: 'a', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
      content: messages.editMissing('/memories/nope.md'),
    });
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories', old_str: 'a', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'NOT_A_FILE',
      content: messages.editMissing('/memories'),
    });
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories/a.md', old_str: 'zzz', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'NO_MATCH',
      content: messages.noMatch('zzz', '/memories/a.md'),
    });
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories/a.md', old_str: 'aaa', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'AMBIGUOUS_MATCH',
      content: messages.manyMatches('aaa', [1, 3]),
    });
    // Overlapping occurrences count: 'aa' is in 'aaa' twice, both on line 1 (listed once).
    expect(
      await vault.run(USER, { command: 'str_replace', path: '/memories/a.md', old_str: 'aa', new_str: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'AMBIGUOUS_MATCH',
      content: messages.manyMatches('aa', [1, 3]),
    });
    expect(new TextDecoder().decode(await stored(vault, '/memories/a.md'))).toBe('aaa\nbbb\naaa\n');
  });

  it('lists the first 20 lines of many matches and counts the rest', async () => {
    const vault = await vaultOf();
    await vault.run(USER, {
      command: 'create',
      path: '/memories/m.md',
      file_text: Array.from({ length: 25 }, () => 'dup').join('\n'),
    });
    const result = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/m.md',
      old_str: 'dup',
      new_str: 'x',
    });
    expect(result.content).toBe(
      messages.manyMatches(
        'dup',
        Array.from({ length: 20 }, (_, i) => i + 1),
        5,
      ),
    );
    const exactly20 = await vaultOf();
    await exactly20.run(USER, {
      command: 'create',
      path: '/memories/m.md',
      file_text: Array.from({ length: 20 }, () => 'dup').join('\n'),
    });
    expect(
      (await exactly20.run(USER, { command: 'str_replace', path: '/memories/m.md', old_str: 'dup', new_str: 'x' }))
        .content,
    ).toBe(
      messages.manyMatches(
        'dup',
        Array.from({ length: 20 }, (_, i) => i + 1),
        0,
      ),
    );
  });

  it('the snippet shows two lines either side of the change, numbered, without CR', async () => {
    const vault = await vaultOf();
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
    await vault.run(USER, { command: 'create', path: '/memories/s.md', file_text: `${lines.join('\n')}\n` });
    const mid = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/s.md',
      old_str: 'line 5',
      new_str: 'five\nFIVE',
    });
    expect(mid.content).toBe(
      messages.edited(
        [3, 4]
          .map((n) => numbered(`line ${n}`, n))
          .concat(numbered('five', 5), numbered('FIVE', 6), numbered('line 6', 7), numbered('line 7', 8))
          .join('\n'),
      ),
    );
    const first = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/s.md',
      old_str: 'line 1\n',
      new_str: '',
    });
    expect(first.content).toBe(
      messages.edited([numbered('line 2', 1), numbered('line 3', 2), numbered('line 4', 3)].join('\n')),
    );
    const last = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/s.md',
      old_str: 'line 10',
      new_str: 'ten',
    });
    expect(last.content).toBe(
      messages.edited([numbered('line 8', 8), numbered('line 9', 9), numbered('ten', 10)].join('\n')),
    );

    const crlf = await vaultOf();
    await crlf.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'one\r\ntwo\r\nthree\r\n' });
    const edited = await crlf.run(USER, {
      command: 'str_replace',
      path: '/memories/c.md',
      old_str: 'one\ntwo',
      new_str: 'uno\ndos',
    });
    expect(edited.content).toBe(
      messages.edited([numbered('uno', 1), numbered('dos', 2), numbered('three', 3)].join('\n')),
    );
    expect(new TextDecoder().decode(await stored(crlf, '/memories/c.md'))).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('a multi-line old_str with LF does not match an LF file with other text, and a CRLF file keeps CRLF', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/mixed.md', file_text: 'a\r\nb\nc\n' });
    // Mixed endings: not a CRLF file, so 'a\nb' is not rewritten to CRLF and does not match.
    expect(
      (await vault.run(USER, { command: 'str_replace', path: '/memories/mixed.md', old_str: 'a\nb', new_str: 'x' }))
        .code,
    ).toBe('NO_MATCH');
  });
});

describe('insert: bounds, line endings and the final newline', () => {
  it('insert_line must be a whole number from 0 to the line count', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/i.md', file_text: 'a\nb\n' });
    for (const line of [-1, 3, 1.5]) {
      expect(
        await vault.run(USER, { command: 'insert', path: '/memories/i.md', insert_line: line, insert_text: 'x' }),
      ).toMatchObject({
        isError: true,
        code: 'INVALID_RANGE',
        content: messages.invalidInsertLine(String(line), 2),
      });
    }
    expect(
      await vault.run(USER, { command: 'insert', path: '/memories/none.md', insert_line: 0, insert_text: 'x' }),
    ).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
      content: messages.insertMissing('/memories/none.md'),
    });
    expect(
      await vault.run(USER, { command: 'insert', path: '/memories/i.md', insert_line: 2, insert_text: 'c' }),
    ).toEqual({
      content: messages.inserted('/memories/i.md'),
      isError: false,
    });
    expect(new TextDecoder().decode(await stored(vault, '/memories/i.md'))).toBe('a\nb\nc\n');
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/i.md', insert_line: 0, insert_text: 'top\n' }))
        .isError,
    ).toBe(false);
    expect(new TextDecoder().decode(await stored(vault, '/memories/i.md'))).toBe('top\na\nb\nc\n');
  });

  it('at the end of a file without a final newline: the newline of the inserted text is kept, and only there', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/n.md', file_text: 'a\nb' });
    await vault.run(USER, { command: 'insert', path: '/memories/n.md', insert_line: 1, insert_text: 'mid\n' });
    expect(new TextDecoder().decode(await stored(vault, '/memories/n.md'))).toBe('a\nmid\nb');
    await vault.run(USER, { command: 'insert', path: '/memories/n.md', insert_line: 3, insert_text: 'end\n' });
    expect(new TextDecoder().decode(await stored(vault, '/memories/n.md'))).toBe('a\nmid\nb\nend\n');
    await vault.run(USER, { command: 'create', path: '/memories/m.md', file_text: 'a' });
    await vault.run(USER, { command: 'insert', path: '/memories/m.md', insert_line: 1, insert_text: 'z' });
    expect(new TextDecoder().decode(await stored(vault, '/memories/m.md'))).toBe('a\nz');
  });

  it('a CRLF file stays CRLF; an empty file takes the text as it is', async () => {
    const vault = await vaultOf();
    await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'a\r\nb\r\n' });
    await vault.run(USER, { command: 'insert', path: '/memories/c.md', insert_line: 1, insert_text: 'x\ny' });
    expect(new TextDecoder().decode(await stored(vault, '/memories/c.md'))).toBe('a\r\nx\r\ny\r\nb\r\n');
    await vault.run(USER, { command: 'create', path: '/memories/e.md', file_text: '' });
    await vault.run(USER, { command: 'insert', path: '/memories/e.md', insert_line: 0, insert_text: 'only\n' });
    expect(new TextDecoder().decode(await stored(vault, '/memories/e.md'))).toBe('only\n');
  });
});
