/**
 * The history allowance's edges for the quota's mutation target: the decision
 * each history refusal records, the count refused while the bytes are exactly at their limit, a
 * rename admitted once pruning made its room, a delete's tombstone counted (and nothing pruned when
 * it lands exactly at the limit), and the empty-file churn refused at the exact round.
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import type { CommandContext, Middleware } from '../../src/pipeline/context.js';
import { quota, type QuotaOptions } from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';

const USER = 'hist';

async function setup(options: QuotaOptions) {
  const store = new MemoryStore();
  let last: CommandContext | undefined;
  const recorder: Middleware = async (ctx, next) => {
    const result = await next();
    last = ctx;
    return result;
  };
  const vault = await createVault({
    store,
    history: true,
    quota: false,
    middlewares: [quota({ maxUserBytes: 100_000, ...options })],
    outerMiddlewares: [recorder],
  });
  const versions = () => store.keys().filter((k) => k.split('/')[2] === 'v').length;
  return {
    vault,
    run: (input: Record<string, unknown>) => vault.run(USER, input),
    decision: () => last!.decisions['quota'],
    versions,
  };
}

describe('history refusals record their rule and figures', () => {
  it('bytes: a write and a rename', async () => {
    const { run, decision } = await setup({ maxHistoryBytes: 1000 });
    expect((await run({ command: 'create', path: '/memories/a.md', file_text: 'a'.repeat(600) })).isError).toBe(false);
    expect((await run({ command: 'create', path: '/memories/b.md', file_text: 'b'.repeat(401) })).code).toBe(
      'QUOTA_EXCEEDED',
    );
    expect(decision()).toEqual({
      checked: true,
      rule: 'history_bytes',
      limit: 1000,
      used: 600,
      delta: 512,
      allowed: false,
    });
    expect((await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/c.md' })).code).toBe(
      'QUOTA_EXCEEDED',
    );
    expect(decision()).toEqual({
      checked: true,
      rule: 'history_bytes',
      limit: 1000,
      used: 600,
      delta: 1024,
      allowed: false,
    });
  });

  it('versions, with the bytes exactly at their limit (the count decides): a write and a rename', async () => {
    const write = await setup({ maxHistoryBytes: 1024, maxHistoryVersions: 1 });
    expect((await write.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })).isError).toBe(false);
    const refused = await write.run({ command: 'create', path: '/memories/b.md', file_text: 'b' });
    expect(String(refused.content)).toContain('already keeps 1 of the 1 versions');
    expect(write.decision()).toEqual({
      checked: true,
      rule: 'history_versions',
      limit: 1,
      used: 1,
      delta: 1,
      allowed: false,
    });

    const rename = await setup({ maxHistoryBytes: 1536, maxHistoryVersions: 2 });
    expect((await rename.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })).isError).toBe(false);
    const moved = await rename.run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' });
    expect(String(moved.content)).toContain(
      "this rename would keep 2 more versions, but the user's history already keeps 1 of the 2 versions",
    );
    expect(rename.decision()).toEqual({
      checked: true,
      rule: 'history_versions',
      limit: 2,
      used: 1,
      delta: 2,
      allowed: false,
    });
  });
});

describe('history room made by pruning, and tombstones counted', () => {
  it('a rename that needs the oldest versions dropped is admitted once they are', async () => {
    const { run, versions } = await setup({ maxHistoryBytes: 1_000_000, maxHistoryVersions: 4 });
    for (const c of ['A', 'B', 'C', 'D'])
      expect((await run({ command: 'create', path: '/memories/a.md', file_text: c })).isError).toBe(false);
    expect(versions()).toBe(4);
    expect((await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })).isError).toBe(
      false,
    );
    expect(versions()).toBe(4); // down to 2, then the copy's version and the tombstone
  });

  it('a tombstone that lands exactly at the count prunes nothing; one past it prunes what it ended', async () => {
    const { run, versions } = await setup({ maxHistoryBytes: 1_000_000, maxHistoryVersions: 3 });
    for (const c of ['A', 'B'])
      expect((await run({ command: 'create', path: '/memories/a.md', file_text: c })).isError).toBe(false);
    expect((await run({ command: 'delete', path: '/memories/a.md' })).isError).toBe(false);
    expect(versions()).toBe(3);
    expect((await run({ command: 'create', path: '/memories/b.md', file_text: 'b' })).isError).toBe(false); // 4 > 3: A goes first
    expect(versions()).toBe(3);
  });

  it('creating and deleting empty files is refused at the exact round the tombstones fill 2,000 bytes', async () => {
    const { run, versions } = await setup({ maxHistoryBytes: 2000 });
    let round = 0;
    for (; round < 50; round++) {
      if ((await run({ command: 'create', path: `/memories/e${round}.md`, file_text: '' })).isError) break;
      expect((await run({ command: 'delete', path: `/memories/e${round}.md` })).isError).toBe(false);
    }
    // Rounds 0 and 1 leave two tombstones (their versions pruned), round 2 a third (1,536): round 3's version does not fit.
    expect(round).toBe(3);
    expect(versions()).toBe(3);
  });
});
