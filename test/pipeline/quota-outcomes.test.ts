/**
 * The quota's usage after a command that did not simply succeed: a write the quota refuses changes
 * nothing (not even the history it would have pruned), a write whose answer was lost is counted
 * once it is found landed (or the usage is listed again), and a delete run before this process knew
 * the user's usage is never half-counted by a listing running beside it.
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { quota, quotaCommandLimits, type QuotaOptions } from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError, type ObjectStore } from '../../src/store/port.js';
import { plainUid } from '../../src/vault/plain-codec.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';

const USER = 'alice';
const UID = plainUid(USER);
const RARE_REFRESH = { refreshEveryWrites: 1000, refreshAfterMs: 3_600_000 };

async function meteredVault(store: ObjectStore, options: QuotaOptions) {
  const mw = quota(options);
  const vault = await createVault({ store, quota: false, middlewares: [mw], limits: quotaCommandLimits(options) });
  return { mw, vault };
}

async function storedTotal(vault: Vault): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for await (const f of (await vault.files(USER)).listFiles('/memories')) {
    bytes += f.size;
    files += 1;
  }
  return { bytes, files };
}

/** A store whose next PUT (conditional on `ifMatch`, or any) lands and then fails with `error`. */
function losingStore(error: () => Error, which: 'ifMatch' | 'any') {
  const inner = new MemoryStore();
  const control = { armed: false };
  const store = Object.create(inner) as MemoryStore;
  store.put = async (key, body, options) => {
    const result = await inner.put(key, body, options);
    if (control.armed && (which === 'any' || options?.ifMatch !== undefined)) {
      control.armed = false;
      throw error();
    }
    return result;
  };
  return { store, control };
}

describe('a refused write', () => {
  it('drops no kept versions when the quota refuses it (bytes per user): a failed command changes nothing', async () => {
    const options = { maxUserBytes: 100, maxHistoryVersions: 6, ...RARE_REFRESH };
    const { vault } = await meteredVault(new MemoryStore(), options);
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'v0' });
    for (let i = 1; i <= 5; i++) {
      const edit = { command: 'str_replace', path: '/memories/a.md', old_str: `v${i - 1}`, new_str: `v${i}` } as const;
      expect((await vault.run(USER, edit)).isError).toBe(false);
    }
    const before = (await vault.history(USER, '/memories/a.md')).versions.length;
    // The history is at its allowance: this write would prune it first, were it admitted.
    const refused = await vault.run(USER, { command: 'create', path: '/memories/b.md', file_text: 'x'.repeat(99) });
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    expect((await vault.history(USER, '/memories/a.md')).versions.length).toBe(before);
    // One that fits is admitted, and prunes then.
    const fits = await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'x'.repeat(10) });
    expect(fits.isError).toBe(false);
    expect((await vault.history(USER, '/memories/a.md')).versions.length).toBeLessThan(before);
    await vault.close();
  });
});

describe('a write whose answer was lost', () => {
  it('is counted when the edit finds it landed (the SDK retry met it: 412)', async () => {
    // As in test/tool/concurrency.test.ts ("lost answers"): the PUT lands, the retry meets it.
    const { store, control } = losingStore(() => new PreconditionFailedError('k'), 'ifMatch');
    const { mw, vault } = await meteredVault(store, { maxUserBytes: 1000, ...RARE_REFRESH });
    await vault.run(USER, { command: 'create', path: '/memories/f.md', file_text: 'a\n' });
    control.armed = true;
    const edit = { command: 'insert', path: '/memories/f.md', insert_line: 1, insert_text: 'x'.repeat(500) } as const;
    expect((await vault.run(USER, edit)).isError).toBe(false);
    expect(control.armed).toBe(false);
    expect(await storedTotal(vault)).toEqual({ bytes: 503, files: 1 });
    expect(mw.usage(UID)).toMatchObject({ bytes: 503, files: 1, pendingBytes: 0, pendingFiles: 0 });
    // So the quota holds: 600 more bytes would make 1,103 of 1,000.
    const over = await vault.run(USER, { command: 'create', path: '/memories/g.md', file_text: 'y'.repeat(600) });
    expect(over.code).toBe('QUOTA_EXCEEDED');
    await vault.close();
  });

  it('after a failure of the store that leaves the outcome unknown, is seen by listing the usage again', async () => {
    const { store, control } = losingStore(() => new Error('connection reset'), 'any');
    const { mw, vault } = await meteredVault(store, { maxUserBytes: 1000, ...RARE_REFRESH });
    await vault.run(USER, { command: 'create', path: '/memories/f.md', file_text: 'a' });
    control.armed = true;
    const failed = await vault.run(USER, { command: 'create', path: '/memories/g.md', file_text: 'x'.repeat(600) });
    expect(failed.isError).toBe(true);
    expect(await storedTotal(vault)).toEqual({ bytes: 601, files: 2 });
    // 601 of 1,000 bytes are stored, although the command failed: 500 more must not fit.
    const over = await vault.run(USER, { command: 'create', path: '/memories/h.md', file_text: 'z'.repeat(500) });
    expect(over.code).toBe('QUOTA_EXCEEDED');
    expect(mw.usage(UID)).toMatchObject({ bytes: 601, files: 2 });
    await vault.close();
  });
});

/** Holds the first conditional PUT after `arm()` (a delete's fence) until `release()`. */
class HoldingStore extends StoreWrapper {
  private armed = false;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  held = false;
  listsWhileHeld = 0;
  arm(): void {
    this.armed = true;
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
  }
  protected override async step(op: StoreOp, _key: string, conditional: boolean): Promise<void> {
    if (this.held && op === 'list') this.listsWhileHeld += 1;
    if (this.armed && op === 'put' && conditional) {
      this.armed = false;
      this.held = true;
      await this.gate;
    }
  }
}

describe('a delete before the usage is known', () => {
  it("holds the user's gate: a write's listing waits for it, so the deleted file is not counted", async () => {
    const store = new HoldingStore(new MemoryStore());
    const { mw, vault } = await meteredVault(store, { maxUserBytes: 1000, ...RARE_REFRESH });
    // Written earlier (another process, or the host): this process has not listed alice's usage yet.
    await (await vault.files(USER)).write('/memories/big.md', new TextEncoder().encode('x'.repeat(800)));

    store.arm();
    const deleting = vault.run(USER, { command: 'delete', path: '/memories/big.md' });
    while (!store.held) await new Promise((r) => setTimeout(r, 5));
    const creating = vault.run(USER, { command: 'create', path: '/memories/small.md', file_text: 'y'.repeat(100) });
    await new Promise((r) => setTimeout(r, 100));
    // The create's listing of the usage waits for the delete: it cannot count big.md.
    expect(store.listsWhileHeld).toBe(0);
    store.release();
    expect((await deleting).isError).toBe(false);
    expect((await creating).isError).toBe(false);

    expect(await storedTotal(vault)).toEqual({ bytes: 100, files: 1 });
    expect(mw.usage(UID)).toMatchObject({ bytes: 100, files: 1 });
    const next = await vault.run(USER, { command: 'create', path: '/memories/next.md', file_text: 'z'.repeat(500) });
    expect(next).toMatchObject({ isError: false });
    await vault.close();
  });
});
