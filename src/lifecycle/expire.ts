/** expire: the sweeper run on demand (src/expiry/sweep.ts): idle files past their TTL, history retention. */
import type { TtlSettings } from '../expiry/config.js';
import { sweep, type SweepSummary } from '../expiry/sweep.js';
import { MemvaultError } from '../errors.js';
import { actorOf } from './audited.js';
import type { LifecycleContext } from './context.js';
import type { ExpireOptions } from './types.js';

export function expire(ctx: LifecycleContext) {
  return async (options: ExpireOptions = {}): Promise<SweepSummary> => {
    const { history, audit } = ctx;
    const fromVault = ctx.options.expiry;
    const ttl: TtlSettings | undefined =
      options.ttl ??
      (fromVault
        ? {
            ttlDays: fromVault.ttlDays,
            ...(fromVault.classes ? { classes: fromVault.classes } : {}),
            ...(fromVault.defaultClass ? { defaultClass: fromVault.defaultClass } : {}),
          }
        : undefined);
    // With history on, a sweep also enforces its retention (and may run for that alone, without TTLs).
    if (!ttl && !history)
      throw new MemvaultError('CONFIG', 'memvault: expire needs TTL settings (the expiry option, or expire({ ttl }))');
    return ctx.audited(
      { type: 'expire', ...actorOf(options) },
      (counts) =>
        sweep({
          store: ctx.store,
          ...(ttl ? { ttl } : {}),
          ...(history ? { history } : {}),
          ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}),
          ...(options.asOf ? { asOf: options.asOf } : {}),
          ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
          ...(options.deleter ? { deleter: options.deleter } : {}),
          ...(audit && !options.dryRun ? { audit } : {}),
          ...(ctx.finishStoppedRenames ? { finishStoppedRenames: ctx.finishStoppedRenames } : {}),
          onProgress: (p) => {
            counts['scanned'] = p.scanned;
            counts['expired'] = p.expired;
            counts['errors'] = p.errors;
            options.onProgress?.(p);
          },
        }),
      (r) => ({
        scanned: r.scanned,
        expired: r.expired,
        kept: r.kept,
        errors: r.errors,
        ...(r.versionsDropped !== undefined ? { versionsDropped: r.versionsDropped } : {}),
      }),
    );
  };
}
