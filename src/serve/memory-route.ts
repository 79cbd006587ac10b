/**
 * POST /v1/memory: the tool input the model sent, run for the caller's user through the vault's whole
 * chain (vault.run: path guard, PII, quotas, audit), answered as `{content, is_error}` exactly as
 * vault.run gives it, its audit record naming the caller as actor. With an Idempotency-Key it runs at most once (idempotency.ts). The span joins
 * the trace context of the incoming request (traceparent), when the host registered a propagator.
 */
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Vault } from '../memvault.js';
import { inSpan } from '../telemetry/tracing.js';
import {
  checkIdempotencyKey,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_RECORD_KIND,
  requestFingerprint,
  type IdempotencyRecords,
  type ReplayableResult,
} from './idempotency.js';
import { ProblemError } from './problems.js';

export const REPLAYED_HEADER = 'idempotent-replayed';

export function memoryRoute(vault: Vault, idempotency: IdempotencyRecords) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<ReplayableResult> => {
    const caller = request.caller;
    if (!caller) throw new ProblemError('unauthorized', 'Send a credential.');
    const key = checkIdempotencyKey(request.headers[IDEMPOTENCY_HEADER]);
    const input = request.body;
    const run = async (): Promise<ReplayableResult> => {
      const result = await vault.run(caller.userId, input, { actor: caller.actor });
      return { content: result.content, is_error: result.isError };
    };
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    return context.with(parent, () =>
      inSpan(
        'memvault.http.memory',
        { 'memvault.caller.kind': caller.kind, 'memvault.idempotent': key !== undefined },
        async () => {
          if (key === undefined) return run();
          const records = await vault.userRecords(caller.userId, IDEMPOTENCY_RECORD_KIND);
          const { result, replayed } = await idempotency.once(
            records,
            key,
            requestFingerprint('POST /v1/memory', input),
            run,
          );
          if (replayed) void reply.header(REPLAYED_HEADER, 'true');
          return result;
        },
      ),
    );
  };
}
