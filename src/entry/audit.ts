import type { AuditPseudonyms } from '../audit/index.js';
import type { CodecProvider } from '../crypto/user-codec.js';
import { createAuditLogger, type AuditLogger, type AuditOptions } from '../pipeline/audit-logger.js';
import type { CommandContext } from '../pipeline/context.js';

/** Who a running command is for, as the audit logger may ask it (kept by vault.run per command). */
export interface CommandIdentities {
  /** The raw user id (for the host's own `redactPath`/hooks; never written by default). */
  rawUserIds: WeakMap<CommandContext, string>;
  /**
   * Each command's audit pseudonyms (src/audit/pseudonyms.ts): keyed by the user's own key, so that
   * an erasure leaves the user's audit records unlinkable to the id or to a guessed path.
   */
  pseudonyms: WeakMap<CommandContext, AuditPseudonyms>;
}

/** The audit logger when `audit` is configured: records authenticated with the deployment's audit key when there is one. */
export async function resolveAudit(
  options: AuditOptions | undefined,
  codec: CodecProvider,
  identities: CommandIdentities,
): Promise<AuditLogger | undefined> {
  if (!options) return undefined;
  const macKey = options.macKey === undefined ? codec.auditMacKey?.() : undefined;
  return createAuditLogger({
    redactPath: (path, ctx) => `#${identities.pseudonyms.get(ctx)?.pathId(path) ?? codec.pathId(ctx.uid, path)}`,
    auditUidOf: (ctx) => identities.pseudonyms.get(ctx)?.uid,
    rawUserIdOf: (ctx) => identities.rawUserIds.get(ctx),
    ...(macKey ? { macKey } : {}),
    ...options,
  });
}
