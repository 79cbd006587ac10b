/** verifyKeys: open every key record with the configured key (read only, so not audited). */
import { verifyKeys as verifyAllKeys, type VerifyKeysResult } from '../crypto/index.js';
import { needsEncryption, type LifecycleContext } from './context.js';

export function verify(ctx: LifecycleContext) {
  return async (
    options: { onProgress?: (progress: { done: number; total: number }) => void } = {},
  ): Promise<VerifyKeysResult> => {
    const { keyProvider } = needsEncryption(ctx, 'verifyKeys');
    return verifyAllKeys({
      store: ctx.store,
      providers: keyProvider,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  };
}
