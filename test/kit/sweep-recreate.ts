/**
 * A sweep meeting re-creates, on any store: files idle past their TTL are swept
 * while the model makes the same names again (DAY_MS-scale ages come from the store's clock where
 * it can be set, else from a wait longer than VERSION_LAG_MS). The sweep lists one key a request,
 * and each name is made again once the sweep has deleted the expired files, so that the new
 * versions appear in the rest of its listing. A sweep removes only what expired: every re-created
 * file keeps its version, and a restore to a time after the re-create brings back its text.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { sweep, type SweepOptions } from '../../src/expiry/sweep.js';
import { createVault, type Vault } from '../../src/memvault.js';
import type { ListOptions, ListPage, ObjectStore } from '../../src/store/port.js';
import { StoreWrapper } from './stores.js';

const USER = 'sweep-recreate';

/**
 * Runs `hook` once, before the listing goes on past the first kept version (the sweep has then
 * deleted the user's expired files: it settles them when it meets their versions), whichever way
 * the sweep deletes (through the store, or the S3 deleter's own client).
 */
class PastFirstVersion extends StoreWrapper {
  private sawVersion = false;
  fired = false;
  constructor(
    inner: ObjectStore,
    private readonly hook: () => Promise<void>,
  ) {
    super(inner, { deleteExactly: true });
  }
  override async close(): Promise<void> {}
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    if (this.sawVersion && !this.fired) {
      this.fired = true;
      await this.hook();
    }
    const page = await super.list(prefix, options);
    if (page.objects.some((o) => o.key.split('/')[2] === 'v')) this.sawVersion = true;
    return page;
  }
}

/** The store as the vault sees it: closing the vault leaves it open for the sweep and the test. */
class Unclosed extends StoreWrapper {
  override async close(): Promise<void> {}
}

async function ok(vault: Vault, input: Record<string, unknown>): Promise<void> {
  const r = await vault.run(USER, input);
  expect(r.isError, JSON.stringify(r.content)).toBe(false);
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How time passes for the store: between the first writes and the sweep, and the sweep's clock. */
export interface StoreTime {
  /** Let the files age past their 30-day TTL as the store sees it (advance its clock, or wait). */
  age(): Promise<void>;
  /** The sweep's clock: 31 days after the first writes. */
  sweepNow(): Date;
}

/** `files` names written, aged past their 30-day TTL, and swept while they are made again. */
export async function sweepMeetsRecreates(
  store: ObjectStore,
  files: number,
  time: StoreTime,
  sweepOptions: Partial<SweepOptions> = {},
): Promise<void> {
  const vault = await createVault({
    store: new Unclosed(store, { deleteExactly: true }),
    encryption: { masterKey: randomBytes(32).toString('base64') },
    pii: false,
  });
  try {
    const names = Array.from({ length: files }, (_, i) => `/memories/r/${i}.md`);
    for (const path of names) await ok(vault, { command: 'create', path, file_text: 'old\n' });
    await time.age();

    const swept = new PastFirstVersion(store, async () => {
      for (const path of names) await ok(vault, { command: 'create', path, file_text: 'recreated\n' });
    });
    const summary = await sweep({
      store: swept,
      ttl: { ttlDays: 30 },
      graceMs: 0,
      now: time.sweepNow,
      pageSize: 1,
      ...sweepOptions,
    });
    expect(swept.fired).toBe(true);
    expect(summary.expired).toBeGreaterThan(0);

    await pause(1100); // the store's clock may count whole seconds
    const between = new Date();
    await pause(1100);
    for (const path of names) {
      const { versions } = await vault.history(USER, path);
      expect(versions.length, path).toBeGreaterThan(0);
      expect(versions[0]!.size, path).toBe('recreated\n'.length);
      await ok(vault, { command: 'str_replace', path, old_str: 'recreated', new_str: 'edited' });
    }
    await vault.restore(USER, { asOf: between });
    for (const path of names)
      expect(Buffer.from((await (await vault.files(USER)).read(path))!.data).toString('utf8'), path).toBe(
        'recreated\n',
      );
  } finally {
    await vault.close();
  }
}
