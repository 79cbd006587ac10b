/**
 * A key load that reads a user's record just before an erasure deletes it, and writes the record's
 * key state mark (a record ahead of its marks) only after the erasure listed and deleted the user's
 * objects: the mark must not outlive the erasure. A mark left behind would be a genuine witness of
 * the erased key under a user with no record, and the user id could never start afresh.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { keyStateMarkPrefix, parseKeyStateMark } from '../../src/crypto/key-state.js';
import { userPrefix } from '../../src/crypto/layout.js';
import { forgetUid } from '../../src/crypto/operations.js';
import { rekeyUid } from '../../src/crypto/rekey.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { deriveRecordMacKey } from '../../src/crypto/format.js';
import { readDeployment } from '../../src/crypto/wrapped-secret.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll } from '../../src/store/port.js';
import { HookedStore, localProvider } from './helpers.js';

beforeAll(async () => {
  await loadSodium();
});

describe('a key state mark written by a load an erasure overtook', () => {
  it('is taken away: nothing of the erased key is left, and the user id starts afresh', async () => {
    const inner = new MemoryStore();
    const view = new HookedStore(inner);
    const local = await localProvider();
    const first = await createEncryptedCodecProvider({ store: inner, keyProvider: local });
    const uid = first.uidOf('alice');
    const sealed = (await first.forUser('alice')).seal('/memories/a.md', new TextEncoder().encode('erased'));
    await first.close();
    // A re-keyed user whose record is ahead of its marks (a crash between the record and its mark).
    await rekeyUid({ store: inner, primary: local, providers: [local], uid, wait: false });
    const deployment = (await readDeployment(inner, [local], () => {}))!;
    const binding = { deploymentId: deployment.record.deployment, macKey: deriveRecordMacKey(deployment.secret) };
    for await (const o of listAll(inner, keyStateMarkPrefix(uid))) await inner.delete(o.key);

    // Another instance loads the key; just before its mark goes out, the user is forgotten.
    view.beforePut = async (key) => {
      if (key.startsWith(keyStateMarkPrefix(uid)) && view.beforePut) {
        view.beforePut = undefined;
        await forgetUid({ store: inner, uid });
      }
    };
    const loading = await createEncryptedCodecProvider({ store: view, keyProvider: local });
    await loading.forUser('alice').catch(() => undefined);
    await loading.close();

    // No mark of the erased key's state (version 2) is left.
    const left: string[] = [];
    for await (const o of listAll(inner, userPrefix(uid))) left.push(o.key);
    expect(
      left.map((key) => parseKeyStateMark(uid, key, binding)).filter((s) => s !== null && s.keyVersion > 1),
    ).toEqual([]);
    // The user id starts afresh, and the erased key's content does not open.
    const fresh = await createEncryptedCodecProvider({ store: inner, keyProvider: local });
    const codec = await fresh.forUser('alice');
    expect(() => codec.open('/memories/a.md', sealed)).toThrow();
    await fresh.close();
  });

  it("a re-key's new version erased right after its record: its mark is taken away too", async () => {
    const inner = new MemoryStore();
    const view = new HookedStore(inner);
    const local = await localProvider();
    const first = await createEncryptedCodecProvider({ store: inner, keyProvider: local });
    const uid = first.uidOf('alice');
    await first.forUser('alice');
    await first.close();
    view.beforePut = async (key) => {
      if (key.startsWith(keyStateMarkPrefix(uid)) && view.beforePut) {
        view.beforePut = undefined;
        await forgetUid({ store: inner, uid });
      }
    };
    const rekeyed = await rekeyUid({ store: view, primary: local, providers: [local], uid, wait: false }).catch(
      (e: unknown) => e,
    );
    expect(rekeyed).toMatchObject({ code: 'NOT_FOUND' });
    const left: string[] = [];
    for await (const o of listAll(inner, userPrefix(uid))) left.push(o.key);
    expect(left).toEqual([]);
    const fresh = await createEncryptedCodecProvider({ store: inner, keyProvider: local });
    await expect(fresh.forUser('alice')).resolves.toBeDefined();
    await fresh.close();
  });
});
