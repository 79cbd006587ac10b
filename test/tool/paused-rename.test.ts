/**
 * A directory rename whose process is paused (SIGSTOP, a long GC, a partition: not killed) past
 * `limits.resumeAfterMs` is taken over by another instance, which finishes it and answers success.
 * When the paused run wakes up, whatever step it was in (a copy, between a copy and its source's
 * fence, a fence, a tombstone, the journal's final delete), it must fail safely: every file ends at
 * exactly one place, whole (issue #37, class 2: files once ended at neither place, their newest kept
 * version a `deleted` tombstone). The pause is in-process: every request of the paused instance,
 * from the chosen one on, is held until it wakes (its heartbeat's too), then sent as it was.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { FENCE_METADATA } from '../../src/store/fence.js';
import type { ObjectStore, PutOptions } from '../../src/store/port.js';
import { isKeptVersionKey, StoreWrapper, type StoreOp } from '../kit/stores.js';

const U = 'paused-user';
const FILES = 60;
const RESUME_AFTER_MS = 300;
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The kinds of request a pause can be set on (keys are plain: these tests store names unencrypted). */
export type PausePoint = 'copy' | 'fence' | 'tombstone' | 'journal-drop';

function kindOf(op: StoreOp, key: string, options?: PutOptions): PausePoint | undefined {
  if (isKeptVersionKey(key)) return op === 'put' && key.includes('/src/') ? 'tombstone' : undefined;
  if (key.includes('renames')) return op === 'delete' || (op === 'put' && options?.metadata?.[FENCE_METADATA] === 'reaping') ? 'journal-drop' : undefined;
  if (key.includes('/src/') && (op === 'deleteExactly' || (op === 'put' && options?.metadata?.[FENCE_METADATA] === 'moved'))) return 'fence';
  if (key.includes('/dst/') && op === 'put' && options?.metadata?.[FENCE_METADATA] === undefined) return 'copy';
  return undefined;
}

/**
 * One instance's store as a paused process sees it: once the `nth` request of a kind comes, it and
 * every request after it wait until `wake()`, then go out as they were.
 */
export class PausingStore extends StoreWrapper {
  private plan: { kind: PausePoint; nth: number; seen: number } | undefined;
  private asleep: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  paused = false;

  pauseAt(kind: PausePoint, nth: number): void {
    this.plan = { kind, nth, seen: 0 };
  }
  wake(): void {
    this.plan = undefined;
    this.wakeUp?.();
  }
  private async gate(op: StoreOp, key: string, options?: PutOptions): Promise<void> {
    const plan = this.plan;
    if (plan && !this.paused && kindOf(op, key, options) === plan.kind && ++plan.seen === plan.nth) {
      this.paused = true;
      this.asleep = new Promise((resolve) => (this.wakeUp = resolve));
    }
    if (this.asleep) await this.asleep;
  }
  protected override async step(op: StoreOp, key: string): Promise<void> {
    if (op !== 'put') await this.gate(op, key);
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    await this.gate('put', key, options);
    return super.put(key, body, options);
  }
  override async close(): Promise<void> {}
}

export const pausedStores: Array<{ name: string; make: () => Promise<ObjectStore>; deleteExactly: boolean }> = [
  { name: 'memory store fenced by markers (as S3)', make: async () => new MemoryStore(), deleteExactly: false },
  { name: 'memory store fenced by the conditional delete', make: async () => new MemoryStore(), deleteExactly: true },
  {
    name: 'file store',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-paused-'));
      dirs.push(dir);
      return new FileStore(dir);
    },
    deleteExactly: true,
  },
];

const SOURCE = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${String(i).padStart(2, '0')}.md`, `file ${i}\n${'x'.repeat(i * 13)}\n`]));

async function seed(store: ObjectStore): Promise<void> {
  const vault = await createVault({ store: new PausingStore(store), encryption: false }); // (a wrapper: the store stays open)
  const files = await vault.files(U);
  await Promise.all(Object.entries(SOURCE).map(([name, text]) => files.write(`/memories/src/${name}`, new TextEncoder().encode(text))));
  await files.write('/memories/keep.md', new TextEncoder().encode('not involved\n'));
  await vault.close();
}

async function textAt(vault: Vault, path: string): Promise<string | null> {
  const file = await (await vault.files(U)).read(path);
  return file ? Buffer.from(file.data).toString('utf8') : null;
}

/** Every file of the rename at exactly one place, whole: its new one. */
async function expectAllMovedOnce(vault: Vault): Promise<void> {
  const lost: string[] = [];
  const twice: string[] = [];
  for (const [name, text] of Object.entries(SOURCE)) {
    const [old, moved] = await Promise.all([textAt(vault, `/memories/src/${name}`), textAt(vault, `/memories/dst/${name}`)]);
    if (moved !== text) lost.push(name);
    if (old !== null) twice.push(name);
  }
  expect(lost, 'files not at their new place').toEqual([]);
  expect(twice, 'files still at their old place').toEqual([]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 20_000) throw new Error('the paused run never reached its pause point');
    await sleep(5);
  }
}

const POINTS: Array<[PausePoint, number]> = [
  ['copy', 1],
  ['copy', 30],
  ['fence', 1],
  ['fence', 30],
  ['tombstone', 1],
  ['tombstone', 30],
  ['journal-drop', 1],
];

describe.each(pausedStores)('a paused directory rename taken over by another instance ($name)', ({ make, deleteExactly }) => {
  it.each(POINTS)('paused at its %s #%i: the take-over answers success, the woken run fails safely, every file at exactly one place', async (kind, nth) => {
    const inner = await make();
    await seed(inner);
    const pausing = new PausingStore(inner, { deleteExactly });
    const paused = await createVault({ store: pausing, encryption: false, limits: { resumeAfterMs: RESUME_AFTER_MS } });
    const other = await createVault({ store: inner, encryption: false, limits: { resumeAfterMs: RESUME_AFTER_MS } });
    await paused.run(U, { command: 'view', path: '/memories/keep.md' }); // its key loaded before the pause
    pausing.pauseAt(kind, nth);
    const first = paused.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    await until(() => pausing.paused);
    // The other instance meets the journal, sees it silent for resumeAfterMs by its own clock, and takes the rename over.
    expect(await other.run(U, { command: 'view', path: '/memories/keep.md' })).toMatchObject({ isError: false });
    await sleep(RESUME_AFTER_MS + 100);
    const claimer = await other.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
    expect(claimer, JSON.stringify(claimer.content)).toMatchObject({ isError: false, content: 'Successfully renamed /memories/src to /memories/dst' });
    await expectAllMovedOnce(other);
    pausing.wake();
    const woken = await first;
    // It finds its rename taken over (busy), its copies' places taken (exists), or nothing left to do.
    if (woken.isError) expect(['CONFLICT', 'ALREADY_EXISTS'], String(woken.content)).toContain(woken.code);
    await expectAllMovedOnce(other);
    expect(await other.run(U, { command: 'view', path: '/memories/keep.md' })).toMatchObject({ isError: false });
    await expectAllMovedOnce(other);
    // Nothing of the rename is left: a rename back starts at once.
    expect(await other.run(U, { command: 'rename', old_path: '/memories/dst', new_path: '/memories/back' })).toMatchObject({ isError: false });
    await paused.close();
    await other.close();
  });
});
