// GET /readyz: ready only while the store answers and the configured key opens the deployment record;
// the outcome is cached briefly and shared by concurrent probes.
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { Readiness } from '../../src/serve/readiness.js';
import { ProblemError } from '../../src/serve/problems.js';
import { MemoryStore } from '../../src/store/memory.js';
import { startIdp, testServer } from './helpers.js';

const keyOf = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('/readyz', () => {
  it('is 503 key-unavailable once the deployment record no longer opens with the configured key', async () => {
    const store = new MemoryStore();
    const serving = await createVault({ store, encryption: { masterKey: keyOf(1) } });
    const idp = await startIdp();
    const { server } = await testServer(idp, { readyCacheMs: 0 }, serving);
    const other = await createVault({ store, encryption: { masterKey: keyOf(1) } });
    try {
      const ready = await server.fastify.inject({ url: '/readyz' });
      expect([ready.statusCode, ready.json()]).toEqual([200, { status: 'ready' }]);
      // Another instance rotates the master key: this one still holds only the old key.
      await other.rotateKeys({ to: { masterKey: keyOf(2) } });
      const notReady = await server.fastify.inject({ url: '/readyz' });
      expect(notReady.statusCode).toBe(503);
      expect(notReady.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = notReady.json();
      expect(body.type).toBe('urn:memvault:problem:key-unavailable');
      expect(JSON.stringify(body)).not.toMatch(/master key|local|k\/_deployment|\bat \w/);
      // A deployment record that is gone is not ready either.
      await store.delete('k/_deployment');
      expect((await server.fastify.inject({ url: '/readyz' })).json().type).toBe(
        'urn:memvault:problem:key-unavailable',
      );
    } finally {
      await server.close();
      await serving.close();
      await other.close();
      await idp.close();
    }
  });

  it('checks at most once per window, shares a running check, and fails closed', async () => {
    let clock = 0;
    let calls = 0;
    let outcome: () => Promise<void> = async () => {};
    const readiness = new Readiness(
      () => (calls++, outcome()),
      1000,
      () => clock,
    );
    await Promise.all([readiness.assertReady(), readiness.assertReady(), readiness.assertReady()]);
    expect(calls).toBe(1);
    clock = 999;
    await readiness.assertReady();
    expect(calls).toBe(1);
    outcome = async () => {
      throw new Error('ECONNREFUSED 10.0.0.1:7480');
    };
    clock = 1000;
    const failed = await readiness.assertReady().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ProblemError);
    expect((failed as ProblemError).problem).toMatchObject({ status: 503, type: 'urn:memvault:problem:unavailable' });
    expect(JSON.stringify((failed as ProblemError).problem)).not.toContain('10.0.0.1');
    // The failure is cached too: a probe storm does not hammer a failing store or KMS.
    await expect(readiness.assertReady()).rejects.toBeInstanceOf(ProblemError);
    expect(calls).toBe(2);
    expect(() => new Readiness(async () => {}, -1)).toThrow(RangeError);
  });
});
