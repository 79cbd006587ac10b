import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { quota } from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';

/**
 * Several processes (vault instances with their own quota middleware) over one store. Each keeps
 * its own cached usage and lists again every K writes; the documented bound is
 *   total <= maxUserBytes + (processes - 1) x K x (largest write)
 * This checks it over random interleavings of creates, overwrites and deletes.
 */
const USER = 'shared-user';
const LIMIT = 1000;
const MAX_WRITE = 100;

async function total(vault: Vault): Promise<number> {
  let bytes = 0;
  for await (const f of (await vault.files(USER)).listFiles('/memories')) bytes += f.size;
  return bytes;
}

type Op = { process: number; kind: 'create' | 'delete'; file: number; size: number };

describe('quota across processes', () => {
  it('the total never exceeds limit + (processes - 1) x refreshEveryWrites x largest write, and the bound is reached in part', async () => {
    let worstOvershoot = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(
          fc.record({
            process: fc.nat(2),
            kind: fc.constantFrom('create', 'create', 'create', 'delete') as fc.Arbitrary<Op['kind']>,
            file: fc.nat(30),
            size: fc.integer({ min: 1, max: MAX_WRITE }),
          }),
          { minLength: 20, maxLength: 80, size: 'max' },
        ),
        async (processes, refreshEveryWrites, ops) => {
          const store = new MemoryStore();
          const vaults = await Promise.all(
            Array.from({ length: processes }, () =>
              createVault({
                store,
                middlewares: [
                  quota({ maxUserBytes: LIMIT, maxUserFiles: 1000, refreshEveryWrites, refreshAfterMs: 3_600_000 }),
                ],
              }),
            ),
          );
          const bound = LIMIT + (processes - 1) * refreshEveryWrites * MAX_WRITE;
          for (const op of ops) {
            const vault = vaults[op.process % processes]!;
            const path = `/memories/f${op.file}.md`;
            const result =
              op.kind === 'create'
                ? await vault.run(USER, { command: 'create', path, file_text: 'x'.repeat(op.size) })
                : await vault.run(USER, { command: 'delete', path });
            if (result.isError) expect(['QUOTA_EXCEEDED', 'NOT_FOUND']).toContain(result.code);
            const now = await total(vaults[0]!);
            worstOvershoot = Math.max(worstOvershoot, now - LIMIT);
            expect(now).toBeLessThanOrEqual(bound);
          }
        },
      ),
      { numRuns: 150 },
    );
    // The bound is not vacuous: stale caches did let some runs past the limit.
    expect(worstOvershoot).toBeGreaterThan(0);
  });

  it('with one process the limit is exact whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            kind: fc.constantFrom('create', 'delete') as fc.Arbitrary<Op['kind']>,
            file: fc.nat(20),
            size: fc.integer({ min: 1, max: MAX_WRITE }),
          }),
          { minLength: 10, maxLength: 60, size: 'max' },
        ),
        async (ops) => {
          const store = new MemoryStore();
          const vault = await createVault({
            store,
            middlewares: [quota({ maxUserBytes: LIMIT, refreshEveryWrites: 5 })],
          });
          // Fire them all at once: creates serialise in the command layer, the check must still hold.
          await Promise.all(
            ops.map((op) =>
              vault.run(
                USER,
                op.kind === 'create'
                  ? { command: 'create', path: `/memories/f${op.file}.md`, file_text: 'y'.repeat(op.size) }
                  : { command: 'delete', path: `/memories/f${op.file}.md` },
              ),
            ),
          );
          expect(await total(vault)).toBeLessThanOrEqual(LIMIT);
        },
      ),
      { numRuns: 100 },
    );
  });
});
