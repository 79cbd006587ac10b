/**
 * The Vault's lifecycle methods: each checks its arguments first (./arguments.ts: an invalid one
 * changes nothing, and is a rejected promise like every other failure), then runs the operation
 * of src/lifecycle/.
 */
import type { Lifecycle } from '../lifecycle/index.js';
import {
  checkDropVersionArgs,
  checkMemoryPausedArgs,
  checkReadVersionArgs,
  checkSetMemoryPausedArgs,
  checkExpireArgs,
  checkExportArgs,
  checkForgetArgs,
  checkHistoryArgs,
  checkRekeyAllArgs,
  checkRekeyUserArgs,
  checkRestoreArgs,
  checkRotateArgs,
  checkVerifyKeysArgs,
} from './arguments.js';
import type { Vault } from './vault-types.js';

type LifecycleMethods = Pick<
  Vault,
  | 'forgetUser'
  | 'exportUser'
  | 'rotateKeys'
  | 'verifyKeys'
  | 'rekeyUser'
  | 'rekeyAll'
  | 'expire'
  | 'history'
  | 'restore'
  | 'dropVersion'
  | 'readVersion'
  | 'memoryPaused'
  | 'setMemoryPaused'
>;

export function lifecycleMethods(ops: Lifecycle): LifecycleMethods {
  return {
    forgetUser: async (userId, options) => {
      checkForgetArgs(userId, options);
      return ops.forgetUser(userId, options);
    },
    exportUser: async (userId, options) => {
      checkExportArgs(userId, options);
      return ops.exportUser(userId, options);
    },
    rotateKeys: async (options) => {
      checkRotateArgs(options);
      return ops.rotateKeys(options);
    },
    verifyKeys: async (options = {}) => {
      checkVerifyKeysArgs(options);
      return ops.verifyKeys(options);
    },
    rekeyUser: async (userId, options) => {
      checkRekeyUserArgs(userId, options);
      return ops.rekeyUser(userId, options);
    },
    rekeyAll: async (options) => {
      checkRekeyAllArgs(options);
      return ops.rekeyAll(options);
    },
    expire: async (options = {}) => {
      checkExpireArgs(options);
      return ops.expire(options);
    },
    history: async (userId, path, options) => ops.history(userId, checkHistoryArgs(userId, path, options), options),
    restore: async (userId, options) => ops.restore(userId, checkRestoreArgs(userId, options), options),
    dropVersion: async (userId, path, seq, options) =>
      ops.dropVersion(userId, checkDropVersionArgs(userId, path, seq, options), seq, options),
    readVersion: async (userId, path, seq, options) =>
      ops.readVersion(userId, checkReadVersionArgs(userId, path, seq, options), seq, options),
    memoryPaused: async (userId, options) => {
      checkMemoryPausedArgs(userId, options);
      return ops.memoryPaused(userId);
    },
    setMemoryPaused: async (userId, paused, options) => {
      checkSetMemoryPausedArgs(userId, paused, options);
      return ops.setMemoryPaused(userId, paused, options);
    },
  };
}
