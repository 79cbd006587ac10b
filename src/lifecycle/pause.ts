/**
 * Pause memory (docs/page.md): the person's setting that makes the chain refuse the model's writes
 * (src/pipeline/pause.ts); its arguments are checked by the entry (src/entry/arguments.ts). Setting it is audited (`pause`, with the actor); reading it is not, and
 * never creates a user (an unknown user is not paused).
 */
import { auditPseudonymsOf } from '../audit/index.js';
import { isMemvaultError } from '../errors.js';
import { settingsKeysOf, UserSettings } from '../pipeline/pause.js';
import { actorOf, auditFailure } from './audited.js';
import type { LifecycleContext } from './context.js';
import type { LifecycleOptions } from './types.js';

export function pauseSettings(ctx: LifecycleContext) {
  const settings = new UserSettings(ctx.observedStore, settingsKeysOf(ctx.codec));
  /** The store uid of a user who has a key; undefined for one who has none (nothing is created). */
  const storedUidOf = async (userId: string): Promise<string | undefined> => {
    const { encryption, codec } = ctx;
    if (!encryption) return (await codec.forUser(userId)).uid;
    const uid = encryption.codecProvider.uidOf(userId);
    try {
      await encryption.codecProvider.forUid(uid);
      return uid;
    } catch (error) {
      if (isMemvaultError(error, 'NOT_FOUND')) return undefined;
      throw error;
    }
  };
  return {
    memoryPaused: async (userId: string): Promise<boolean> => {
      const uid = await storedUidOf(userId);
      return uid === undefined ? false : settings.paused(uid);
    },
    setMemoryPaused: async (userId: string, paused: boolean, options?: LifecycleOptions): Promise<void> => {
      const entry = { type: 'pause' as const, ...actorOf(options) };
      let userCodec;
      try {
        userCodec = await ctx.codec.forUser(userId);
      } catch (error) {
        auditFailure(ctx.audit, entry, error);
        throw error;
      }
      const uid = userCodec.uid;
      await ctx.audited(
        { ...entry, uid: auditPseudonymsOf(userCodec, ctx.codec).uid },
        () => settings.setPaused(uid, paused),
        () => ({ paused: paused ? 1 : 0 }),
      );
    },
  };
}
