/**
 * Spans nest as docs/observability.md says: memvault.command > memvault.stage.<stage> (one per
 * middleware, each inside the one before) > memvault.stage.execute > memvault.store.<operation>,
 * failures carry their error code, the host's own spans (e.g. the AWS SDK's) nest below the store
 * span that caused them, and the command span joins the host's active span.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemvaultError } from '../../src/errors.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { StoredObject } from '../../src/store/port.js';
import { registerInMemoryTelemetry, type InMemoryTelemetry } from './harness.js';

let telemetry: InMemoryTelemetry;
let dir: string;
const masterKey = randomBytes(32).toString('base64');
const USER = 'planted-span-user';

beforeAll(async () => {
  telemetry = registerInMemoryTelemetry();
  dir = await mkdtemp(join(tmpdir(), 'memvault-spans-'));
});
afterAll(async () => {
  await telemetry.shutdown();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => telemetry.resetSpans());

const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const parentOf = (spans: ReadableSpan[], s: ReadableSpan) => spans.find((p) => idOf(p) === s.parentSpanContext?.spanId);
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
function one(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}
function ancestors(spans: ReadableSpan[], s: ReadableSpan): string[] {
  const out: string[] = [];
  for (let p = parentOf(spans, s); p; p = parentOf(spans, p)) out.push(p.name);
  return out;
}

const STAGES = ['audit', 'validate', 'path_guard', 'pii', 'pause', 'quota'];

describe('command spans', () => {
  it('nests the stages in chain order, the commands inside the last, the store calls inside those', async () => {
    const vault = await createVault({
      store: new MemoryStore(),
      encryption: { masterKey },
      audit: { file: join(dir, 'a.jsonl') },
    });
    await vault.run(USER, { command: 'view', path: '/memories' }); // loads the user's key
    telemetry.resetSpans();
    expect((await vault.run(USER, { command: 'create', path: '/memories/x.md', file_text: 'hello' })).isError).toBe(
      false,
    );
    const spans = telemetry.spans();
    const command = one(spans, 'memvault.command');
    expect(command.parentSpanContext).toBeUndefined();
    expect(command.attributes).toEqual({ 'memvault.command': 'create', 'memvault.outcome': 'ok' });
    expect(command.status.code).not.toBe(SpanStatusCode.ERROR);
    let parent = command;
    for (const [position, stage] of STAGES.entries()) {
      const span = one(spans, `memvault.stage.${stage}`);
      expect(parentOf(spans, span), stage).toBe(parent);
      expect(span.attributes).toMatchObject({
        'memvault.stage': stage,
        'memvault.stage.position': position,
        'memvault.outcome': 'ok',
      });
      parent = span;
    }
    const execute = one(spans, 'memvault.stage.execute');
    expect(parentOf(spans, execute)).toBe(parent);
    const puts = named(spans, 'memvault.store.put');
    expect(puts.length).toBeGreaterThan(0);
    for (const put of puts) {
      expect(ancestors(spans, put)).toContain('memvault.stage.execute');
      expect(put.attributes).toMatchObject({
        'memvault.store.operation': 'put',
        'memvault.store.kind': 'memory',
        'memvault.store.status': 'ok',
      });
    }
    // One trace; every span ended before its parent did. Told by the order in which they ended (the
    // harness's SimpleSpanProcessor exports each span as it ends), not by their end times: the SDK
    // dates a span by Date.now() (millisecond steps) read apart from its monotonic clock, so on a
    // loaded machine a parent's end time can come out earlier than its child's.
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    for (const [i, s] of spans.entries()) {
      const p = parentOf(spans, s);
      if (p) expect(spans.indexOf(p), `${s.name} in ${p.name}`).toBeGreaterThan(i);
    }
    await vault.close();
  });

  it("puts the key load of a user's first command directly under the command span", async () => {
    const vault = await createVault({ store: new MemoryStore(), encryption: { masterKey } });
    await vault.run(USER, { command: 'view', path: '/memories' });
    const spans = telemetry.spans();
    const command = one(spans, 'memvault.command');
    const keyLoad = named(spans, 'memvault.store.get').filter((s) => parentOf(spans, s) === command);
    expect(keyLoad.length).toBeGreaterThan(0);
    expect(named(spans, 'memvault.stage.validate')).toHaveLength(1);
    await vault.close();
  });

  it('ends the chain at the stage that refused, with the error code on it and on the command', async () => {
    const vault = await createVault({ store: new MemoryStore(), encryption: { masterKey } });
    const result = await vault.run(USER, { command: 'view', path: '/etc/passwd' });
    expect(result.code).toBe('INVALID_PATH');
    const spans = telemetry.spans();
    for (const name of ['memvault.command', 'memvault.stage.validate', 'memvault.stage.path_guard']) {
      const span = one(spans, name);
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'INVALID_PATH' });
      expect(span.attributes).toMatchObject({ 'memvault.outcome': 'error', 'memvault.error.code': 'INVALID_PATH' });
    }
    expect(named(spans, 'memvault.stage.pii')).toEqual([]);
    expect(named(spans, 'memvault.stage.execute')).toEqual([]);
    await vault.close();
  });

  it('marks a failed store call with its status and the command with STORE_UNAVAILABLE', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false });
    await vault.run(USER, { command: 'create', path: '/memories/x.md', file_text: 'x' });
    store.get = () => Promise.reject(new MemvaultError('STORE_UNAVAILABLE', 'down'));
    telemetry.resetSpans();
    expect((await vault.run(USER, { command: 'view', path: '/memories/x.md' })).code).toBe('STORE_UNAVAILABLE');
    const spans = telemetry.spans();
    const get = one(spans, 'memvault.store.get');
    expect(get.attributes).toMatchObject({
      'memvault.store.status': 'unavailable',
      'memvault.error.code': 'STORE_UNAVAILABLE',
    });
    expect(get.status).toEqual({ code: SpanStatusCode.ERROR, message: 'STORE_UNAVAILABLE' });
    expect(ancestors(spans, get)).toEqual([
      'memvault.stage.execute',
      'memvault.stage.quota',
      'memvault.stage.pause',
      'memvault.stage.pii',
      'memvault.stage.path_guard',
      'memvault.stage.validate',
      'memvault.command',
    ]);
    expect(one(spans, 'memvault.command').attributes['memvault.error.code']).toBe('STORE_UNAVAILABLE');
    // The error's message ('down') is never put on a span.
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.status, s.events]))).not.toContain('down');
    await vault.close();
  });

  it("nests the host's own spans of a store request (as the AWS SDK instrumentation makes them) under the store span", async () => {
    // The instrumentation starts its span in whatever context is active when the request is sent.
    class SdkLikeStore extends MemoryStore {
      override async get(key: string): Promise<StoredObject | null> {
        const span = trace.getTracer('host-sdk').startSpan('S3.GetObject', {}, context.active());
        try {
          return await super.get(key);
        } finally {
          span.end();
        }
      }
    }
    const vault = await createVault({ store: new SdkLikeStore(), encryption: false });
    await vault.run(USER, { command: 'create', path: '/memories/x.md', file_text: 'x' });
    telemetry.resetSpans();
    await vault.run(USER, { command: 'view', path: '/memories/x.md' });
    const spans = telemetry.spans();
    const sdk = one(spans, 'S3.GetObject');
    expect(parentOf(spans, sdk)?.name).toBe('memvault.store.get');
    await vault.close();
  });

  it("joins the host's active span: a tool call traced by the host contains the command", async () => {
    const vault = await createVault({ store: new MemoryStore(), encryption: false });
    const host = trace.getTracer('host-app').startSpan('agent.turn');
    await context.with(trace.setSpan(context.active(), host), () =>
      vault.run(USER, { command: 'view', path: '/memories' }),
    );
    host.end();
    const spans = telemetry.spans();
    expect(parentOf(spans, one(spans, 'memvault.command'))?.name).toBe('agent.turn');
    await vault.close();
  });

  it('names the host\'s own middlewares "middleware" with their position in the chain', async () => {
    const vault = await createVault({
      store: new MemoryStore(),
      encryption: false,
      middlewares: [(_ctx, next) => next()],
    });
    await vault.run(USER, { command: 'view', path: '/memories' });
    const spans = telemetry.spans();
    const host = one(spans, 'memvault.stage.middleware');
    expect(host.attributes['memvault.stage.position']).toBe(5);
    expect(parentOf(spans, host)?.name).toBe('memvault.stage.quota');
    expect(parentOf(spans, one(spans, 'memvault.stage.execute'))).toBe(host);
    await vault.close();
  });
});
