/**
 * str_replace, insert and create on the paths the other edit tests do not take (the
 * edit-text survivors): old_str quoted as the model wrote a value that was redacted on the way in
 * (the stored-form lookup) and the write filter on edits, a verbatim CRLF old_str, the snippet at
 * the end of a file without a final newline and around a match that starts with a line break, an
 * edit that loses every write race, a create whose write fails for another reason than the file
 * existing, and an insert at the end whose text has a line break only inside.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { PutOptions } from '../../src/store/port.js';
import { messages } from '../../src/tool/messages.js';
import { numbered } from '../../src/tool/text.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';
import { decode, encode } from '../kit/text.js';

const USER = 'alice';

async function content(vault: Vault, path: string): Promise<string | undefined> {
  const file = await (await vault.files(USER)).read(path);
  return file ? decode(file.data) : undefined;
}

const edited = (...lines: Array<[string, number]>) =>
  messages.edited(lines.map(([text, n]) => numbered(text, n)).join('\n'));

describe('with the PII filter: old_str as the model wrote it, and what an edit stores', () => {
  const vaultWithPii = () => createVault({ store: new MemoryStore() });

  it('a value redacted on the way in may be quoted as written: the edit applies to its stored form', async () => {
    const vault = await vaultWithPii();
    await vault.run(USER, {
      command: 'create',
      path: '/memories/a.md',
      file_text: 'intro\nmail jane.doe@example.com\nend\n',
    });
    expect(await content(vault, '/memories/a.md')).toBe('intro\nmail [REDACTED:EMAIL]\nend\n');
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'mail jane.doe@example.com',
      new_str: 'mail: see CRM',
    });
    expect(edit).toEqual({ isError: false, content: edited(['intro', 1], ['mail: see CRM', 2], ['end', 3]) });
    expect(await content(vault, '/memories/a.md')).toBe('intro\nmail: see CRM\nend\n');
  });

  it('a value that occurs verbatim (stored before the filter) is replaced as written, not by its stored form', async () => {
    const vault = await vaultWithPii();
    await (await vault.files(USER)).write('/memories/raw.md', encode('mail jane.doe@example.com\n'));
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/raw.md',
      old_str: 'jane.doe@example.com',
      new_str: 'the office',
    });
    expect(edit.isError).toBe(false);
    expect(await content(vault, '/memories/raw.md')).toBe('mail the office\n');
  });

  it('old_str whose stored form is itself, and that does not occur, is no match quoted as written', async () => {
    const vault = await vaultWithPii();
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'hello\n' });
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'goodbye',
      new_str: 'x',
    });
    expect(edit).toEqual({ isError: true, code: 'NO_MATCH', content: messages.noMatch('goodbye', '/memories/a.md') });
    // A value not in the file: its stored form is not there either.
    const value = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'mail jane.doe@example.com',
      new_str: 'x',
    });
    expect(value).toEqual({
      isError: true,
      code: 'NO_MATCH',
      content: messages.noMatch('mail jane.doe@example.com', '/memories/a.md'),
    });
    expect(await content(vault, '/memories/a.md')).toBe('hello\n');
  });

  it('a value written by str_replace or insert is redacted like one written by create', async () => {
    const vault = await vaultWithPii();
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'contact: TBD\n' });
    expect(
      (
        await vault.run(USER, {
          command: 'str_replace',
          path: '/memories/a.md',
          old_str: 'TBD',
          new_str: 'jane.doe@example.com',
        })
      ).isError,
    ).toBe(false);
    expect(await content(vault, '/memories/a.md')).toBe('contact: [REDACTED:EMAIL]\n');
    expect(
      (
        await vault.run(USER, {
          command: 'insert',
          path: '/memories/a.md',
          insert_line: 1,
          insert_text: 'backup: john.roe@example.org\n',
        })
      ).isError,
    ).toBe(false);
    expect(await content(vault, '/memories/a.md')).toBe('contact: [REDACTED:EMAIL]\nbackup: [REDACTED:EMAIL]\n');
  });
});

describe('CRLF files', () => {
  it("an old_str that already has the CRLF endings is taken verbatim; new_str takes the file's CRLF", async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false });
    await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'one\r\ntwo\r\nthree\r\n' });
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/c.md',
      old_str: 'one\r\ntwo',
      new_str: 'uno\ndos',
    });
    expect(edit.isError).toBe(false);
    expect(await content(vault, '/memories/c.md')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('a one-line old_str in a CRLF file: the line breaks of new_str become CRLF too', async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false });
    await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'one\r\ntwo\r\n' });
    expect(
      (
        await vault.run(USER, {
          command: 'str_replace',
          path: '/memories/c.md',
          old_str: 'two',
          new_str: 'deux\ntrois',
        })
      ).isError,
    ).toBe(false);
    expect(await content(vault, '/memories/c.md')).toBe('one\r\ndeux\r\ntrois\r\n');
  });
});

describe('the snippet', () => {
  it('at the end of a file without a final newline: the last line whole, and nothing after it', async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false });
    await vault.run(USER, { command: 'create', path: '/memories/s.md', file_text: 'a\nb\nc' });
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/s.md',
      old_str: 'c',
      new_str: 'xyz',
    });
    expect(edit).toEqual({ isError: false, content: edited(['a', 1], ['b', 2], ['xyz', 3]) });
    const one = await createVault({ store: new MemoryStore(), pii: false });
    await one.run(USER, { command: 'create', path: '/memories/o.md', file_text: 'only' });
    expect(
      (await one.run(USER, { command: 'str_replace', path: '/memories/o.md', old_str: 'nly', new_str: 'NLY' })).content,
    ).toBe(edited(['oNLY', 1]));
  });

  it('a match that starts with a line break starts on the line that break ends', async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false });
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
    await vault.run(USER, { command: 'create', path: '/memories/l.md', file_text: `${lines.join('\n')}\n` });
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/l.md',
      old_str: '\nline 6',
      new_str: '\nLINE 6',
    });
    // The change runs from the end of line 5 to line 6: lines 3 to 8.
    expect(edit.content).toBe(
      edited(['line 3', 3], ['line 4', 4], ['line 5', 5], ['LINE 6', 6], ['line 7', 7], ['line 8', 8]),
    );
  });
});

/** Another writer rewrites the file just before each of our conditional writes, so every one of them loses. */
class AlwaysBeatenStore extends StoreWrapper {
  beaten = 0;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    if (options?.ifMatch !== undefined) {
      const current = await this.inner.get(key);
      if (current) {
        // The rival rewrites the same content with its version record (as another instance's write
        // would carry one): a rewrite without it is a put-back the history refuses (docs/versions.md).
        await this.inner.put(key, current.body, { metadata: current.metadata });
        this.beaten += 1;
      }
    }
    return super.put(key, body, options);
  }
}

/** Conditional creates fail with a store error (not a failed condition). */
class BrokenCreateStore extends StoreWrapper {
  protected override step(op: StoreOp, _key: string, conditional: boolean): void {
    if (op === 'put' && conditional) throw new Error('injected store failure');
  }
}

describe('write failures', () => {
  it('an edit that loses every write race gives up with the conflict error and leaves the file as the other writer left it', async () => {
    const store = new AlwaysBeatenStore();
    const vault = await createVault({ store, pii: false, limits: { maxWriteAttempts: 3 } });
    await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'one\n' });
    const before = store.beaten;
    const edit = await vault.run(USER, {
      command: 'str_replace',
      path: '/memories/c.md',
      old_str: 'one',
      new_str: 'two',
    });
    expect(edit).toEqual({ isError: true, code: 'CONFLICT', content: messages.conflict('/memories/c.md') });
    expect(store.beaten - before).toBe(3);
    expect(await content(vault, '/memories/c.md')).toBe('one\n');
    const insert = await vault.run(USER, {
      command: 'insert',
      path: '/memories/c.md',
      insert_line: 0,
      insert_text: 'zero',
    });
    expect(insert).toEqual({ isError: true, code: 'CONFLICT', content: messages.conflict('/memories/c.md') });
  });

  it('createMode \'fail\': a store failure is that failure, not "already exists"', async () => {
    const vault = await createVault({ store: new BrokenCreateStore(), pii: false, createMode: 'fail' });
    const result = await vault.run(USER, { command: 'create', path: '/memories/new.md', file_text: 'x' });
    expect(result.isError).toBe(true);
    expect(result).not.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(result.content).not.toBe(messages.alreadyExists('/memories/new.md'));
  });
});

/** Records the kind of every request. */
class CountingStore extends StoreWrapper {
  readonly ops: StoreOp[] = [];
  protected override step(op: StoreOp): void {
    this.ops.push(op);
  }
}

describe('with history on', () => {
  it('an edit reads its file without a LIST of the versions (its version write checks freshness), a view with one', async () => {
    const store = new CountingStore();
    const vault = await createVault({ store, pii: false, encryption: false, history: true });
    await vault.run(USER, { command: 'create', path: '/memories/h.md', file_text: 'one\n' });
    store.ops.length = 0;
    expect(
      (await vault.run(USER, { command: 'str_replace', path: '/memories/h.md', old_str: 'one', new_str: 'two' }))
        .isError,
    ).toBe(false);
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/h.md', insert_line: 1, insert_text: 'three' }))
        .isError,
    ).toBe(false);
    expect(store.ops.filter((op) => op === 'list')).toEqual([]);
    // Each edit: its file's GET, and the user's settings (pause memory) just before it writes.
    expect(store.ops.filter((op) => op === 'get')).toHaveLength(4);
    expect(await content(vault, '/memories/h.md')).toBe('two\nthree\n');
    // The check the edits leave out is there for reads.
    store.ops.length = 0;
    await vault.run(USER, { command: 'view', path: '/memories/h.md' });
    expect(store.ops).toContain('list');
  });
});

describe('insert at the end', () => {
  it('of a file without a final newline, text with a line break only inside adds none at the end', async () => {
    const vault = await createVault({ store: new MemoryStore(), pii: false });
    await vault.run(USER, { command: 'create', path: '/memories/i.md', file_text: 'a' });
    expect(
      (await vault.run(USER, { command: 'insert', path: '/memories/i.md', insert_line: 1, insert_text: 'b\nc' }))
        .isError,
    ).toBe(false);
    expect(await content(vault, '/memories/i.md')).toBe('a\nb\nc');
  });
});
