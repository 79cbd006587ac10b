/**
 * vault.run's options: a create or delete conditioned on the SHA-256 of the file's plaintext (or on
 * its absence) lands exactly or changes nothing, also when an edit lands between its read and its
 * write; the actor reaches the command's audit record; invalid options are refused.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { sqliteStores, StoreWrapper, type StoreOp } from '../kit/stores.js';
import { tempDir } from '../kit/temp.js';

/** Runs `rival` once, just before the next conditional request (the command's write or fence) goes out. */
class RivalStore extends StoreWrapper {
  rival: (() => Promise<unknown>) | undefined;
  protected override async step(op: StoreOp, _key: string, conditional: boolean): Promise<void> {
    const rival = this.rival;
    if (!rival || !conditional || (op !== 'put' && op !== 'deleteExactly')) return;
    this.rival = undefined;
    await rival();
  }
}

const { dir, cleanup } = tempDir('memvault-conditional');
const sqlite = sqliteStores('conditional');
afterAll(async () => {
  cleanup();
  await sqlite.cleanup();
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const PATH = '/memories/notes.md';
const view = async (vault: Vault) => (await vault.run('alice', { command: 'view', path: PATH })).content;

describe('vault.run with a precondition', () => {
  it('creates and deletes exactly on the version named, and changes nothing on a mismatch', async () => {
    const auditFile = join(dir, 'a.jsonl');
    const vault = await createVault({ store: new MemoryStore(), audit: { file: auditFile } });
    const create = (text: string) => ({ command: 'create', path: PATH, file_text: text });

    expect(
      await vault.run('alice', create('one\n'), { precondition: { ifNoneMatch: '*' }, actor: 'billing-agent' }),
    ).toEqual({ content: messages.created(PATH), isError: false });
    const exists = await vault.run('alice', create('two\n'), { precondition: { ifNoneMatch: '*' } });
    expect(exists).toEqual({ content: messages.versionExists(PATH), isError: true, code: 'VERSION_MISMATCH' });
    const stale = await vault.run('alice', create('two\n'), { precondition: { ifMatch: sha('other\n') } });
    expect(stale).toEqual({ content: messages.versionChanged(PATH), isError: true, code: 'VERSION_MISMATCH' });
    expect(await view(vault)).toContain('one');
    expect(await view(vault)).not.toContain('two');

    expect((await vault.run('alice', create('two\n'), { precondition: { ifMatch: sha('one\n') } })).isError).toBe(
      false,
    );
    expect(await view(vault)).toContain('two');
    const staleDelete = await vault.run(
      'alice',
      { command: 'delete', path: PATH },
      { precondition: { ifMatch: sha('one\n') } },
    );
    expect(staleDelete.code).toBe('VERSION_MISMATCH');
    expect(await view(vault)).toContain('two');
    const deleted = await vault.run(
      'alice',
      { command: 'delete', path: PATH },
      { precondition: { ifMatch: sha('two\n') }, actor: 'user' },
    );
    expect(deleted).toEqual({ content: messages.deleted(PATH), isError: false });
    // Gone: an If-Match on a missing file is a mismatch too (not a create).
    expect((await vault.run('alice', create('x'), { precondition: { ifMatch: sha('two\n') } })).code).toBe(
      'VERSION_MISMATCH',
    );
    expect((await vault.run('alice', { command: 'view', path: PATH })).isError).toBe(true);

    await vault.close();
    const records = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const commands = records.filter((r) => r['type'] === 'command');
    expect(commands.map((r) => [r['command'], r['actor'], r['code']])).toEqual([
      ['create', 'billing-agent', undefined],
      ['create', undefined, 'VERSION_MISMATCH'],
      ['create', undefined, 'VERSION_MISMATCH'],
      ['view', undefined, undefined],
      ['view', undefined, undefined],
      ['create', undefined, undefined],
      ['view', undefined, undefined],
      ['delete', undefined, 'VERSION_MISMATCH'],
      ['view', undefined, undefined],
      ['delete', 'user', undefined],
      ['create', undefined, 'VERSION_MISMATCH'],
      ['view', undefined, 'NOT_FOUND'],
    ]);
    expect(JSON.stringify(records)).not.toContain('alice');
  });

  it.each([
    { name: 'memory store, fenced by a marker', deleteExactly: false, sqlite: false },
    { name: 'memory store, fenced by a conditional delete', deleteExactly: true, sqlite: false },
    { name: 'SQLite store with file history', deleteExactly: true, sqlite: true },
  ])('loses to an edit that lands between its read and its write, for create and delete: $name', async (setup) => {
    const inner = setup.sqlite ? await sqlite.make() : new MemoryStore();
    const store = new RivalStore(inner, { deleteExactly: setup.deleteExactly });
    const options = setup.sqlite
      ? {
          history: { retentionDays: 10, maxVersions: 5 },
          encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') },
        }
      : {};
    const vault = await createVault({ store, ...options });
    const agent = await createVault({ store: inner, ...options });
    await vault.run('alice', { command: 'create', path: PATH, file_text: 'base\n' });
    const agentEdit = (n: number) => () =>
      agent.run('alice', { command: 'str_replace', path: PATH, old_str: 'base', new_str: `agent ${n}` });

    store.rival = agentEdit(1);
    const put = await vault.run(
      'alice',
      { command: 'create', path: PATH, file_text: 'person\n' },
      { precondition: { ifMatch: sha('base\n') } },
    );
    expect(store.rival).toBeUndefined();
    expect(put.code).toBe('VERSION_MISMATCH');
    expect(await view(vault)).toContain('agent 1');

    await vault.run('alice', { command: 'create', path: PATH, file_text: 'base\n' });
    store.rival = agentEdit(2);
    const removed = await vault.run(
      'alice',
      { command: 'delete', path: PATH },
      { precondition: { ifMatch: sha('base\n') } },
    );
    expect(store.rival).toBeUndefined();
    expect(removed.code).toBe('VERSION_MISMATCH');
    expect(await view(vault)).toContain('agent 2');
    await Promise.all([vault.close(), agent.close()]);
    if (setup.sqlite) await inner.close();
  });

  it('refuses invalid options and conditions on other commands, changing nothing', async () => {
    const vault = await createVault({ store: new MemoryStore() });
    const create = { command: 'create', path: PATH, file_text: 'x' };
    for (const options of [
      { precondition: { ifMatch: 'ABC' } },
      { precondition: { ifMatch: sha('x').toUpperCase() } },
      { precondition: { ifNoneMatch: 'x' } },
      { precondition: { ifMatch: sha('x'), ifNoneMatch: '*' } },
      { precondition: {} },
      { precondition: { etag: sha('x') } },
      { actor: 'a@b.example' },
      { actor: '' },
      { user: 'bob' },
      'x',
    ]) {
      const result = await vault.run('alice', create, options as never);
      expect(result.code, JSON.stringify(options)).toBe('INVALID_INPUT');
    }
    const onEdit = await vault.run(
      'alice',
      { command: 'str_replace', path: PATH, old_str: 'x', new_str: 'y' },
      { precondition: { ifMatch: sha('x') } },
    );
    expect(onEdit).toEqual({
      content: messages.preconditionUnsupported('str_replace'),
      isError: true,
      code: 'INVALID_INPUT',
    });
    const deleteIfNone = await vault.run(
      'alice',
      { command: 'delete', path: PATH },
      { precondition: { ifNoneMatch: '*' } },
    );
    expect(deleteIfNone.code).toBe('INVALID_INPUT');
    expect((await vault.run('alice', { command: 'view', path: PATH })).code).toBe('NOT_FOUND');
    await vault.close();
  });
});
