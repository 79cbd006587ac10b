import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import {
  computeDeploymentFingerprint,
  computePathId,
  computeUid,
  deriveLocalMasterKeys,
  deriveRecordMacKey,
  deriveUserKeys,
  encryptSegment,
  localUnwrap,
  localWrapWithNonce,
  openContent,
  sealContentWithNonce,
} from '../../src/crypto/format.js';
import { decodeKeyRecord, encodeKeyRecord, sealKeyRecord } from '../../src/crypto/key-provider.js';
import { DEPLOYMENT_RECORD_KEY, userKeyKey } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { loadSodium, readySodium } from '../../src/crypto/sodium.js';
import { canonicalizePath } from '../../src/pipeline/path-guard.js';
import { MemoryStore } from '../../src/store/memory.js';
import { caught, caughtSync, expectCode } from './helpers.js';

/**
 * The ```vector block of docs/format.md, as name -> value. `(json)` values are JSON string
 * literals (so the document stays ASCII and no editor can normalise an NFD example away).
 */
function readVector(): Record<string, string> {
  const doc = readFileSync(new URL('../../docs/format.md', import.meta.url), 'utf8');
  const block = /```vector\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/format.md has no ```vector block');
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const match = /^([a-z0-9_]+)(?: \((text|utf8|json)\))?:\s+(.*)$/.exec(line.trim());
    if (match) fields[match[1]!] = match[2] === 'json' ? (JSON.parse(match[3]!) as string) : match[3]!;
  }
  return fields;
}

const vector = readVector();
const field = (name: string): string => {
  const value = vector[name];
  if (value === undefined) throw new Error(`vector field ${name} missing`);
  return value;
};
const hex = (name: string) => new Uint8Array(Buffer.from(field(name), 'hex'));
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const utf8 = (s: string) => new TextEncoder().encode(s);
const plaintext = () => utf8(field('plaintext').replace(/\\n/g, '\n'));
const deploymentId = () => field('deployment_id');

beforeAll(async () => {
  await loadSodium();
});

/** A store holding the vector's deployment record and user record(s), and the codec provider over it. */
async function vectorStore(userRecord = field('user_record'), at = field('uid')) {
  const store = new MemoryStore();
  await store.put(DEPLOYMENT_RECORD_KEY, utf8(field('deployment_record')));
  await store.put(userKeyKey(at), utf8(userRecord));
  const provider = await createEncryptedCodecProvider({
    store,
    keyProvider: await createLocalKeyProvider(hex('master_key')),
  });
  return { store, provider };
}

describe('docs/format.md test vector', () => {
  it('has every field', () => {
    expect(Object.keys(vector).sort()).toEqual(
      [
        'master_key',
        'deployment_secret',
        'data_key',
        'data_key_v2',
        'wrap_nonce',
        'content_nonce',
        'deployment_id',
        'user_id',
        'path',
        'plaintext',
        'key_version',
        'key_id',
        'wrap_key',
        'uid',
        'content_key',
        'name_key',
        'name_siv_key',
        'commitment',
        'record_mac_key',
        'deployment_fingerprint',
        'wrapped_deployment',
        'wrapped_data_key',
        'deployment_record',
        'user_record',
        'segment_notes',
        'segment_todo',
        'object_key',
        'content_object',
        'path_id',
        'user_id_nonascii',
        'uid_nonascii',
        'user_id_nfd',
        'uid_nfd',
        'path_nfd_input',
        'path_nfd_canonical',
        'object_key_nfd',
        'path_id_nfd',
        'path_long',
        'object_key_long',
        'path_deep',
        'object_key_deep',
        'commitment_v2',
        'wrapped_data_key_v2',
        'user_record_v2',
        'user_record_v2_dropped',
        'content_object_v2',
        'reject_content_v1',
        'reject_content_tag',
        'reject_deployment_id',
        'reject_record_format1',
        'reject_record_base64url',
        'reject_record_renamed_field',
        'reject_record_mac',
        'reject_record_v2_no_root',
        'reject_record_v2_readfrom',
      ].sort(),
    );
  });

  it('derives the master-key values, uid, subkeys, record MAC key and deployment fingerprint', () => {
    const master = deriveLocalMasterKeys(hex('master_key'));
    expect(master.keyId).toBe(field('key_id'));
    expect(toHex(master.wrapKey)).toBe(field('wrap_key'));
    expect(computeUid(hex('deployment_secret'), field('user_id'))).toBe(field('uid'));
    const keys = deriveUserKeys(hex('data_key'), Number(field('key_version')));
    expect(toHex(keys.contentKey)).toBe(field('content_key'));
    expect(toHex(keys.nameKey)).toBe(field('name_key'));
    expect(toHex(keys.nameSivKey)).toBe(field('name_siv_key'));
    expect(toHex(keys.commitment)).toBe(field('commitment'));
    expect(toHex(deriveRecordMacKey(hex('deployment_secret')))).toBe(field('record_mac_key'));
    expect(computeDeploymentFingerprint(hex('deployment_secret'), deploymentId())).toBe(
      field('deployment_fingerprint'),
    );
  });

  it('wraps the deployment secret and the data keys (versions 1 and 2), bound to the deployment id', () => {
    const { wrapKey } = deriveLocalMasterKeys(hex('master_key'));
    const d = deploymentId();
    expect(toHex(localWrapWithNonce(wrapKey, hex('deployment_secret'), d, '_deployment', 1, hex('wrap_nonce')))).toBe(
      field('wrapped_deployment'),
    );
    expect(toHex(localWrapWithNonce(wrapKey, hex('data_key'), d, field('uid'), 1, hex('wrap_nonce')))).toBe(
      field('wrapped_data_key'),
    );
    expect(toHex(localWrapWithNonce(wrapKey, hex('data_key_v2'), d, field('uid'), 2, hex('wrap_nonce')))).toBe(
      field('wrapped_data_key_v2'),
    );
    expect(toHex(localUnwrap(wrapKey, hex('wrapped_data_key'), d, field('uid'), 1)!)).toBe(field('data_key'));
    expect(localUnwrap(wrapKey, hex('wrapped_data_key'), d, field('uid'), 2)).toBeNull();
    expect(localUnwrap(wrapKey, hex('wrapped_data_key'), field('reject_deployment_id'), field('uid'), 1)).toBeNull();
  });

  it('pins the key-record JSON byte for byte: field names, order, standard base64 of wrapped, base64url MAC', () => {
    const macKey = hex('record_mac_key');
    const base = { deployment: deploymentId(), kind: 'local' as const, keyId: field('key_id'), keyVersion: 1 };
    const encode = (wrapped: string, uid: string, keyVersion = 1) =>
      new TextDecoder().decode(
        encodeKeyRecord(sealKeyRecord({ ...base, keyVersion, wrapped: hex(wrapped) }, uid, macKey)),
      );
    expect(encode('wrapped_deployment', '_deployment')).toBe(field('deployment_record'));
    expect(encode('wrapped_data_key', field('uid'))).toBe(field('user_record'));
    // Versioned records (after a re-key): readFrom and the older versions, version 1 first (the name root).
    const encodeV2 = (readFrom: number) =>
      new TextDecoder().decode(
        encodeKeyRecord(
          sealKeyRecord(
            {
              ...base,
              keyVersion: 2,
              wrapped: hex('wrapped_data_key_v2'),
              readFrom,
              older: [{ keyVersion: 1, wrapped: hex('wrapped_data_key') }],
            },
            field('uid'),
            macKey,
          ),
        ),
      );
    expect(encodeV2(1)).toBe(field('user_record_v2'));
    expect(encodeV2(2)).toBe(field('user_record_v2_dropped'));
    // The versioned MAC, computed by hand from docs/format.md: the single-version message, then
    // u32be(readFrom) | u32be(count) | (u32be(version) | lp(wrapped)) per older version.
    const lp = (b: Uint8Array) => Buffer.concat([u32(b.byteLength), b]);
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const message = (readFrom: number) =>
      Buffer.concat([
        lp(utf8('memvault/v2/key-record')),
        lp(utf8(deploymentId())),
        lp(utf8(field('uid'))),
        lp(utf8('local')),
        lp(utf8(field('key_id'))),
        u32(2),
        lp(hex('wrapped_data_key_v2')),
        u32(readFrom),
        u32(1),
        u32(1),
        lp(hex('wrapped_data_key')),
      ]);
    for (const [name, readFrom] of [
      ['user_record_v2', 1],
      ['user_record_v2_dropped', 2],
    ] as const) {
      const mac = Buffer.from(readySodium().crypto_generichash(32, message(readFrom), macKey)).toString('base64url');
      expect((JSON.parse(field(name)) as { mac: string }).mac).toBe(mac);
    }
    // The vector's wrapped values use the characters where base64 and base64url differ, and padding.
    for (const name of ['deployment_record', 'user_record']) {
      const wrapped = (JSON.parse(field(name)) as { wrapped: string }).wrapped;
      expect(wrapped).toMatch(/[+/]/);
      expect(wrapped).toMatch(/=$/);
    }
    const decoded = decodeKeyRecord(utf8(field('user_record')));
    expect(decoded).toMatchObject({ format: 2, ...base });
    expect(toHex(decoded.wrapped)).toBe(field('wrapped_data_key'));
  });

  it('encrypts the names and seals the content', () => {
    const keys = deriveUserKeys(hex('data_key'), Number(field('key_version')));
    expect(encryptSegment(keys, '/memories', 'notes')).toBe(field('segment_notes'));
    expect(encryptSegment(keys, '/memories/notes', 'todo.md')).toBe(field('segment_todo'));
    const sealed = sealContentWithNonce(
      keys,
      deploymentId(),
      field('uid'),
      field('path'),
      plaintext(),
      hex('content_nonce'),
    );
    expect(toHex(sealed)).toBe(field('content_object'));
    expect(openContent(keys, deploymentId(), field('uid'), field('path'), hex('content_object'))).toEqual(plaintext());
  });

  it('user ids are hashed as given: non-ASCII ids, and an NFD id is another user than its NFC form', async () => {
    const secret = hex('deployment_secret');
    expect(field('user_id_nfd')).not.toBe(field('user_id_nonascii'));
    expect(field('user_id_nfd').normalize('NFC')).toBe(field('user_id_nonascii'));
    expect(computeUid(secret, field('user_id_nonascii'))).toBe(field('uid_nonascii'));
    expect(computeUid(secret, field('user_id_nfd'))).toBe(field('uid_nfd'));
    expect(field('uid_nfd')).not.toBe(field('uid_nonascii'));
    const { provider } = await vectorStore();
    expect(provider.uidOf(field('user_id_nonascii'))).toBe(field('uid_nonascii'));
    expect(provider.uidOf(field('user_id_nfd'))).toBe(field('uid_nfd'));
  });

  it('object keys and audit path ids: an NFD input path, a 255-byte segment, a deep path', async () => {
    const { provider } = await vectorStore();
    const codec = await provider.forUser(field('user_id'));
    expect(canonicalizePath(field('path_nfd_input'))).toBe(field('path_nfd_canonical'));
    expect(field('path_nfd_input')).not.toBe(field('path_nfd_canonical'));
    expect(Buffer.byteLength(field('path_long').slice('/memories/'.length), 'utf8')).toBe(255);
    expect(field('path_deep').split('/').length).toBeGreaterThan(20);
    for (const [path, key] of [
      [field('path'), 'object_key'],
      [field('path_nfd_canonical'), 'object_key_nfd'],
      [field('path_long'), 'object_key_long'],
      [field('path_deep'), 'object_key_deep'],
    ] as const) {
      expect(codec.keyFor(path)).toBe(field(key));
      expect(codec.pathFor(field(key))).toBe(path);
    }
    expect(computePathId(hex('deployment_secret'), field('uid'), field('path'))).toBe(field('path_id'));
    expect(provider.pathId(field('uid'), field('path'))).toBe(field('path_id'));
    expect(provider.pathId(field('uid'), field('path_nfd_canonical'))).toBe(field('path_id_nfd'));
  });

  it('key version 2: its commitment and object; a reader picks the keys by the record, and v1 keys refuse a v2 object', async () => {
    const keys2 = deriveUserKeys(hex('data_key_v2'), 2);
    expect(toHex(keys2.commitment)).toBe(field('commitment_v2'));
    const sealed = sealContentWithNonce(
      keys2,
      deploymentId(),
      field('uid'),
      field('path'),
      plaintext(),
      hex('content_nonce'),
    );
    expect(toHex(sealed)).toBe(field('content_object_v2'));
    const keys1 = deriveUserKeys(hex('data_key'), 1);
    expectCode(
      caughtSync(() => openContent(keys1, deploymentId(), field('uid'), field('path'), hex('content_object_v2'))),
      'INTEGRITY',
    );
    // Names derive from version 1 (the name root) whatever the current version: same object key.
    const keys2WithRoot = deriveUserKeys(hex('data_key_v2'), 2, hex('data_key'));
    expect(toHex(keys2WithRoot.commitment)).toBe(field('commitment_v2'));
    expect(encryptSegment(keys2WithRoot, '/memories', 'notes')).toBe(field('segment_notes'));
    // While a re-key is under way (readFrom 1) both versions open, each by the version its header names.
    const pending = await (await vectorStore(field('user_record_v2'))).provider.forUser(field('user_id'));
    expect(pending.keyFor(field('path'))).toBe(field('object_key'));
    expect(pending.open(field('path'), hex('content_object_v2'))).toEqual(plaintext());
    expect(pending.open(field('path'), hex('content_object'))).toEqual(plaintext());
    // After the drop (readFrom 2) a version-1 object is refused, even the genuine one.
    const dropped = await (await vectorStore(field('user_record_v2_dropped'))).provider.forUser(field('user_id'));
    expect(dropped.keyFor(field('path'))).toBe(field('object_key'));
    expect(dropped.open(field('path'), hex('content_object_v2'))).toEqual(plaintext());
    expectCode(
      caughtSync(() => dropped.open(field('path'), hex('content_object'))),
      'INTEGRITY',
    );
  });

  it("the codec, given the vector's records in a store, produces the object key and opens the object", async () => {
    const { provider } = await vectorStore();
    expect(provider.deploymentId).toBe(deploymentId());
    expect(provider.deploymentFingerprint).toBe(field('deployment_fingerprint'));
    const codec = await provider.forUser(field('user_id'));
    expect(codec.uid).toBe(field('uid'));
    expect(codec.keyFor(field('path'))).toBe(field('object_key'));
    expect(codec.pathFor(field('object_key'))).toBe(field('path'));
    expect(codec.open(field('path'), hex('content_object'))).toEqual(plaintext());
  });

  describe('vectors that must be rejected', () => {
    it('content: format version 1, a flipped tag, another deployment id', () => {
      const keys = deriveUserKeys(hex('data_key'), 1);
      for (const name of ['reject_content_v1', 'reject_content_tag']) {
        expectCode(
          caughtSync(() => openContent(keys, deploymentId(), field('uid'), field('path'), hex(name))),
          'INTEGRITY',
        );
      }
      expectCode(
        caughtSync(() =>
          openContent(keys, field('reject_deployment_id'), field('uid'), field('path'), hex('content_object')),
        ),
        'INTEGRITY',
      );
    });

    it('key records: base64url for wrapped, a renamed field; format 1 with a message saying it is not read', async () => {
      for (const name of ['reject_record_base64url', 'reject_record_renamed_field']) {
        expectCode(
          caughtSync(() => decodeKeyRecord(utf8(field(name)))),
          'INTEGRITY',
        );
      }
      const old = caughtSync(() => decodeKeyRecord(utf8(field('reject_record_format1'))));
      expectCode(old, 'CONFIG');
      expect(old.message).toContain('storage format 1');
      // At start-up, a format-1 deployment record stops with that message, not "damaged".
      const store = new MemoryStore();
      await store.put(DEPLOYMENT_RECORD_KEY, utf8(field('deployment_record').replace('"format":2', '"format":1')));
      const keyProvider = await createLocalKeyProvider(hex('master_key'));
      const startup = await caught(() => createEncryptedCodecProvider({ store, keyProvider }));
      expect(startup.message).toContain('storage format 1');
    });

    it("key records: a wrong MAC, and the right record at another user's place, are refused by the codec", async () => {
      expect(() => decodeKeyRecord(utf8(field('reject_record_mac')))).not.toThrow();
      const badMac = await vectorStore(field('reject_record_mac'));
      expectCode(await caught(() => badMac.provider.forUser(field('user_id'))), 'INTEGRITY');
      const moved = await vectorStore(field('user_record'), field('uid_nonascii'));
      expectCode(await caught(() => moved.provider.forUser(field('user_id_nonascii'))), 'INTEGRITY');
    });

    it('versioned key records: version 2 without its name root is damaged; a claimed drop under the MAC of the pending record is refused', async () => {
      expectCode(
        caughtSync(() => decodeKeyRecord(utf8(field('reject_record_v2_no_root')))),
        'INTEGRITY',
      );
      expect(() => decodeKeyRecord(utf8(field('reject_record_v2_readfrom')))).not.toThrow();
      const forged = await vectorStore(field('reject_record_v2_readfrom'));
      expectCode(await caught(() => forged.provider.forUser(field('user_id'))), 'INTEGRITY');
    });
  });
});
