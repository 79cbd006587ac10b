/**
 * A store as a paused process sees it (SIGSTOP, a long GC, a partition), for the tests of directory
 * renames taken over by another instance: once the chosen request comes, it and every request after
 * it wait until `wake()`, then go out as they were. Requests are told apart by their plain keys
 * (the tests store names unencrypted) and their fence metadata.
 */
import { FENCE_METADATA } from '../../src/store/fence.js';
import type { PutOptions } from '../../src/store/port.js';
import { isKeptVersionKey, StoreWrapper, type StoreOp } from '../kit/stores.js';

/** The kinds of request a pause can be set on (keys are plain: these tests store names unencrypted). */
export type PausePoint = 'copy' | 'fence' | 'tombstone' | 'journal-drop';

export function kindOf(op: StoreOp, key: string, options?: PutOptions): PausePoint | undefined {
  if (isKeptVersionKey(key)) return op === 'put' && key.includes('/src/') ? 'tombstone' : undefined;
  if (key.includes('renames'))
    return op === 'delete' || (op === 'put' && options?.metadata?.[FENCE_METADATA] === 'reaping')
      ? 'journal-drop'
      : undefined;
  if (
    key.includes('/src/') &&
    (op === 'deleteExactly' || (op === 'put' && options?.metadata?.[FENCE_METADATA] === 'moved'))
  )
    return 'fence';
  if (key.includes('/dst/') && op === 'put' && options?.metadata?.[FENCE_METADATA] === undefined) return 'copy';
  return undefined;
}

/** One instance's store: once the `nth` request of a kind comes, it and every later one wait until `wake()`. */
export class PausingStore extends StoreWrapper {
  /** Told once, when the pause begins (a worker process prints it, for its parent to kill it there). */
  onPause: (() => void) | undefined;
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
      this.onPause?.();
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
