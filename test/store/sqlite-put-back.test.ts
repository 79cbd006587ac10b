/**
 * On the SQLite store a write is one transaction (src/vault/files/capabilities.ts, inOneTransaction):
 * a write that fails rolls every step back, except one that met a put-back and put the newest kept
 * version back (PutBackRepairedError): that repair stays. Another INTEGRITY failure, or a put-back
 * whose repair could not be made, changes nothing. Faults are injected by a wrapper that passes the
 * real SqliteStore's transactions through.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { integrityError } from '../../src/crypto/format-base.js';
import { listAll, type ObjectStore, type PutOptions } from '../../src/store/port.js';
import { isKeptVersionKey, sqliteStores, StoreWrapper, type StoreOp } from '../kit/stores.js';

/** A request the test fails: the error to throw, or undefined to let it through. */
type Fault = (op: StoreOp, key: string, body?: Uint8Array) => Error | undefined;

/** The SQLite store with its transactions, and a fault the test arms. */
class FaultingStore extends StoreWrapper {
  fault: Fault | undefined;

  constructor(inner: ObjectStore) {
    super(inner, { deleteExactly: true, transactions: true });
  }

  protected override step(op: StoreOp, key: string): void {
    const error = op === 'put' ? undefined : this.fault?.(op, key); // a PUT's is asked with its body (below)
    if (error) throw error;
  }

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const error = this.fault?.('put', key, body);
    if (error) throw error;
    return super.put(key, body, options);
  }
}

const stores = sqliteStores('put-back');
const masterKey = randomBytes(32).toString('base64');
const opened: Vault[] = [];
afterAll(async () => {
  for (const vault of opened) await vault.close();
  await stores.cleanup();
});

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Every object of the store, byte for byte: key, ETag, body and metadata. */
async function snapshot(store: ObjectStore): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for await (const info of listAll(store, '')) {
    const object = (await store.get(info.key))!;
    all.set(info.key, JSON.stringify([object.etag, hex(object.body), object.metadata]));
  }
  return all;
}

/** A vault with history on over a fresh SQLite store, and /memories/k.md edited once: its two stored versions. */
async function editedFile() {
  const store = new FaultingStore(await stores.make());
  const vault = await createVault({ store, encryption: { masterKey }, history: true });
  opened.push(vault);
  const run = async (input: Record<string, unknown>) => vault.run('u', input);
  expect((await run({ command: 'create', path: '/memories/k.md', file_text: 'version 1\n' })).isError).toBe(false);
  const keys = [...(await snapshot(store.inner)).keys()].filter((k) => k.includes('/f/'));
  expect(keys).toHaveLength(1);
  const key = keys[0]!;
  const v1 = (await store.inner.get(key))!;
  const edit = { command: 'str_replace', path: '/memories/k.md', old_str: 'version 1', new_str: 'version 2' };
  expect((await run(edit)).isError).toBe(false);
  const v2 = (await store.inner.get(key))!;
  return { store, vault, run, key, v1, v2 };
}

const putBackEdit = { command: 'str_replace', path: '/memories/k.md', old_str: 'version 1', new_str: 'version X' };

describe('a failed write on the SQLite store', () => {
  it('that met a put-back keeps its repair: the newest kept version is current again', async () => {
    const { store, vault, run, key, v1, v2 } = await editedFile();
    await store.inner.put(key, v1.body, { metadata: v1.metadata }); // v1 put back by something else
    const edited = await run(putBackEdit);
    expect(edited.isError).toBe(true);
    expect(JSON.stringify(edited.content)).toContain('older version of the file than its history records');
    const now = (await store.inner.get(key))!;
    expect([hex(now.body), now.metadata]).toEqual([hex(v2.body), v2.metadata]);
    expect(text((await (await vault.files('u')).read('/memories/k.md'))!.data)).toBe('version 2\n');
  });

  it('that met a put-back it could not repair changes nothing, and says the same', async () => {
    const { store, run, key, v1, v2 } = await editedFile();
    await store.inner.put(key, v1.body, { metadata: v1.metadata });
    const before = await snapshot(store.inner);
    // The repair's PUT (the newest kept version's bytes, at the file's key) fails.
    store.fault = (op, k, body) =>
      op === 'put' && k === key && body && hex(body) === hex(v2.body) ? new Error('injected') : undefined;
    const edited = await run(putBackEdit);
    store.fault = undefined;
    expect(edited.isError).toBe(true);
    expect(JSON.stringify(edited.content)).toContain('older version of the file than its history records');
    expect(await snapshot(store.inner)).toEqual(before);
  });

  it('with another INTEGRITY error after its steps landed changes nothing', async () => {
    const { store, run } = await editedFile();
    const before = await snapshot(store.inner);
    // A create's name check runs after its file landed, beside its kept version: what it looks at
    // (a HEAD or a LIST) meets an object that does not open.
    let landed = 0;
    store.fault = (op, k) => {
      if (op === 'put' && !isKeptVersionKey(k)) landed += 1;
      return (op === 'head' || op === 'list') && landed > 0 ? integrityError() : undefined;
    };
    const created = await run({ command: 'create', path: '/memories/d/new.md', file_text: 'new\n' });
    store.fault = undefined;
    expect(landed).toBe(1);
    expect(created.isError).toBe(true);
    expect(JSON.stringify(created.content)).toContain('could not be decrypted');
    expect(await snapshot(store.inner)).toEqual(before);
  });
});
