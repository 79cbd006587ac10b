import { randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { decodeKeyRecord } from '../../src/crypto/key-provider.js';
import { createKmsKeyProvider, mapKmsError } from '../../src/crypto/kms-key.js';
import { DEPLOYMENT_RECORD_KEY, userKeyKey } from '../../src/crypto/layout.js';
import { rotateKeys } from '../../src/crypto/operations.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caught, expectCode, localProvider } from './helpers.js';
import { decode, encode } from '../kit/text.js';

const KEY_ID = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const kms = mockClient(KMSClient);

/**
 * A stand-in for KMS that behaves like it where memvault depends on it: a ciphertext opens only
 * with the encryption context it was made with. It proves request shapes and error mapping; it is
 * not evidence about AWS itself.
 */
function fakeKms(): { generated: number } {
  const blobs = new Map<string, { plaintext: Uint8Array; context: string }>();
  const stats = { generated: 0 };
  const newBlob = (plaintext: Uint8Array, context: Record<string, string> | undefined) => {
    const blob = new Uint8Array(randomBytes(48));
    blobs.set(Buffer.from(blob).toString('hex'), {
      plaintext: new Uint8Array(plaintext),
      context: JSON.stringify(context ?? {}),
    });
    return blob;
  };
  kms.on(GenerateDataKeyCommand).callsFake((input: { EncryptionContext?: Record<string, string> }) => {
    stats.generated++;
    const plaintext = new Uint8Array(randomBytes(32));
    return { Plaintext: plaintext, CiphertextBlob: newBlob(plaintext, input.EncryptionContext), KeyId: KEY_ID };
  });
  kms.on(EncryptCommand).callsFake((input: { Plaintext: Uint8Array; EncryptionContext?: Record<string, string> }) => ({
    CiphertextBlob: newBlob(input.Plaintext, input.EncryptionContext),
    KeyId: KEY_ID,
  }));
  kms
    .on(DecryptCommand)
    .callsFake((input: { CiphertextBlob: Uint8Array; EncryptionContext?: Record<string, string> }) => {
      const entry = blobs.get(Buffer.from(input.CiphertextBlob).toString('hex'));
      if (!entry || entry.context !== JSON.stringify(input.EncryptionContext ?? {})) {
        throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
      }
      return { Plaintext: new Uint8Array(entry.plaintext), KeyId: KEY_ID };
    });
  return stats;
}

function awsError(name: string, message = `User: arn:aws:iam::111122223333:user/x is not authorized (${name})`): Error {
  return Object.assign(new Error(message), { name });
}

const client = () => new KMSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });

beforeAll(async () => {
  await loadSodium();
});
beforeEach(() => kms.reset());
afterEach(() => kms.reset());

describe('KMS key provider', () => {
  it('creates the deployment secret and user keys with GenerateDataKey AES_256 and the uid encryption context', async () => {
    const stats = fakeKms();
    const store = new MemoryStore();
    const provider = await createEncryptedCodecProvider({
      store,
      keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }),
    });
    expect(provider.mode).toBe('kms');
    const codec = await provider.forUser('alice@example.com');
    expect(stats.generated).toBe(2);
    const calls = kms.commandCalls(GenerateDataKeyCommand).map((c) => c.args[0].input);
    expect(calls).toEqual([
      {
        KeyId: KEY_ID,
        KeySpec: 'AES_256',
        EncryptionContext: {
          'memvault:deployment': expect.any(String) as string,
          'memvault:uid': '_deployment',
          'memvault:key-version': '1',
        },
      },
      {
        KeyId: KEY_ID,
        KeySpec: 'AES_256',
        EncryptionContext: {
          'memvault:deployment': expect.any(String) as string,
          'memvault:uid': codec.uid,
          'memvault:key-version': '1',
        },
      },
    ]);
    const record = decodeKeyRecord((await store.get(userKeyKey(codec.uid)))!.body);
    expect(record).toMatchObject({ kind: 'kms', keyId: KEY_ID, keyVersion: 1 });
    // No request carries the raw user id.
    for (const call of kms.calls()) expect(JSON.stringify(call.args[0].input)).not.toContain('alice@example.com');
  });

  it("a second process opens the keys with Decrypt carrying the same context, and reads the first one's files", async () => {
    fakeKms();
    const store = new MemoryStore();
    const first = await (
      await createEncryptedCodecProvider({
        store,
        keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }),
      })
    ).forUser('bob');
    const sealed = first.seal('/memories/a.md', encode('from process one'));
    const second = await (
      await createEncryptedCodecProvider({
        store,
        keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }),
      })
    ).forUser('bob');
    expect(decode(second.open('/memories/a.md', sealed))).toBe('from process one');
    const decrypts = kms.commandCalls(DecryptCommand).map((c) => c.args[0].input);
    expect(decrypts.map((d) => d.EncryptionContext)).toEqual([
      {
        'memvault:deployment': expect.any(String) as string,
        'memvault:uid': '_deployment',
        'memvault:key-version': '1',
      },
      { 'memvault:deployment': expect.any(String) as string, 'memvault:uid': first.uid, 'memvault:key-version': '1' },
    ]);
    expect(decrypts.every((d) => d.KeyId === KEY_ID)).toBe(true);
  });

  it('a key record copied to another user does not decrypt (context mismatch -> INTEGRITY)', async () => {
    fakeKms();
    const store = new MemoryStore();
    const keyProvider = createKmsKeyProvider({ keyId: KEY_ID, client: client() });
    const provider = await createEncryptedCodecProvider({ store, keyProvider });
    const alice = await provider.forUser('alice');
    await store.put(userKeyKey(provider.uidOf('mallory')), (await store.get(userKeyKey(alice.uid)))!.body);
    const fresh = await createEncryptedCodecProvider({ store, keyProvider });
    expectCode(await caught(() => fresh.forUser('mallory')), 'INTEGRITY');
  });

  it("maps access denied at start-up to a clear KEY_UNAVAILABLE message without AWS's text", async () => {
    fakeKms();
    const store = new MemoryStore();
    await createEncryptedCodecProvider({
      store,
      keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }),
    });
    kms.on(DecryptCommand).rejects(awsError('AccessDeniedException'));
    const error = await caught(() =>
      createEncryptedCodecProvider({ store, keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }) }),
    );
    expectCode(error, 'KEY_UNAVAILABLE');
    expect(error.message).toContain('denied');
    expect(error.message).toContain('kms:Decrypt');
    expect(error.message).not.toContain('111122223333:user');
  });

  it('maps a disabled key during first use of a user', async () => {
    fakeKms();
    const provider = await createEncryptedCodecProvider({
      store: new MemoryStore(),
      keyProvider: createKmsKeyProvider({ keyId: KEY_ID, client: client() }),
    });
    kms.on(GenerateDataKeyCommand).rejects(awsError('DisabledException'));
    const error = await caught(() => provider.forUser('carol'));
    expectCode(error, 'KEY_UNAVAILABLE');
    expect(error.message).toContain('disabled');
  });

  it('maps each KMS error to a stable code and a message that names the fix', () => {
    const cases: Array<[string, string, string]> = [
      ['NotFoundException', 'KEY_UNAVAILABLE', 'does not exist'],
      ['KMSInvalidStateException', 'KEY_UNAVAILABLE', 'state'],
      ['IncorrectKeyException', 'KEY_UNAVAILABLE', 'different KMS key'],
      ['InvalidKeyUsageException', 'KEY_UNAVAILABLE', 'symmetric'],
      ['InvalidCiphertextException', 'INTEGRITY', 'damaged'],
      ['ThrottlingException', 'KEY_UNAVAILABLE', 'try again'],
      ['KMSInternalException', 'KEY_UNAVAILABLE', 'try again'],
      ['CredentialsProviderError', 'KEY_UNAVAILABLE', 'credentials'],
      ['SomethingNew', 'KEY_UNAVAILABLE', 'try again'],
    ];
    for (const [name, code, fragment] of cases) {
      const mapped = mapKmsError(awsError(name), 'Decrypt');
      expect([name, mapped.code]).toEqual([name, code]);
      expect(mapped.message).toContain(fragment);
      expect(mapped.message).not.toContain('111122223333:user');
    }
  });

  it('rotation from a local master key onto KMS wraps with Encrypt and the uid context, then KMS alone opens everything', async () => {
    fakeKms();
    const store = new MemoryStore();
    const local = await localProvider();
    const before = await createEncryptedCodecProvider({ store, keyProvider: local });
    const codec = await before.forUser('dana');
    const sealed = codec.seal('/memories/x.md', encode('rotated'));
    const kmsProvider = createKmsKeyProvider({ keyId: KEY_ID, client: client() });
    const result = await rotateKeys({ store, from: local, to: kmsProvider });
    expect(result).toEqual({ total: 2, rewrapped: 2, skipped: 0 });
    const encrypts = kms.commandCalls(EncryptCommand).map((c) => c.args[0].input.EncryptionContext);
    // The first Encrypt is the pre-flight probe; then the deployment record, then the user.
    expect(encrypts.slice(1)).toEqual([
      {
        'memvault:deployment': expect.any(String) as string,
        'memvault:uid': '_deployment',
        'memvault:key-version': '1',
      },
      { 'memvault:deployment': expect.any(String) as string, 'memvault:uid': codec.uid, 'memvault:key-version': '1' },
    ]);
    expect(decodeKeyRecord((await store.get(DEPLOYMENT_RECORD_KEY))!.body).kind).toBe('kms');
    const after = await (await createEncryptedCodecProvider({ store, keyProvider: kmsProvider })).forUser('dana');
    expect(after.uid).toBe(codec.uid);
    expect(decode(after.open('/memories/x.md', sealed))).toBe('rotated');
  });
});
