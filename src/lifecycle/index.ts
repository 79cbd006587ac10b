/**
 * The lifecycle operations (erasure, export, key rotation and verification, re-key, expiry sweeps,
 * history and restore), one module each over one LifecycleContext and one audit wrapper
 * (./audited.ts). createVault builds the context; src/entry/lifecycle-methods.ts checks the
 * arguments and exposes them as the Vault's methods.
 */
import { auditedBy } from './audited.js';
import type { LifecycleContext } from './context.js';
import { expire } from './expire.js';
import { exportOf } from './export.js';
import { forget } from './forget.js';
import { history } from './history.js';
import { pauseSettings } from './pause.js';
import { readVersion } from './read-version.js';
import { rekeyAll, rekeyUser } from './rekey.js';
import { dropVersion, restore } from './restore.js';
import { rotate } from './rotate.js';
import { verify } from './verify.js';

export type { LifecycleContext } from './context.js';
export type { AuditSink } from './audited.js';
export type { VersionContent } from './read-version.js';
export type { ExpireOptions, LifecycleOptions, RekeyCallOptions, UserExport } from './types.js';

export function createLifecycle(ctx: Omit<LifecycleContext, 'audited'>) {
  const full: LifecycleContext = { ...ctx, audited: auditedBy(ctx.audit) };
  return {
    forgetUser: forget(full),
    exportUser: exportOf(full),
    rotateKeys: rotate(full),
    verifyKeys: verify(full),
    rekeyUser: rekeyUser(full),
    rekeyAll: rekeyAll(full),
    expire: expire(full),
    history: history(full),
    restore: restore(full),
    readVersion: readVersion(full),
    ...pauseSettings(full),
    dropVersion: dropVersion(full),
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;
