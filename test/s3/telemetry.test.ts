/**
 * On a real S3 server (RGW): the AWS SDK's own spans, started by a middleware on the client's stack
 * in whatever context is active when a request is sent (as @opentelemetry/instrumentation-aws-sdk
 * does), nest below the memvault.store.<operation> span that sent them; memvault.store.requests
 * equals the requests the command's accounting counted (every HTTP attempt); and a real 412 is a
 * precondition_failed request and a write conflict.
 */
import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import type { S3Store } from '../../src/store/s3.js';
import { METRICS } from '../../src/telemetry/names.js';
import { emptyStore, recordS3SuiteRun, s3Available, s3ClientConfig, s3SkipReason, s3Url } from './helpers.js';
import { registerInMemoryTelemetry, total, type InMemoryTelemetry } from '../telemetry/harness.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(`telemetry on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  let telemetry: InMemoryTelemetry;
  let vault: Vault;
  beforeAll(async () => {
    telemetry = registerInMemoryTelemetry();
    const client = new S3Client(s3ClientConfig());
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const span = trace
          .getTracer('host-aws-sdk')
          .startSpan(
            `S3.${String(ctx.commandName).replace(/Command$/, '')}`,
            { kind: SpanKind.CLIENT },
            context.active(),
          );
        try {
          return await next(args);
        } finally {
          span.end();
        }
      },
      { step: 'initialize', name: 'hostSdkSpans' },
    );
    vault = await createVault({
      store: s3Url(`telemetry-${randomBytes(3).toString('hex')}`),
      s3: client,
      encryption: { masterKey: randomBytes(32).toString('base64') },
      createMode: 'fail',
    });
  });
  afterAll(async () => {
    await emptyStore(vault.store as S3Store);
    await vault.close();
    await telemetry.shutdown();
  });

  it('nests every SDK span under a memvault store span and counts exactly the requests sent', async () => {
    await vault.run('s3-user', { command: 'view', path: '/memories' });
    await telemetry.collect();
    telemetry.resetSpans();
    for (const input of [
      { command: 'create', path: '/memories/a.md', file_text: 'one\n' },
      { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' },
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' },
      { command: 'view', path: '/memories' },
    ]) {
      const requests: RequestCounter = {};
      expect((await withRequestCounter(requests, () => vault.run('s3-user', input))).isError).toBe(false);
      const points = await telemetry.collect();
      const byType: RequestCounter = {};
      for (const p of points.filter((p) => p.name === METRICS.storeRequests)) {
        const type = String(p.attributes['memvault.store.request']);
        byType[type] = (byType[type] ?? 0) + p.value;
      }
      expect(byType, input.command).toEqual(requests);
    }
    const spans = telemetry.spans();
    const sdk = spans.filter((s) => s.name.startsWith('S3.'));
    expect(sdk.length).toBeGreaterThan(4);
    for (const s of sdk) {
      const parent = spans.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);
      expect(parent?.name, s.name).toMatch(/^memvault\.store\./);
    }
  });

  it('counts a real 412 as a precondition_failed PUT and a write conflict', async () => {
    await vault.run('s3-user', { command: 'create', path: '/memories/c.md', file_text: 'x' });
    await telemetry.collect();
    expect((await vault.run('s3-user', { command: 'create', path: '/memories/c.md', file_text: 'y' })).code).toBe(
      'ALREADY_EXISTS',
    );
    const points = await telemetry.collect();
    expect(
      total(points, METRICS.storeRequests, {
        'memvault.store.request': 'PUT',
        'memvault.store.status': 'precondition_failed',
      }),
    ).toBe(1);
    expect(total(points, METRICS.writeConflicts, { 'memvault.store.operation': 'put' })).toBe(1);
    expect(
      total(points, METRICS.commands, { 'memvault.command': 'create', 'memvault.error.code': 'ALREADY_EXISTS' }),
    ).toBe(1);
  });
});
