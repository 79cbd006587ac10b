/**
 * The encrypted codec provider's start-up and life cycle (the crypto-codec survivors):
 * every start-up refusal in its own words (a lost deployment record, no deployment for a command
 * that only reads, a pinned fingerprint, the wrong master key, a damaged or altered record, a key
 * service that is down), the deployment record re-checked every cache age, a key record re-read once
 * when another instance re-keyed the user, a provider closed while a key loads, and the paths and
 * requests a codec refuses or saves. Messages are spelled out here, not imported: a message is
 * what the operator reads.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createEncryptedCodecProvider, type EncryptedCodecProvider } from '../../src/crypto/codec.js';
import { deriveRecordMacKey } from '../../src/crypto/format.js';
import { encodeKeyRecord, sealKeyRecord, type KeyProvider, type WrapContext } from '../../src/crypto/key-provider.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemvaultError } from '../../src/errors.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';
import { decode, encode } from '../kit/text.js';
import { caught, caughtSync, HookedStore, localProvider, newMasterKey } from './helpers.js';

const DEPLOYMENT = 'k/_deployment';
const CHANGED =
  'Error: The deployment record (k/_deployment) disappeared or changed while this service was running; memvault stops answering rather than serve a stale or a different deployment. ' +
  'Nothing was read or written. Recovery: the operator restores k/_deployment from a backup or an earlier object version.';
const MISSING =
  'The store holds user data but no deployment record (k/_deployment): it was deleted or lost. ' +
  'memvault will not start a new deployment over it, because every user would see an empty memory while their old files stay behind. ' +
  'Recovery: restore k/_deployment from a backup or an earlier object version (README, "Recovering a lost deployment record"); ' +
  "if the data is to be abandoned, move or delete the store's k/ and u/ prefixes first.";

/** Records every request's kind and key. */
class CountingStore extends StoreWrapper {
  readonly ops: Array<{ op: StoreOp; key: string }> = [];
  protected override step(op: StoreOp, key: string): void {
    this.ops.push({ op, key });
  }
  count(op: StoreOp, prefix = ''): number {
    return this.ops.filter((o) => o.op === op && o.key.startsWith(prefix)).length;
  }
}

/** A stand-in KMS provider: wraps by prefixing a tag (enough for the codec; KMS itself is tested elsewhere). */
function fakeKms(keyId = 'arn:aws:kms:eu-west-1:111122223333:key/test', fault?: () => never): KeyProvider {
  const tag = encode(`${keyId}|`);
  return {
    kind: 'kms',
    keyId,
    wrap: (dataKey: Uint8Array, _context: WrapContext) => Promise.resolve(new Uint8Array([...tag, ...dataKey])),
    unwrap: (wrapped: Uint8Array) => {
      if (fault) fault();
      return Promise.resolve(wrapped.slice(tag.length));
    },
  };
}

async function started(
  store: MemoryStore | StoreWrapper,
  keyProvider?: KeyProvider,
  more: Partial<Parameters<typeof createEncryptedCodecProvider>[0]> = {},
) {
  return createEncryptedCodecProvider({ store, keyProvider: keyProvider ?? (await localProvider()), ...more });
}

describe('start-up refusals, each in its own words', () => {
  it('user data without a deployment record: refused, nothing created; with createDeployment false and an empty store: CONFIG, nothing created', async () => {
    const store = new MemoryStore();
    const keyProvider = await localProvider();
    const first = await started(store, keyProvider);
    (await first.forUser('alice')).keyFor('/memories/a');
    await store.put(`u/${first.uidOf('alice')}/f/x`, encode('x'));
    await store.delete(DEPLOYMENT);
    const lost = await caught(() => started(store, keyProvider));
    expect([lost.code, lost.message]).toEqual(['STORE_INCONSISTENT', MISSING]);
    expect(await store.head(DEPLOYMENT)).toBeNull();

    const empty = new MemoryStore();
    const none = await caught(() => started(empty, keyProvider, { createDeployment: false }));
    expect([none.code, none.message]).toEqual([
      'CONFIG',
      'There is no memvault deployment in this store (no k/_deployment and no user data): check the store URL. Nothing was created.',
    ]);
    expect([...empty.keys()]).toEqual([]);
    // createDeployment false opens an existing deployment.
    const existing = new MemoryStore();
    await started(existing, keyProvider);
    expect((await started(existing, keyProvider, { createDeployment: false })).createdDeployment).toBe(false);
  });

  it('a deployment created by another process between our read and our check is opened, not refused', async () => {
    const inner = new MemoryStore();
    const keyProvider = await localProvider();
    const other = await started(inner, keyProvider);
    const alice = other.uidOf('alice');
    await other.forUser('alice');
    // Our first read of the deployment record misses it (the other process had not written it yet).
    let missed = false;
    const store = new (class extends StoreWrapper {
      override async get(key: string) {
        if (key === DEPLOYMENT && !missed) {
          missed = true;
          return null;
        }
        return super.get(key);
      }
    })(inner);
    const ours = await started(store, keyProvider);
    expect(missed).toBe(true);
    expect(ours.createdDeployment).toBe(false);
    expect(ours.deploymentId).toBe(other.deploymentId);
    expect(ours.uidOf('alice')).toBe(alice);
  });

  it('an existing deployment opens with one GET and no LIST', async () => {
    const store = new CountingStore();
    const keyProvider = await localProvider();
    await started(store, keyProvider);
    store.ops.length = 0;
    await started(store, keyProvider);
    expect(store.ops).toEqual([{ op: 'get', key: DEPLOYMENT }]);
  });

  it('a pinned fingerprint that is not the deployment: refused with both fingerprints (the pin trimmed)', async () => {
    const store = new MemoryStore();
    const keyProvider = await localProvider();
    const real = (await started(store, keyProvider)).deploymentFingerprint;
    const pin = `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`;
    const e = await caught(() => started(store, keyProvider, { deploymentFingerprint: ` ${pin}\n` }));
    expect([e.code, e.message]).toEqual([
      'KEY_UNAVAILABLE',
      `The deployment record (k/_deployment) is not the pinned deployment: its fingerprint is ${real}, the configured one (encryption.deploymentFingerprint / MEMVAULT_DEPLOYMENT_FINGERPRINT) is ${pin}. ` +
        'It was replaced (or the configuration names another deployment); memvault will not start on it. Restore the record from a backup or an earlier object version.',
    ]);
  });

  it('the wrong master key: names the key the deployment uses and every configured key, with the hint for its kind', async () => {
    const store = new MemoryStore();
    const right = await localProvider();
    await started(store, right);
    const wrong = await localProvider();
    const previous = await localProvider();
    const e = await caught(() => started(store, wrong, { previousKeyProviders: [previous] }));
    expect([e.code, e.message]).toEqual([
      'KEY_UNAVAILABLE',
      `The configured master key does not match this deployment: its keys are wrapped with the local master key ${right.keyId}, but the configured key is the local master key ${wrong.keyId}, local master key ${previous.keyId}. ` +
        'Set MEMVAULT_MASTER_KEY (or the master key file) to the master key this deployment was created with; while rotating, configure the old key as a previous key.',
    ]);
    expect(e.cause).toBeInstanceOf(Error);
    const alone = await caught(() => started(store, wrong));
    expect(alone.message).toContain(
      `but the configured key is the local master key ${wrong.keyId}. Set MEMVAULT_MASTER_KEY`,
    );

    const kmsStore = new MemoryStore();
    const kms = fakeKms();
    const viaKms = await started(kmsStore, kms);
    expect(viaKms.mode).toBe('kms');
    expect(viaKms.keyId).toBe(kms.keyId);
    const local = await caught(() => started(kmsStore, wrong));
    expect(local.message).toBe(
      `The configured master key does not match this deployment: its keys are wrapped with the AWS KMS key ${kms.keyId}, but the configured key is the local master key ${wrong.keyId}. ` +
        'Configure that KMS key (kms.keyId) and credentials allowed to use it.',
    );
  });

  it('an altered record, a damaged wrap, and a key service that is down: KEY_UNAVAILABLE, each with its reason and cause', async () => {
    const keyProvider = await localProvider();
    const withRecord = async (edit: (record: Record<string, unknown>) => void) => {
      const store = new MemoryStore();
      await started(store, keyProvider);
      const record = JSON.parse(decode((await store.get(DEPLOYMENT))!.body)) as Record<string, unknown>;
      edit(record);
      await store.put(DEPLOYMENT, encode(JSON.stringify(record)));
      return caught(() => started(store, keyProvider));
    };
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const altered = await withRecord((r) => (r.mac = flip(r.mac as string, 3)));
    expect([altered.code, altered.message]).toEqual([
      'KEY_UNAVAILABLE',
      'The deployment record (k/_deployment) opens but fails its integrity check: it was altered. Restore it from a backup or an earlier object version.',
    ]);
    expect((altered.cause as MemvaultError).code).toBe('INTEGRITY');
    const damaged = await withRecord((r) => (r.wrapped = flip(r.wrapped as string, 10)));
    expect([damaged.code, damaged.message]).toEqual([
      'KEY_UNAVAILABLE',
      `The deployment record (k/_deployment) does not open with the local master key ${keyProvider.keyId}, although the key check matches: the record is damaged. Restore it from a backup.`,
    ]);
    expect((damaged.cause as MemvaultError).code).toBe('INTEGRITY');

    const store = new MemoryStore();
    await started(store, fakeKms());
    const down = fakeKms(undefined, () => {
      throw new MemvaultError('KEY_UNAVAILABLE', 'Error: The KMS key could not be used (throttled).');
    });
    const e = await caught(() => started(store, down));
    expect([e.code, e.message]).toEqual([
      'KEY_UNAVAILABLE',
      'The deployment record could not be opened: The KMS key could not be used (throttled).',
    ]);
    expect((e.cause as MemvaultError).message).toBe('Error: The KMS key could not be used (throttled).');
    // Any other failure (the store's) passes through as it is.
    const storeFault = new Error('store down');
    const failing = new (class extends StoreWrapper {
      protected override step(): void {
        throw storeFault;
      }
    })(store);
    await expect(started(failing, fakeKms())).rejects.toBe(storeFault);
  });
});

describe('the deployment record, re-checked every cache age', () => {
  async function running(maxAgeMs = 1000) {
    const store = new CountingStore();
    const keyProvider = await localProvider();
    let now = 0;
    const provider = await started(store, keyProvider, { cache: { maxAgeMs, now: () => now } });
    return { store, keyProvider, provider, advance: (ms: number) => (now += ms) };
  }

  it('within the age no request; at the age one HEAD, shared by the commands that arrive together', async () => {
    const { store, provider, advance } = await running();
    await provider.forUser('alice');
    store.ops.length = 0;
    advance(999);
    await provider.forUser('alice');
    expect(store.count('head', DEPLOYMENT)).toBe(0);
    advance(1);
    await Promise.all(Array.from({ length: 4 }, () => provider.forUser('alice')));
    expect(store.count('head', DEPLOYMENT)).toBe(1);
    // Checked again only one age later.
    await provider.forUser('alice');
    expect(store.count('head', DEPLOYMENT)).toBe(1);
  });

  it('a deleted record stops the running instance (after the age, not before); putting it back heals', async () => {
    const { store, provider, advance } = await running();
    await provider.forUser('alice');
    const saved = (await store.get(DEPLOYMENT))!;
    await store.delete(DEPLOYMENT);
    await provider.forUser('alice');
    advance(1000);
    for (const call of [() => provider.forUser('alice'), () => provider.forUid(provider.uidOf('alice'))]) {
      const e = await caught(call);
      expect([e.code, e.message]).toEqual(['STORE_INCONSISTENT', CHANGED]);
    }
    await store.put(DEPLOYMENT, saved.body);
    expect((await provider.forUser('alice')).uid).toBe(provider.uidOf('alice'));
  });

  it('a rewrite with the same secret (a rotation) is accepted; another deployment, or garbage, stops the instance', async () => {
    const { store, keyProvider, provider, advance } = await running();
    const saved = (await store.get(DEPLOYMENT))!;
    // The same bytes written again: a new ETag, the same deployment.
    await store.put(DEPLOYMENT, saved.body);
    advance(1000);
    await provider.forUser('alice');
    expect(store.count('get', DEPLOYMENT)).toBeGreaterThan(1);
    // Now unchanged: a HEAD and no GET.
    store.ops.length = 0;
    advance(1000);
    await provider.forUser('alice');
    expect(store.count('get', DEPLOYMENT)).toBe(0);

    const other = new MemoryStore();
    await started(other, keyProvider);
    await store.put(DEPLOYMENT, (await other.get(DEPLOYMENT))!.body);
    advance(1000);
    const replaced = await caught(() => provider.forUser('alice'));
    expect([replaced.code, replaced.message]).toEqual(['STORE_INCONSISTENT', CHANGED]);

    await store.put(DEPLOYMENT, encode('not a record'));
    const garbage = await caught(() => provider.forUser('alice'));
    expect([garbage.code, garbage.message]).toEqual(['STORE_INCONSISTENT', CHANGED]);
    expect(garbage.cause).toBeInstanceOf(MemvaultError);
    await store.put(DEPLOYMENT, saved.body);
    expect((await provider.forUser('alice')).uid).toBe(provider.uidOf('alice'));
  });

  it("a record under this deployment's id with another secret (made by a key holder) stops the instance", async () => {
    const { store, keyProvider, provider, advance } = await running();
    const secret = new Uint8Array(randomBytes(32));
    const context = { deploymentId: provider.deploymentId, uid: '_deployment', keyVersion: 1 };
    const forged = sealKeyRecord(
      {
        deployment: provider.deploymentId,
        kind: 'local',
        keyId: keyProvider.keyId,
        keyVersion: 1,
        wrapped: await keyProvider.wrap(secret, context),
      },
      '_deployment',
      deriveRecordMacKey(secret),
    );
    await store.put(DEPLOYMENT, encodeKeyRecord(forged));
    // The record itself is sound: a new instance opens it (as another deployment with the same id).
    expect((await started(store.inner as MemoryStore, keyProvider)).deploymentId).toBe(provider.deploymentId);
    advance(1000);
    const e = await caught(() => provider.forUser('alice'));
    expect([e.code, e.message]).toEqual(['STORE_INCONSISTENT', CHANGED]);
  });
});

describe('a key record re-keyed by another instance', () => {
  async function rekeyed() {
    const store = new HookedStore();
    const masterKey = newMasterKey();
    const vault = await createVault({ store, encryption: { masterKey }, pii: false });
    await vault.run('alice', { command: 'create', path: '/memories/old.md', file_text: 'old' });
    const ours: EncryptedCodecProvider = await createEncryptedCodecProvider({
      store,
      keyProvider: await localProvider(masterKey),
    });
    const cached = await ours.forUser('alice');
    const oldBytes = (await store.get(cached.keyFor('/memories/old.md')))!.body;
    await vault.rekeyUser('alice', { settleMs: 3_600_000, wait: false });
    await vault.run('alice', { command: 'create', path: '/memories/new.md', file_text: 'new' });
    const newBytes = (await store.get(cached.keyFor('/memories/new.md')))!.body;
    let recordReads = 0;
    store.beforeGet = (key) => void (key.startsWith('k/') && key !== DEPLOYMENT && (recordReads += 1));
    return { store, ours, cached, oldBytes, newBytes, reads: () => recordReads, uid: ours.uidOf('alice') };
  }

  it('content of the new version is opened after one re-read of the record; known versions and non-content cost none', async () => {
    const { cached, oldBytes, newBytes, reads } = await rekeyed();
    expect(cached.ensureKeyFor!(oldBytes)).toBeUndefined();
    expect(cached.ensureKeyFor!(encode('not content'))).toBeUndefined();
    expect(reads()).toBe(0);
    expect(caughtSync(() => cached.open('/memories/new.md', newBytes)).code).toBe('INTEGRITY');
    await cached.ensureKeyFor!(newBytes);
    expect(reads()).toBe(1);
    expect(decode(cached.open('/memories/new.md', newBytes))).toBe('new');
    expect(decode(cached.open('/memories/old.md', oldBytes))).toBe('old');
  });

  it('at most one re-read per codec: a version the record does not hold either is refused without more reads', async () => {
    const { ours, newBytes, reads } = await rekeyed();
    const codec = await ours.forUser('alice');
    const bogus = new Uint8Array(newBytes);
    new DataView(bogus.buffer).setUint32(1, 9);
    await codec.ensureKeyFor!(bogus);
    expect(reads()).toBe(1);
    expect(codec.ensureKeyFor!(bogus)).toBeUndefined();
    expect(codec.ensureKeyFor!(newBytes)).toBeUndefined();
    expect(reads()).toBe(1);
    expect(caughtSync(() => codec.open('/memories/new.md', bogus)).code).toBe('INTEGRITY');
  });

  it('reads of one codec that meet the new version together all wait for its one re-read (a directory rename reads several files at once)', async () => {
    const { ours, newBytes, reads } = await rekeyed();
    const codec = await ours.forUser('alice');
    const first = codec.ensureKeyFor!(newBytes);
    const second = codec.ensureKeyFor!(newBytes);
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    await second;
    expect(decode(codec.open('/memories/new.md', newBytes))).toBe('new');
    expect(reads()).toBe(1);
  });

  it('codecs that meet the new version together share one re-read; a codec by uid re-reads too', async () => {
    const { ours, newBytes, reads, uid } = await rekeyed();
    const codecs = await Promise.all([ours.forUser('alice'), ours.forUser('alice'), ours.forUid(uid)]);
    await Promise.all(codecs.map((c) => c.ensureKeyFor!(newBytes) ?? Promise.resolve()));
    expect(reads()).toBe(1);
    for (const c of codecs) expect(decode(c.open('/memories/new.md', newBytes))).toBe('new');
  });

  it('a record deleted meanwhile is NOT_FOUND on the re-read, and no new key is made', async () => {
    const { store, cached, newBytes, uid } = await rekeyed();
    await store.inner.delete(`k/${uid}`);
    const e = await caught(() => cached.ensureKeyFor!(newBytes));
    expect([e.code, e.message]).toEqual(['NOT_FOUND', 'Error: No memory key exists for this user.']);
    expect(await store.inner.head(`k/${uid}`)).toBeNull();
  });
});

describe('closing', () => {
  it('closed while a key loads: the command fails as closed and the key is not cached', async () => {
    const store = new HookedStore();
    const provider = await started(store);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    store.beforeGet = async (key) => {
      if (key.startsWith('k/') && key !== DEPLOYMENT) {
        reached();
        await held;
      }
    };
    const loading = provider.forUser('alice');
    await atGate;
    await provider.close();
    release();
    const e = await caught(() => loading);
    expect([e.code, e.message]).toEqual(['KEY_UNAVAILABLE', 'Error: The memory store is closed.']);
    expect(provider.cachedUsers).toBe(0);
  });

  it('a closed provider makes no store request', async () => {
    const store = new CountingStore();
    const provider = await started(store);
    const uid = provider.uidOf('alice');
    await provider.forUser('alice');
    await provider.close();
    store.ops.length = 0;
    expect((await caught(() => provider.forUid(uid))).message).toBe('Error: The memory store is closed.');
    expect(store.ops).toEqual([]);
  });
});

describe('paths a codec refuses', () => {
  it('anything that does not start with /memories/ is not canonical, however long', async () => {
    const provider = await started(new MemoryStore());
    const codec = await provider.forUser('alice');
    for (const path of ['/memoriesab/c', 'xmemories/notes', 'relative/path/x', '/Memories/a']) {
      const e = caughtSync(() => codec.keyFor(path));
      expect([e.code, e.message], path).toEqual([
        'INVALID_PATH',
        'Error: The path is not a canonical path below /memories.',
      ]);
      expect(caughtSync(() => codec.prefixFor(path)).code, path).toBe('INVALID_PATH');
    }
  });
});

/** The buffers libsodium's memzero wiped while `fn` ran (distinct, each checked to be zero now). */
async function wipedDuring(fn: () => Promise<unknown>): Promise<Uint8Array[]> {
  const sodium = await loadSodium();
  const wiped = new Set<Uint8Array>();
  const spy = vi.spyOn(sodium, 'memzero').mockImplementation((buffer: Uint8Array) => {
    buffer.fill(0);
    wiped.add(buffer);
  });
  try {
    await fn().catch(() => undefined);
  } finally {
    spy.mockRestore();
  }
  for (const buffer of wiped) expect(buffer.every((b) => b === 0)).toBe(true);
  return [...wiped];
}

describe('key material is wiped once used', () => {
  it('close wipes the deployment secret and the record MAC key', async () => {
    const provider = await started(new MemoryStore());
    const wiped = await wipedDuring(() => provider.close());
    expect(wiped.filter((b) => b.byteLength === 32)).toHaveLength(2);
  });

  it('loading a key record wipes every unwrapped secret, the older versions too', async () => {
    const store = new MemoryStore();
    const masterKey = newMasterKey();
    const vault = await createVault({ store, encryption: { masterKey }, pii: false });
    await vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'a' });
    await vault.rekeyUser('alice', { settleMs: 3_600_000, wait: false });
    const fresh = await createEncryptedCodecProvider({ store, keyProvider: await localProvider(masterKey) });
    const wiped = await wipedDuring(() => fresh.forUser('alice'));
    expect(wiped.filter((b) => b.byteLength === 32).length).toBeGreaterThanOrEqual(2);
  });

  it('a refused pin and a re-checked rotation wipe the secret they opened; a key loaded after close is wiped whole', async () => {
    const store = new CountingStore();
    const keyProvider = await localProvider();
    let now = 0;
    const provider = await started(store, keyProvider, { cache: { maxAgeMs: 10, now: () => now } });
    const pinned = await wipedDuring(() => started(store, keyProvider, { deploymentFingerprint: 'not-the-pin' }));
    expect(pinned.filter((b) => b.byteLength === 32).length).toBeGreaterThanOrEqual(1);
    await store.put(DEPLOYMENT, (await store.get(DEPLOYMENT))!.body);
    now += 10;
    const rechecked = await wipedDuring(() => provider.forUser('alice'));
    expect(rechecked.filter((b) => b.byteLength === 32).length).toBeGreaterThanOrEqual(1);

    const gated = new HookedStore();
    const closing = await started(gated);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    gated.beforeGet = async (key) => {
      if (key.startsWith('k/') && key !== DEPLOYMENT) {
        reached();
        await held;
      }
    };
    const loading = closing.forUser('bob');
    await atGate;
    await closing.close();
    // The secret and the five derived keys of the version loaded (content, name, SIV, commitment, audit pseudonym).
    const wiped = await wipedDuring(async () => {
      release();
      await loading;
    });
    expect(wiped.length).toBeGreaterThanOrEqual(6);
  });
});
