/**
 * Without a registered provider memvault records nothing and works as before; a provider the host
 * registers later (after the vault was created, as happens when telemetry starts after the app's
 * modules load) receives every signal from then on, and none after it is removed.
 */
import { metrics, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { instruments } from '../../src/telemetry/metrics.js';
import { METRICS } from '../../src/telemetry/names.js';
import { registerInMemoryTelemetry, total } from './harness.js';

describe('no provider registered', () => {
  it('records nothing, then follows a provider registered later, then stops when it is removed', async () => {
    expect(instruments()).toBeUndefined();
    const vault = await createVault({ store: new MemoryStore(), encryption: false });
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'a' })).isError).toBe(false);
    expect(trace.getActiveSpan()).toBeUndefined();

    const telemetry = registerInMemoryTelemetry();
    expect(instruments()).toBeDefined();
    await vault.run('u', { command: 'view', path: '/memories/a.md' });
    let points = await telemetry.collect();
    expect(total(points, METRICS.commands)).toBe(1);
    expect(total(points, METRICS.commands, { 'memvault.command': 'view', 'memvault.outcome': 'ok' })).toBe(1);
    expect(telemetry.spans().filter((s) => s.name === 'memvault.command')).toHaveLength(1);

    metrics.disable();
    trace.disable();
    expect(instruments()).toBeUndefined();
    await vault.run('u', { command: 'view', path: '/memories/a.md' });
    points = await telemetry.collect();
    expect(total(points, METRICS.commands)).toBe(0);
    expect(telemetry.spans().filter((s) => s.name === 'memvault.command')).toHaveLength(1);
    await telemetry.shutdown();
    await vault.close();
  });
});
