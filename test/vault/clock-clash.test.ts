/**
 * Two processes whose clocks give the same version number (a clock number is the writer's clock ×
 * 1,000, and only one process's own numbers are kept apart): a create whose number another
 * process's version holds already replaced no version it read, so the clash is a race, not a
 * put-back. It numbers itself again above the history and reads as the current file; it never
 * answers INTEGRITY nor puts the deleted state back over what it wrote. The second process is a
 * second module graph (vi.resetModules): its own counter of issued numbers, as in another process.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError, type ObjectStore, type PutOptions } from '../../src/store/port.js';
import { createVault } from '../../src/index.js';
import { StoreWrapper } from '../kit/stores.js';

/**
 * The shared store as the second module graph sees it: its refusals are that graph's
 * PreconditionFailedError (the class its writers recognise), as from a store of its own.
 */
class SecondGraphStore extends StoreWrapper {
  constructor(
    inner: ObjectStore,
    private readonly Refused: new (key: string) => Error,
  ) {
    super(inner);
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    try {
      return await super.put(key, body, options);
    } catch (error) {
      throw error instanceof PreconditionFailedError ? new this.Refused(key) : error;
    }
  }
  override async delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    try {
      await super.delete(key, options);
    } catch (error) {
      throw error instanceof PreconditionFailedError ? new this.Refused(key) : error;
    }
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

async function answer(
  vault: Awaited<ReturnType<typeof createVault>>,
  command: Record<string, unknown>,
): Promise<string> {
  const result = await vault.run('u', command);
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return result.isError ? `${result.code}: ${content}` : content;
}

describe('a create whose clock number another process took already', () => {
  it('numbers itself again above the history and reads as the current file', async () => {
    const shared: ObjectStore = new MemoryStore();
    vi.resetModules();
    const other = (await import('../../src/index.js')).createVault;
    const { PreconditionFailedError: Refused } = await import('../../src/store/port.js');
    expect(Refused).not.toBe(PreconditionFailedError); // a graph of its own
    // One frozen clock, ahead of any number either module issued: both processes take the same number.
    const frozen = Date.now() + 86_400_000;
    vi.spyOn(Date, 'now').mockReturnValue(frozen);
    const first = await createVault({ store: new StoreWrapper(shared) });
    expect(await answer(first, { command: 'create', path: '/memories/f.md', file_text: 'first\n' })).not.toMatch(
      /^[A-Z_]+: /,
    );
    expect(await answer(first, { command: 'delete', path: '/memories/f.md' })).not.toMatch(/^[A-Z_]+: /);
    const [tombstone, created] = (await first.history('u', '/memories/f.md')).versions;
    expect(created!.seq).toBe(frozen * 1000); // the number the other process's clock gives too
    expect(tombstone!.seq).toBe(created!.seq + 1);

    const second = await other({ store: new SecondGraphStore(shared, Refused) });
    expect(await answer(second, { command: 'create', path: '/memories/f.md', file_text: 'second\n' })).not.toMatch(
      /^[A-Z_]+: /,
    );
    vi.restoreAllMocks();
    const fresh = await createVault({ store: new StoreWrapper(shared) });
    for (const vault of [first, second, fresh])
      expect(await answer(vault, { command: 'view', path: '/memories/f.md' })).toMatch(/second/);
    const [newest] = (await fresh.history('u', '/memories/f.md')).versions;
    expect(newest!.end).toBeUndefined();
    expect(newest!.seq).toBeGreaterThan(tombstone!.seq);
    await Promise.all([first.close(), second.close(), fresh.close()]);
  });
});
