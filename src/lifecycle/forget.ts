/** forgetUser: erasure of a user's key and every object of theirs (src/crypto/operations.ts does the deleting). */
import { forgetUser as forgetUserData, type ForgetProgress, type ForgetResult } from '../crypto/index.js';
import { actorOf } from './audited.js';
import { auditUidOf, needsEncryption, type LifecycleContext } from './context.js';
import type { LifecycleOptions } from './types.js';

export function forget(ctx: LifecycleContext) {
  return async (
    userId: string,
    options?: LifecycleOptions & { onProgress?: (progress: ForgetProgress) => void },
  ): Promise<ForgetResult> => {
    const { codecProvider } = needsEncryption(ctx, 'forgetUser');
    // The erase record names the user by their audit pseudonym, taken while the key still exists: it
    // closes that pseudonym's history, and like it cannot be linked to the id once the key is gone.
    // Without a readable key (erased before, damaged) it names no one.
    const auditUid = await auditUidOf(codecProvider, codecProvider.uidOf(userId));
    return ctx.audited(
      { type: 'erase', ...(auditUid !== undefined ? { uid: auditUid } : {}), ...actorOf(options) },
      (counts) =>
        forgetUserData({
          store: ctx.store,
          codecProvider,
          userId,
          onProgress: (p) => {
            if (p.phase === 'key') counts['keys'] = p.deleted;
            else counts['objects'] = p.deleted;
            options?.onProgress?.(p);
          },
        }),
      (r) => ({ keys: r.keyDeleted ? 1 : 0, objects: r.objectsDeleted }),
    );
  };
}
