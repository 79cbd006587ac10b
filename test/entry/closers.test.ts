/**
 * createVault is built from resolvers with one list of closers (src/entry/closers.ts): a
 * failure part way through start-up closes what was opened before it, last first, and vault.close()
 * closes everything in reverse order of opening.
 */
import { describe, expect, it } from 'vitest';
import { Closers } from '../../src/entry/closers.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import type { CodecProvider } from '../../src/crypto/user-codec.js';
import { tempDir } from '../kit/temp.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A store and a codec that write down when they are closed. */
function recorded(log: string[]): { store: MemoryStore; codec: CodecProvider } {
  const store = new MemoryStore();
  const closeStore = store.close.bind(store);
  store.close = async () => {
    log.push('store');
    await closeStore();
  };
  const plain = createPlainCodecProvider();
  const codec: CodecProvider = Object.assign(Object.create(plain) as CodecProvider, {
    close: async () => {
      log.push('codec');
      await plain.close();
    },
  });
  return { store, codec };
}

describe('Closers', () => {
  it('closes in reverse order, every one even when one throws, then throws the first failure; a second call closes nothing again', async () => {
    const log: string[] = [];
    const closers = new Closers();
    closers.add('a', (r) => void log.push(r));
    closers.add('b', () => {
      log.push('b');
      throw new Error('b failed');
    });
    closers.add('c', async (r) => void log.push(r));
    await expect(closers.closeAll()).rejects.toThrow('b failed');
    expect(log).toEqual(['c', 'b', 'a']);
    await expect(closers.closeAll()).rejects.toThrow('b failed');
    expect(log).toEqual(['c', 'b', 'a']);
  });

  it('opening: a failure closes what was opened before it and rethrows the failure itself, not a close error', async () => {
    const log: string[] = [];
    const closers = new Closers();
    const failure = new Error('step 3 failed');
    await expect(
      closers.opening(async (c) => {
        c.add(1, () => void log.push('first'));
        c.add(2, () => {
          log.push('second');
          throw new Error('close failed');
        });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(log).toEqual(['second', 'first']);
  });
});

/** A vault with an audit log whose close runs `onAuditClose` after the real close. */
async function auditedVault(dir: string, log: string[], onAuditClose: () => void) {
  const { store, codec } = recorded(log);
  const vault = await createVault({ store, codec, audit: { file: join(dir, 'audit.jsonl') } });
  const closeAudit = vault.audit!.close.bind(vault.audit);
  vault.audit!.close = async () => {
    await closeAudit();
    onAuditClose();
  };
  return vault;
}

describe('createVault start-up and close', () => {
  it('an audit logger that cannot open closes the codec, then the store, and createVault rejects with its error', async () => {
    const log: string[] = [];
    const { store, codec } = recorded(log);
    const { dir, cleanup } = tempDir();
    try {
      // A regular file where the audit directory would be: the writer cannot open its file.
      writeFileSync(join(dir, 'blocker'), '');
      await expect(
        createVault({ store, codec, audit: { file: join(dir, 'blocker', 'audit.jsonl') } }),
      ).rejects.toThrow();
      expect(log).toEqual(['codec', 'store']);
    } finally {
      cleanup();
    }
  });

  it('vault.close() closes audit, codec and store, last opened first', async () => {
    const log: string[] = [];
    const { dir, cleanup } = tempDir();
    try {
      const vault = await auditedVault(dir, log, () => void log.push('audit'));
      await vault.close();
      expect(log).toEqual(['audit', 'codec', 'store']);
    } finally {
      cleanup();
    }
  });

  it('vault.close() still closes (and wipes) the codec and the store when closing the audit log fails, then reports that failure', async () => {
    const log: string[] = [];
    const { dir, cleanup } = tempDir();
    try {
      const vault = await auditedVault(dir, log, () => {
        throw new Error('audit flush failed');
      });
      await expect(vault.close()).rejects.toThrow('audit flush failed');
      expect(log).toEqual(['codec', 'store']);
    } finally {
      cleanup();
    }
  });
});
