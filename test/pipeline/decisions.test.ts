// ctx.decisions is typed: one field per middleware with its own decision type (pipeline/decisions.ts).
// The type assertions are checked by `tsc` (npm test's typecheck): on the old `Record<string, unknown>`
// a misspelled key compiled and every lookup was `unknown`. The run-time part checks what a real
// chain records against those types.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { CommandContext, CommandDecisions } from '../../src/pipeline/context.js';
import type { InputSizeDecision, PathGuardDecision, PiiDecision, QuotaDecision } from '../../src/pipeline/decisions.js';
import { createVault } from '../../src/index.js';
import type { Middleware } from '../../src/pipeline/context.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { DecisionSignals } from '../../src/telemetry/signals.js';

describe('typed decisions', () => {
  it('each middleware has its own field and type; the metrics read a subset of them', () => {
    expectTypeOf<CommandContext['decisions']>().toEqualTypeOf<CommandDecisions>();
    expectTypeOf<CommandDecisions['quota']>().toEqualTypeOf<QuotaDecision | undefined>();
    expectTypeOf<CommandDecisions['pii']>().toEqualTypeOf<PiiDecision | undefined>();
    expectTypeOf<CommandDecisions['pathGuard']>().toEqualTypeOf<PathGuardDecision | undefined>();
    expectTypeOf<CommandDecisions['validate']>().toEqualTypeOf<InputSizeDecision | undefined>();
    // The pipeline's decisions can be handed to telemetry as they are (telemetry names only what it reads).
    expectTypeOf<CommandDecisions>().toExtend<DecisionSignals>();

    const decisions: CommandDecisions = {};
    // @ts-expect-error a misspelled middleware name is no field of CommandDecisions
    decisions.qouta = { checked: false };
    // @ts-expect-error a decision of the wrong shape is refused
    decisions.quota = { blocked: false };
    // @ts-expect-error the path guard's rule is one of its stable rule names
    decisions.pathGuard = { blocked: true, rule: 'no-such-rule' };
    expect(Object.keys(decisions)).toEqual(['qouta', 'quota', 'pathGuard']);
  });

  it('a chain records typed decisions that read without casts', async () => {
    const seen: CommandDecisions[] = [];
    const spy: Middleware = async (ctx, next) => {
      const result = await next();
      seen.push(structuredClone(ctx.decisions));
      return result;
    };
    const vault = await createVault({
      store: new MemoryStore(),
      encryption: false,
      quota: { maxUserFiles: 1 },
      pii: {},
      outerMiddlewares: [spy],
    });
    await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'mail a.person@example.org' });
    await vault.run('ann', { command: 'create', path: '/memories/b.md', file_text: 'second' });
    await vault.run('ann', { command: 'view', path: '/memories/../x' });
    await vault.close();

    const [first, second, third] = seen;
    expect(first?.pathGuard).toEqual({ blocked: false });
    expect(first?.pii?.action).toBe('redacted');
    expect(first?.pii?.findings.EMAIL).toBe(1);
    const quota = second?.quota;
    expect(quota?.checked).toBe(true);
    if (quota?.checked) expect([quota.rule, quota.allowed]).toEqual(['user_files', false]);
    expect(third?.pathGuard).toEqual({ blocked: true, rule: 'dot-segment' });
  });
});
