/** rotateKeys: re-wrap every key record with a new master key (src/crypto/operations.ts re-wraps). */
import {
  keyProviderFromConfig,
  rotateKeys as rotateAllKeys,
  type KeyProvider,
  type KeySourceConfig,
  type RotationProgress,
  type RotationResult,
} from '../crypto/index.js';
import { actorOf } from './audited.js';
import { needsEncryption, type LifecycleContext } from './context.js';
import type { LifecycleOptions } from './types.js';

export function rotate(ctx: LifecycleContext) {
  return async (
    options: LifecycleOptions & {
      to: KeySourceConfig | KeyProvider;
      onProgress?: (progress: RotationProgress) => void;
    },
  ): Promise<RotationResult> => {
    const { keyProvider, previousKeyProviders } = needsEncryption(ctx, 'rotateKeys');
    const to = isKeyProvider(options.to) ? options.to : (await keyProviderFromConfig(options.to)).keyProvider;
    return ctx.audited(
      { type: 'rotate', ...actorOf(options) },
      (counts) =>
        rotateAllKeys({
          store: ctx.store,
          from: [keyProvider, ...previousKeyProviders],
          to,
          onProgress: (p) => {
            counts['records'] = p.done;
            options.onProgress?.(p);
          },
        }),
      (r) => ({ records: r.total, rewrapped: r.rewrapped, skipped: r.skipped }),
    );
  };
}

function isKeyProvider(value: KeySourceConfig | KeyProvider): value is KeyProvider {
  return typeof (value as KeyProvider).wrap === 'function' && typeof (value as KeyProvider).unwrap === 'function';
}
