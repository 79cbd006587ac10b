// Request logs name the route template, status and time, never a user id, path or content; the
// service's span joins the caller's trace (traceparent) and the vault's spans nest below it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { propagation } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { registerInMemoryTelemetry, type InMemoryTelemetry } from '../telemetry/harness.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
let telemetry: InMemoryTelemetry;
const lines: string[] = [];
const log = (level: string) => (object: unknown, message?: string) =>
  lines.push(`${level} ${JSON.stringify(object)} ${message ?? ''}`);
const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };

beforeAll(async () => {
  telemetry = registerInMemoryTelemetry();
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  idp = await startIdp();
  ({ server, vault } = await testServer(idp, { logger }));
});

afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
  propagation.disable();
  await telemetry.shutdown();
});

describe('logs and spans', () => {
  it('logs hold no user id, path or content; the span continues the incoming trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const headers = {
      ...bearer(serviceKey.key),
      'memvault-user': 'ivy-the-user',
      'content-type': 'application/json',
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    };
    const input = { command: 'create', path: '/memories/secret-name.md', file_text: 'secret-content' };
    const response = await server.fastify.inject({
      method: 'POST',
      url: '/v1/memory',
      headers,
      payload: JSON.stringify(input),
    });
    expect(response.json()).toMatchObject({ is_error: false });
    await server.fastify.inject({ url: '/v1/files/memories/secret-name.md', headers });
    await server.fastify.inject({
      method: 'POST',
      url: '/v1/memory',
      headers: { ...headers, authorization: 'Bearer mvk_nope_AAAAAAAAAAAAAAAAAAAA' },
      payload: '{}',
    });
    const text = lines.join('\n');
    expect(text).toContain('"route":"/v1/memory"');
    expect(text).toContain('"route":"/v1/files/*"');
    expect(text).toContain('"status":401');
    for (const secret of ['ivy-the-user', 'secret-name', 'secret-content', serviceKey.key])
      expect(text).not.toContain(secret);
    const spans = telemetry.spans();
    const http = spans.find((s) => s.name === 'memvault.http.memory');
    expect(http?.spanContext().traceId).toBe(traceId);
    expect(spans.filter((s) => s.spanContext().traceId === traceId).length).toBeGreaterThan(1);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toMatch(/ivy-the-user|secret-name/);
  });
});
