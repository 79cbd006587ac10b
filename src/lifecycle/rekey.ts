/** rekeyUser and rekeyAll: a new key version per user, every object resealed (src/crypto/rekey.ts). */
import {
  rekeyAll as rekeyAllUsers,
  rekeyUid,
  type RekeyAllResult,
  type RekeyOptions,
  type RekeyUserResult,
} from '../crypto/index.js';
import { actorOf } from './audited.js';
import { auditUidOf, needsEncryption, type LifecycleContext } from './context.js';
import type { LifecycleOptions, RekeyCallOptions } from './types.js';

function rekeyOptions(
  ctx: LifecycleContext,
  options: RekeyCallOptions | undefined,
  counts: Record<string, number>,
): RekeyOptions {
  const { keyProvider, previousKeyProviders, codecProvider } = needsEncryption(ctx, 'rekey');
  const { onProgress, ...rest } = options ?? {};
  const encryption = ctx.options.encryption;
  const expiry = ctx.expiry;
  return {
    ...rest,
    settleMs:
      options?.settleMs ??
      (encryption && typeof encryption === 'object' ? (encryption.cache?.maxAgeMs ?? 600_000) + 60_000 : undefined),
    store: ctx.store,
    primary: keyProvider,
    providers: [keyProvider, ...previousKeyProviders],
    evict: (uid) => codecProvider.evict(uid),
    ...(expiry ? { accessFor: (uid: string) => expiry.forStoredUser(`u/${uid}/f/`) } : {}),
    onProgress: (p) => {
      counts['resealed'] = p.resealed;
      onProgress?.(p);
    },
  };
}

export function rekeyUser(ctx: LifecycleContext) {
  return async (userId: string, options?: LifecycleOptions & RekeyCallOptions): Promise<RekeyUserResult> => {
    const { codecProvider } = needsEncryption(ctx, 'rekeyUser');
    const uid = codecProvider.uidOf(userId);
    // The audit pseudonym derives from the user's first key version: the same before and after.
    const auditUid = await auditUidOf(codecProvider, uid);
    return ctx.audited(
      { type: 'rekey', ...(auditUid !== undefined ? { uid: auditUid } : {}), ...actorOf(options) },
      (counts) => rekeyUid({ ...rekeyOptions(ctx, options, counts), uid }),
      (r) => ({
        keyVersion: r.keyVersion,
        resealed: r.resealed,
        failed: r.failed,
        conflicts: r.conflicts,
        expired: r.expired,
        dropped: r.oldVersionsDropped ? 1 : 0,
      }),
    );
  };
}

export function rekeyAll(ctx: LifecycleContext) {
  return async (options?: LifecycleOptions & RekeyCallOptions): Promise<RekeyAllResult> =>
    ctx.audited(
      { type: 'rekey', ...actorOf(options) },
      (counts) => rekeyAllUsers(rekeyOptions(ctx, options, counts)),
      (r) => ({
        users: r.users,
        completed: r.completed,
        resealed: r.resealed,
        failed: r.failed,
        conflicts: r.conflicts,
        expired: r.expired,
      }),
    );
}
