import type { AuditEntry, AuditRecord } from '../audit/record.js';
import { AuditWriter, type AuditWriterOptions } from '../audit/writer.js';
import { auditMiddleware } from './audit.js';
import type { CommandRecordOptions } from './command-record.js';
import type { Middleware } from './context.js';

/** `createVault({ audit: AuditOptions })`: sinks and durability, plus what command records hold. */
export interface AuditOptions extends AuditWriterOptions, CommandRecordOptions {}

export interface AuditLogger {
  readonly instanceId: string;
  /** False once the sink failed or the logger was closed. */
  readonly writable: boolean;
  /** The outermost middleware of the vault's chain. */
  middleware(overrides?: CommandRecordOptions): Middleware;
  /** For services that act outside a command (expiry sweeper, erasure, key rotation). */
  append(entry: AuditEntry): AuditRecord;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export async function createAuditLogger(options: AuditOptions): Promise<AuditLogger> {
  const writer = await AuditWriter.open(options);
  const recordOptions: CommandRecordOptions = {
    ...(options.redactPath ? { redactPath: options.redactPath } : {}),
    ...(options.includeUserId !== undefined ? { includeUserId: options.includeUserId } : {}),
    ...(options.rawUserIdOf ? { rawUserIdOf: options.rawUserIdOf } : {}),
    ...(options.auditUidOf ? { auditUidOf: options.auditUidOf } : {}),
  };
  return {
    get instanceId() {
      return writer.instanceId;
    },
    get writable() {
      return writer.writable;
    },
    middleware: (overrides = {}) => auditMiddleware(writer, { ...recordOptions, ...overrides }),
    append: (entry) => writer.append(entry),
    flush: () => writer.flush(),
    close: () => writer.close(),
  };
}
