/**
 * The `memvault/chain` entry point: the middleware chain a command goes through, for a host that
 * builds its own (`compose`) or adds a middleware to the default one (VaultOptions' `middleware`).
 * `createVault` builds the default chain by itself; most hosts never import this.
 */
export { compose, defaultChain, DEFAULT_QUOTA, type ChainOptions } from './pipeline/index.js';
export type { Middleware, CommandContext, CommandResult, CommandStats, Next } from './pipeline/context.js';
// The middlewares, wrapped with their argument checks (src/entry/functions.ts).
export { quota, piiRedactor } from './entry/functions.js';
export type { QuotaOptions } from './pipeline/quota.js';
export { redactForLog, type PiiMiddlewareOptions } from './pipeline/pii-redactor.js';
export { createAuditLogger, type AuditLogger, type AuditOptions } from './pipeline/audit-logger.js';
export { canonicalizePath } from './pipeline/path-guard.js';
export type { MemoryCommand, ResultContent } from './tool/types.js';
export type { CodecProvider, UserCodec } from './crypto/user-codec.js';
export type { UserFiles } from './vault/user-files.js';
export type { TreeFiles } from './vault/tree-files.js';
