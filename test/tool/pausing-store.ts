/**
 * The pause points of the tests of directory renames taken over by another instance, on the kit's
 * PausingStore (test/kit/pausing-store.ts): requests are told apart by their plain keys (the tests
 * store names unencrypted) and their fence metadata.
 */
import { FENCE_METADATA } from '../../src/store/fence.js';
import type { PutOptions } from '../../src/store/port.js';
import { PausingStore as StorePausing } from '../kit/pausing-store.js';
import { isKeptVersionKey, type StoreOp } from '../kit/stores.js';

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
export class PausingStore extends StorePausing {
  pauseAt(kind: PausePoint, nth: number): void {
    this.pauseWhen({ matches: (op, key, options) => kindOf(op, key, options) === kind, nth, when: 'before' });
  }
}
