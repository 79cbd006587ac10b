/**
 * What can be wiped is wiped. The master key is decoded into a buffer of its own
 * (never a slice of Node's shared pool, which no wipe reaches). A key read from process.env is left
 * there: the library never changes process.env (deleting it once broke the second
 * start of `audit export --user`). (This file has its own process: it sets process.env.)
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEncryptionFromConfig, keyProviderFromConfig } from '../../src/crypto/config.js';
import { parseMasterKey } from '../../src/crypto/local-key.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';

beforeAll(async () => {
  await loadSodium();
});
afterEach(() => {
  delete process.env['MEMVAULT_MASTER_KEY'];
  delete process.env['MEMVAULT_PREVIOUS_MASTER_KEY'];
});

/** True when `needle` occurs in the ArrayBuffer that Node's small Buffer allocations share right now. */
function inSharedPool(needle: Uint8Array): boolean {
  const pool = Buffer.from([0]).buffer;
  return Buffer.from(pool).indexOf(Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength)) !== -1; // views: no copies
}

describe('wiping', () => {
  it('a base64 master key is decoded outside the shared buffer pool, so wiping the result leaves no copy there', () => {
    for (let i = 0; i < 20; i++) {
      const key = randomBytes(32);
      const bytes = new Uint8Array(key);
      key.fill(0); // the test's own copy
      const text = Buffer.from(bytes.buffer).toString('base64');
      const parsed = parseMasterKey(text, 'test');
      expect(parsed).toEqual(bytes);
      expect(parsed.buffer.byteLength).toBe(32);
      parsed.fill(0);
      expect(inSharedPool(bytes)).toBe(false);
    }
  });

  it('a key read from MEMVAULT_MASTER_KEY stays in process.env, and a second start in the process opens the same key', async () => {
    const key = randomBytes(32).toString('base64');
    process.env['MEMVAULT_MASTER_KEY'] = key;
    const envBefore = { ...process.env };
    const first = await createEncryptionFromConfig({ store: new MemoryStore(), config: {}, env: process.env });
    expect(process.env).toEqual(envBefore);
    const again = await keyProviderFromConfig({}, { env: process.env });
    expect(again.keyProvider.keyId).toBe(first.keyProvider.keyId);
    expect(again.source).toBe('MEMVAULT_MASTER_KEY');
    expect(process.env).toEqual(envBefore);
    await first.close();
  });

  it('a previous key from MEMVAULT_PREVIOUS_MASTER_KEY stays too; an env object the host passes is left alone', async () => {
    const current = randomBytes(32).toString('base64');
    const previous = randomBytes(32).toString('base64');
    const hostEnv = { MEMVAULT_MASTER_KEY: current, MEMVAULT_PREVIOUS_MASTER_KEY: previous };
    const fromHostEnv = await createEncryptionFromConfig({ store: new MemoryStore(), config: {}, env: hostEnv });
    expect(hostEnv).toEqual({ MEMVAULT_MASTER_KEY: current, MEMVAULT_PREVIOUS_MASTER_KEY: previous });
    await fromHostEnv.close();
    process.env['MEMVAULT_PREVIOUS_MASTER_KEY'] = previous;
    const opened = await createEncryptionFromConfig({
      store: new MemoryStore(),
      config: { masterKey: current },
      env: process.env,
    });
    expect(opened.previousKeyProviders).toHaveLength(1);
    expect(process.env['MEMVAULT_PREVIOUS_MASTER_KEY']).toBe(previous);
    await opened.close();
  });
});
