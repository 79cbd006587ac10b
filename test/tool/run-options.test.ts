/**
 * vault.run's writer and signal: the writer names whose change a version is in the file's history;
 * the signal cancels a command that has not changed anything yet (waiting on a read), and never one
 * that has already written. Invalid values are refused, never defaulted.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';

/** Runs `hook` once, when the next request of kind `op` is about to go out. */
class HookStore extends StoreWrapper {
  hook: { op: StoreOp; run: () => void } | undefined;
  protected override async step(op: StoreOp): Promise<void> {
    const hook = this.hook;
    if (!hook || hook.op !== op) return;
    this.hook = undefined;
    hook.run();
  }
}

const PATH = '/memories/notes.md';
const create = (text: string) => ({ command: 'create', path: PATH, file_text: text });
const view = async (vault: Vault) => (await vault.run('alice', { command: 'view', path: PATH })).content;

async function vaultOver(store: HookStore): Promise<Vault> {
  return createVault({ store, history: { retentionDays: 10, maxVersions: 5 } });
}

describe('vault.run writer', () => {
  it("keeps each version's writer in the file's history; the model is the default", async () => {
    const vault = await vaultOver(new HookStore(new MemoryStore()));
    await vault.run('alice', create('one\n'));
    await vault.run('alice', create('two\n'), { writer: 'person' });
    await vault.run('alice', create('three\n'), { writer: 'host' });
    const { versions } = await vault.history('alice', PATH);
    expect(versions.map((v) => v.actor).sort()).toEqual(['host', 'model', 'person']);
    expect(versions.find((v) => v.actor === 'person')?.seq).toBeGreaterThan(
      versions.find((v) => v.actor === 'model')?.seq ?? Infinity,
    );
  });

  it('refuses a writer outside the set, and a signal that is not an AbortSignal, changing nothing', async () => {
    const vault = await vaultOver(new HookStore(new MemoryStore()));
    for (const options of [{ writer: 'operator' }, { writer: 'Model' }, { signal: { aborted: true } }]) {
      const result = await vault.run('alice', create('x\n'), options as never);
      expect(result.isError).toBe(true);
      expect(result.code).toBe('INVALID_INPUT');
    }
    expect(await view(vault)).toBe(messages.viewMissing(PATH));
  });
});

describe('vault.run signal', () => {
  it('an aborted signal stops the command before it loads anything', async () => {
    const vault = await vaultOver(new HookStore(new MemoryStore()));
    const result = await vault.run('alice', create('one\n'), { signal: AbortSignal.abort() });
    expect(result).toEqual({ content: messages.aborted(), isError: true, code: 'ABORTED' });
    expect(await view(vault)).toBe(messages.viewMissing(PATH));
  });

  it('a signal fired while the command reads stops it before its write: nothing changed', async () => {
    const store = new HookStore(new MemoryStore());
    const vault = await vaultOver(store);
    await vault.run('alice', create('one\n'));
    for (const input of [
      { command: 'str_replace', path: PATH, old_str: 'one', new_str: 'two' },
      { command: 'delete', path: PATH },
      { command: 'rename', old_path: PATH, new_path: '/memories/moved.md' },
    ]) {
      const controller = new AbortController();
      store.hook = { op: 'get', run: () => controller.abort() };
      const result = await vault.run('alice', input, { signal: controller.signal });
      expect(result).toEqual({ content: messages.aborted(), isError: true, code: 'ABORTED' });
      expect(await view(vault)).toContain('one');
    }
    expect((await vault.history('alice', PATH)).versions).toHaveLength(1);
  });

  it('a signal fired once the command has written does not undo or stop it', async () => {
    const store = new HookStore(new MemoryStore());
    const vault = await vaultOver(store);
    await vault.run('alice', create('one\n'));
    const controller = new AbortController();
    store.hook = { op: 'put', run: () => controller.abort() };
    const input = { command: 'str_replace', path: PATH, old_str: 'one', new_str: 'two' };
    const result = await vault.run('alice', input, { signal: controller.signal });
    expect(result.isError).toBe(false);
    expect(result.content).toContain('The memory file has been edited');
    expect(await view(vault)).toContain('two');
  });
});
