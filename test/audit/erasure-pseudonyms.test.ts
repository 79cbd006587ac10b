/**
 * Erasure shreds the audit pseudonyms. Audit uids and path ids are keyed by the
 * user's own key, so after `forget` nothing that remains (audit log, store, master key, deployment
 * secret) links the user's records to their id or to a guessed path; a returning id starts a new
 * history; the chain still verifies.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditPseudonymsFromKey, auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { computePathId, computeUid, keyedHash } from '../../src/crypto/format.js';
import { userKeyKey } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { readDeployment } from '../../src/crypto/wrapped-secret.js';
import { createVault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { plainUid } from '../../src/vault/plain-codec.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const USER = 'erin.erasure@example.com';
const OTHER = 'oscar.other@example.com';
const PATHS = ['/memories/diary/health.md', '/memories/diary/health-2.md', '/memories/diary', '/memories'];

type Rec = Record<string, unknown>;
const recordsOf = (file: string): Rec[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);

async function session(vault: Awaited<ReturnType<typeof createVault>>, user: string): Promise<void> {
  const steps: Record<string, unknown>[] = [
    { command: 'create', path: '/memories/diary/health.md', file_text: 'blood pressure 120/80\n' },
    { command: 'str_replace', path: '/memories/diary/health.md', old_str: '120/80', new_str: '125/85' },
    { command: 'view', path: '/memories/diary/health.md' },
    { command: 'view', path: '/memories/diary' },
    { command: 'rename', old_path: '/memories/diary/health.md', new_path: '/memories/diary/health-2.md' },
    { command: 'view', path: '/memories' },
  ];
  for (const step of steps) expect((await vault.run(user, step)).isError, JSON.stringify(step)).toBe(false);
}

describe('erasure and audit pseudonyms', () => {
  it('after forget, nothing that remains links the records to the id or a guessed path; a returning id starts anew; verify passes', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const file = join(t.dir, 'audit.jsonl');
    const masterKey = new Uint8Array(randomBytes(32));
    const store = new MemoryStore();
    const vault = await createVault({
      store,
      encryption: { masterKey: Buffer.from(masterKey).toString('base64') },
      audit: { file },
    });
    await session(vault, USER);
    await session(vault, OTHER);
    const exported = await vault.exportUser(USER);
    exported.stream.resume();
    await exported.done;

    // With the user's key (before the erasure) the records can be found: the test below is not vacuous.
    const keyProvider = await createLocalKeyProvider(masterKey);
    const provider = await createEncryptedCodecProvider({ store, keyProvider, createDeployment: false });
    const storeUid = provider.uidOf(USER);
    const before = auditPseudonymsOf(await provider.forUser(USER), provider);
    expect(before.uid).not.toBe(storeUid);
    const mine = recordsOf(file).filter((r) => r['uid'] === before.uid);
    expect(mine.filter((r) => r['type'] === 'command')).toHaveLength(6);
    expect(mine.some((r) => r['type'] === 'export')).toBe(true);
    expect(mine.some((r) => r['path'] === `#${before.pathId('/memories/diary/health.md')}`)).toBe(true);
    expect(mine.some((r) => r['newPath'] === `#${before.pathId('/memories/diary/health-2.md')}`)).toBe(true);
    const otherUid = auditPseudonymsOf(await provider.forUser(OTHER), provider).uid;
    expect(otherUid).not.toBe(before.uid);
    provider.evict(storeUid);

    const erased = await vault.forgetUser(USER);
    expect(erased.keyDeleted).toBe(true);
    expect(await store.head(userKeyKey(storeUid))).toBeNull();
    const erase = recordsOf(file).find((r) => r['type'] === 'erase')!;
    // The erase record closes the pseudonym's history (same audit uid), and says it worked.
    expect(erase).toMatchObject({ uid: before.uid, outcome: 'ok' });

    // Everything that remains: the audit log, the store, the master key and the deployment secret.
    const deployment = (await readDeployment(store, [keyProvider], () => {}))!.secret;
    const log = readFileSync(file, 'utf8');
    const records = recordsOf(file);
    const candidateUids = new Set<string>([
      storeUid,
      computeUid(deployment, USER),
      plainUid(USER),
      ...[
        deployment,
        masterKey,
        keyedHash(deployment, 'memvault/v1/audit-pseudonym-key'),
        keyedHash(masterKey, 'memvault/v1/audit-pseudonym-key'),
      ].map((k) => auditPseudonymsFromKey(k).uid),
      createHmac('sha256', deployment).update(USER).digest('base64url').slice(0, 32),
    ]);
    const candidatePaths = new Set<string>();
    for (const path of PATHS) {
      for (const uid of candidateUids) candidatePaths.add(`#${computePathId(deployment, uid, path)}`);
      for (const k of [deployment, masterKey, keyedHash(deployment, 'memvault/v1/audit-pseudonym-key')])
        candidatePaths.add(`#${auditPseudonymsFromKey(k).pathId(path)}`);
    }
    for (const record of records) {
      expect(candidateUids.has(String(record['uid'])), JSON.stringify(record)).toBe(false);
      expect(candidatePaths.has(String(record['path'])), JSON.stringify(record)).toBe(false);
      expect(candidatePaths.has(String(record['newPath'])), JSON.stringify(record)).toBe(false);
    }
    for (const value of [USER, storeUid, 'health', 'diary', 'blood']) expect(log).not.toContain(value);

    // A returning id: a new key, a new audit uid, no record of the old history under it.
    await session(vault, USER);
    const provider2 = await createEncryptedCodecProvider({ store, keyProvider, createDeployment: false });
    const after = auditPseudonymsOf(await provider2.forUser(USER), provider2);
    expect(after.uid).not.toBe(before.uid);
    const all = recordsOf(file);
    const newHistory = all.filter((r) => r['uid'] === after.uid);
    expect(newHistory).toHaveLength(6);
    expect(all.findIndex((r) => r['uid'] === after.uid)).toBeGreaterThan(
      all.indexOf(all.find((r) => r['type'] === 'erase')!),
    );
    expect(all.filter((r) => r['uid'] === before.uid).length).toBe(mine.length + 1); // nothing new under the old uid
    expect(after.pathId('/memories/diary/health.md')).not.toBe(before.pathId('/memories/diary/health.md'));

    await vault.close();
    // The chain (hashes, MACs) still verifies after the erasure.
    const report = await verifyChains(await collectFileChains([file]), { macKey: provider2.auditMacKey() });
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    await provider.close();
    await provider2.close();
  });

  it('an erase of a user without a key names no one; the same id forgotten twice leaves two records', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const file = join(t.dir, 'audit.jsonl');
    const store = new MemoryStore();
    const vault = await createVault({
      store,
      encryption: { masterKey: randomBytes(32).toString('base64') },
      audit: { file },
    });
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'x' });
    await vault.forgetUser(USER);
    await vault.forgetUser(USER);
    await vault.close();
    const erases = recordsOf(file).filter((r) => r['type'] === 'erase');
    expect(erases).toHaveLength(2);
    expect(typeof erases[0]!['uid']).toBe('string');
    expect(erases[1]!['uid']).toBeUndefined();
  });
});
