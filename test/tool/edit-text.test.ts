/**
 * What str_replace, insert and create write and answer: a CRLF file keeps CRLF whatever lines new_str
 * adds; a text with a NUL (which would make the file binary, so that the model could no longer view
 * or edit it) is refused before anything is written; the str_replace snippet is capped as view is,
 * with a note that says how to view the rest.
 */
import { describe, expect, it } from 'vitest';
import { messages } from '../../src/tool/messages.js';
import { memoryVault, textAt } from '../kit/vault.js';

const U = 'alice';

describe('CRLF files', () => {
  it('keep CRLF when new_str adds lines but old_str is a single line (docs/commands.md, "Line model")', async () => {
    const { vault } = await memoryVault();
    await (await vault.files(U)).write('/memories/w.md', new TextEncoder().encode('a\r\nb\r\nc\r\n'));
    const edited = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/w.md',
      old_str: 'a',
      new_str: 'a\nx',
    });
    expect(edited.isError).toBe(false);
    expect(await textAt(vault, U, '/memories/w.md')).toBe('a\r\nx\r\nb\r\nc\r\n');
    // Lines the model sees adjacent then match as one multi-line old_str.
    const view = await vault.run(U, { command: 'view', path: '/memories/w.md' });
    expect(view.content).toContain('     2\tx\n     3\tb\n     4\tc');
    const next = await vault.run(U, { command: 'str_replace', path: '/memories/w.md', old_str: 'x\nb', new_str: 'y' });
    expect(next.isError).toBe(false);
    expect(await textAt(vault, U, '/memories/w.md')).toBe('a\r\ny\r\nc\r\n');
    await vault.close();
  });

  it('keep CRLF when new_str already holds CRLF or a mix', async () => {
    const { vault } = await memoryVault();
    await (await vault.files(U)).write('/memories/w.md', new TextEncoder().encode('a\r\nb\r\n'));
    await vault.run(U, { command: 'str_replace', path: '/memories/w.md', old_str: 'b', new_str: 'p\r\nq\nr' });
    expect(await textAt(vault, U, '/memories/w.md')).toBe('a\r\np\r\nq\r\nr\r\n');
    await vault.close();
  });

  it('while an LF file keeps LF', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/l.md', file_text: 'a\nb\n' });
    await vault.run(U, { command: 'str_replace', path: '/memories/l.md', old_str: 'a', new_str: 'a\nx' });
    expect(await textAt(vault, U, '/memories/l.md')).toBe('a\nx\nb\n');
    await vault.close();
  });
});

describe('a NUL character in a text to write', () => {
  it('is refused by create, str_replace and insert, with nothing written', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/b.md', file_text: 'one\ntwo\n' });
    const attempts = [
      [{ command: 'create', path: '/memories/a.md', file_text: 'col1\u0000col2\n' }, 'create', 'file_text'],
      [
        { command: 'str_replace', path: '/memories/b.md', old_str: 'two', new_str: 'tw\u0000o' },
        'str_replace',
        'new_str',
      ],
      [{ command: 'insert', path: '/memories/b.md', insert_line: 1, insert_text: '\u0000' }, 'insert', 'insert_text'],
    ] as const;
    for (const [command, name, field] of attempts) {
      const result = await vault.run(U, command);
      expect(result).toMatchObject({ isError: true, code: 'INVALID_INPUT', content: messages.nulInText(name, field) });
    }
    expect(await textAt(vault, U, '/memories/a.md')).toBeNull();
    expect(await textAt(vault, U, '/memories/b.md')).toBe('one\ntwo\n');
    // The file stays text: the model can still edit it.
    const after = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/b.md',
      old_str: 'one',
      new_str: 'ONE',
    });
    expect(after.isError).toBe(false);
    await vault.close();
  });

  it('is named in a message that says nothing was written', () => {
    expect(messages.nulInText('create', 'file_text')).toMatch(
      /^Error: `file_text` of create contains a NUL .*Nothing was written/,
    );
  });
});

describe('the str_replace snippet', () => {
  it("is the spec's answer for a normal edit: the edited lines and two around them", async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/n.md', file_text: '1\n2\n3\n4\n5\n6\n7\n' });
    const result = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/n.md',
      old_str: '4',
      new_str: 'four',
    });
    expect(result.content).toBe(
      messages.edited(['     2\t2', '     3\t3', '     4\tfour', '     5\t5', '     6\t6'].join('\n')),
    );
    await vault.close();
  });

  it('is capped at the view limit for a long new_str, and says how to view the rest', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/notes.md', file_text: 'start\nMARK\nend\n' });
    // 600,000 bytes, well within the 1 MiB per file: uncapped, the answer would be 2.7 MB.
    const newStr = 'x\n'.repeat(300_000);
    const result = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/notes.md',
      old_str: 'MARK',
      new_str: newStr,
    });
    expect(result.isError).toBe(false);
    const content = String(result.content);
    expect(content.length).toBeLessThan(16_000 + 500);
    expect(content.startsWith(messages.edited('     1\tstart\n     2\tx\n'))).toBe(true);
    const note = /view_range \[(\d+), (\d+)\]/.exec(content);
    expect(note).not.toBeNull();
    // The range named is the rest of the edit: from the first line not shown to the last line of new_str.
    const shownLast = Number(/(\d+)\tx\n\[/.exec(content)![1]);
    expect(Number(note![1])).toBe(shownLast + 1);
    expect(Number(note![2])).toBe(300_001);
    const rest = await vault.run(U, {
      command: 'view',
      path: '/memories/notes.md',
      view_range: [Number(note![1]), Number(note![2])],
    });
    expect(rest.isError).toBe(false);
    await vault.close();
  });

  it('cuts a single line longer than the limit, as view does', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/one.md', file_text: 'MARK' });
    const result = await vault.run(U, {
      command: 'str_replace',
      path: '/memories/one.md',
      old_str: 'MARK',
      new_str: 'y'.repeat(100_000),
    });
    const content = String(result.content);
    expect(content.length).toBeLessThan(16_000 + 500);
    expect(content.endsWith(messages.lineTruncated(1, 16_000))).toBe(true);
    await vault.close();
  });
});
