/**
 * A store as a process stopped part-way sees it, for the scenarios that stop an instance in the
 * middle of a command: once the `nth` request a plan picks comes (before it goes out, or once it
 * has landed), that request and every one after it wait until `wake()`. A paused process (SIGSTOP,
 * a long GC, a partition) is woken later; a killed one never is (its parent kills it there, told
 * by `onPause`). The store it wraps stays open: whoever opened it closes it.
 */
import type { PutOptions } from '../../src/store/port.js';
import { StoreWrapper, type StoreOp } from './stores.js';

export interface PausePlan {
  /** The requests counted. */
  matches(op: StoreOp, key: string, options?: PutOptions): boolean;
  nth: number;
  /** 'before': the nth request waits before it goes out; 'after' (PUTs only): once it has landed. */
  when: 'before' | 'after';
}

export class PausingStore extends StoreWrapper {
  /** Told once, when the pause begins (a worker process prints it, for its parent to kill it there). */
  onPause: (() => void) | undefined;
  paused = false;
  private plan: (PausePlan & { seen: number }) | undefined;
  private asleep: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;

  pauseWhen(plan: PausePlan): void {
    this.plan = { ...plan, seen: 0 };
  }

  wake(): void {
    this.plan = undefined;
    this.wakeUp?.();
  }

  /** Whether this request begins the pause (counted once, at its own moment: before or after). */
  private begins(when: PausePlan['when'], op: StoreOp, key: string, options?: PutOptions): boolean {
    const plan = this.plan;
    if (!plan || this.paused || plan.when !== when || !plan.matches(op, key, options) || ++plan.seen !== plan.nth)
      return false;
    this.paused = true;
    this.asleep = new Promise((resolve) => (this.wakeUp = resolve));
    this.onPause?.();
    return true;
  }

  protected override async step(op: StoreOp, key: string): Promise<void> {
    if (op === 'put') return; // put() below, which sees the request's metadata
    this.begins('before', op, key);
    if (this.asleep) await this.asleep;
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    this.begins('before', 'put', key, options);
    if (this.asleep) await this.asleep;
    const result = await super.put(key, body, options);
    if (this.begins('after', 'put', key, options)) await this.asleep;
    return result;
  }

  override async close(): Promise<void> {}
}
