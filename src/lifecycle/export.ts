/** exportUser: an access request answered with a tar stream (src/lifecycle/export-archive.ts writes it). */
import { PassThrough } from 'node:stream';
import { auditPseudonymsOf } from '../audit/index.js';
import type { AuditEntry } from '../audit/record.js';
import { isMemvaultError, MemvaultError } from '../errors.js';
import { actorOf, auditFailure } from './audited.js';
import { needsEncryption, type LifecycleContext } from './context.js';
import { exportUser as exportUserArchive, type ExportProgress } from './export-archive.js';
import type { LifecycleOptions, UserExport } from './types.js';

export function exportOf(ctx: LifecycleContext) {
  return async (
    userId: string,
    options?: LifecycleOptions & { onProgress?: (progress: ExportProgress) => void },
  ): Promise<UserExport> => {
    const { codecProvider } = needsEncryption(ctx, 'exportUser');
    const uid = codecProvider.uidOf(userId);
    let entry: AuditEntry = { type: 'export', ...actorOf(options) };
    try {
      // An unknown user is NOT_FOUND here, before any byte is streamed.
      entry = { ...entry, uid: auditPseudonymsOf(await codecProvider.forUid(uid), codecProvider).uid };
    } catch (error) {
      auditFailure(ctx.audit, entry, error, { objects: 0 });
      if (isMemvaultError(error, 'NOT_FOUND'))
        throw new MemvaultError('NOT_FOUND', 'memvault: no memories are stored for this user; nothing was exported.', {
          cause: error,
        });
      throw error;
    }
    const stream = new PassThrough();
    const done = ctx.audited(
      entry,
      (counts) =>
        exportUserArchive({
          store: ctx.store,
          codecProvider,
          userId,
          out: stream,
          onProgress: (p) => {
            counts['objects'] = p.files;
            counts['bytes'] = p.bytes;
            options?.onProgress?.(p);
          },
        }),
      (r) => ({ objects: r.files, bytes: r.bytes, versions: r.versions }),
    );
    done.catch(() => undefined); // the failure also reaches the reader as a stream error
    return { uid, stream, done };
  };
}
