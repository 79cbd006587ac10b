import { loggableError } from '../errors.js';
import type { AuditLogger } from '../pipeline/audit-logger.js';
import { compose } from '../pipeline/compose.js';
import type { CommandContext, CommandResult, Middleware } from '../pipeline/context.js';
import { answering } from '../pipeline/error-result.js';
import { defaultChain } from '../pipeline/index.js';
import { pauseGuard, type UserSettings } from '../pipeline/pause.js';
import { piiRedactor, type PiiMiddlewareOptions } from '../pipeline/pii-redactor.js';
import type { QuotaOptions } from '../pipeline/quota.js';
import { namedStage, observeExecute, observeStages } from '../pipeline/telemetry.js';
import { terminal } from '../pipeline/terminal.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import type { VaultLocks } from '../vault/locks.js';
import type { TreeOperations } from '../vault/tree/index.js';
import type { VaultLogger } from './logger.js';

export interface ChainSettings {
  audit: AuditLogger | undefined;
  outerMiddlewares?: Middleware[];
  middlewares?: Middleware[];
  pii?: PiiMiddlewareOptions | false;
  quota?: QuotaOptions | false;
  limits?: Partial<CommandLimits>;
  createMode?: 'overwrite' | 'fail';
  logger?: VaultLogger;
  /** The store's own directory operations (one transaction each), when it has them. */
  tree?: TreeOperations;
  /** The users' settings (pause memory: the model's writes refused), read by the pause guard. */
  userSettings?: UserSettings;
}

/** One command through the chain and into the terminal step (the error boundary around it is vault.run's). */
export type CommandRunner = (ctx: CommandContext) => Promise<CommandResult>;

/**
 * The vault's chain. Order: audit (sees everything, rejected commands too), the host's outer
 * middlewares, validation, the path guard, then the middlewares that need canonical paths (PII,
 * the pause guard, quota, the host's inner ones); every stage is observed and answers a throw with a result.
 */
export function resolveCommandChain(settings: ChainSettings, locks: VaultLocks): CommandRunner {
  const planned = defaultChain({
    outer: [
      ...(settings.audit ? [namedStage('audit', settings.audit.middleware())] : []),
      ...(settings.outerMiddlewares ?? []),
    ],
    ...(settings.pii === false ? {} : { pii: piiRedactor(settings.pii) }),
    ...(settings.userSettings ? { pause: pauseGuard(settings.userSettings) } : {}),
    quota: settings.quota === false ? false : { ...settings.quota },
    inner: settings.middlewares ?? [],
    ...(settings.limits ? { limits: settings.limits } : {}),
  });
  const logger = settings.logger;
  const reportFault = (error: unknown, ctx: CommandContext) =>
    logger?.error({ requestId: ctx.requestId, uid: ctx.uid, err: loggableError(error) }, 'memvault command failed');
  const chain = compose(observeStages(planned.middlewares).map((middleware) => answering(middleware, reportFault)));
  const limits: CommandLimits = { ...DEFAULT_LIMITS, ...planned.limits };
  const env = {
    locks,
    limits,
    createMode: settings.createMode ?? 'overwrite',
    ...(settings.tree ? { tree: settings.tree } : {}),
  };
  const execute = observeExecute(terminal({ env }));
  return (ctx) => chain(ctx, () => execute(ctx));
}
