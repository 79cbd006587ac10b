/**
 * The byte formats' checks at their exact edges (mutation testing found them unasserted):
 * the size boundaries of content objects, the key-wrapping format's version byte and length, the
 * uid pattern's anchors, the derivations nothing else called (contentKeyVersion, computePathId),
 * and the wording of every error. Each case is a stored object or input a user could meet.
 * Format 2 (docs/format.md): the deployment id is bound into every associated data, key records
 * carry a MAC; format 1 objects and wraps (version byte 0x01) are refused.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import {
  CONTENT_HEADER_BYTES,
  CONTENT_OVERHEAD,
  computeAuditMacKey,
  computeDeploymentFingerprint,
  computePathId,
  computeRecordMac,
  computeUid,
  contentKeyVersion,
  decryptSegment,
  DEPLOYMENT_ID_BYTES,
  DEPLOYMENT_ID_PATTERN,
  deriveLocalMasterKeys,
  deriveRecordMacKey,
  deriveUserKeys,
  encryptedSegmentLength,
  encryptSegment,
  FORMAT_VERSION,
  INTEGRITY_MESSAGE,
  integrityError,
  KEY_BYTES,
  keyedHash,
  LOCAL_WRAP_BYTES,
  localUnwrap,
  localWrapWithNonce,
  NONCE_BYTES,
  openContent,
  RECORD_MAC_BYTES,
  type RecordMacFields,
  sealContentWithNonce,
  SIV_BYTES,
  TAG_BYTES,
  UID_PATTERN,
  verifyRecordMac,
  wipeUserKeys,
  type UserKeys,
} from '../../src/crypto/format.js';
import { isUid } from '../../src/crypto/layout.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { encode } from '../kit/text.js';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const UID = 'A'.repeat(32);
const PATH = '/memories/notes.md';
/** A deployment id (16 bytes, 22 base64url characters) and another one. */
const DEP = 'oKGio6SlpqeoqaqrrK2urw';
const OTHER_DEP = 'sLGys7S1tre4ubq7vL2-vw';
/** Length-prefixed UTF-8 (docs/format.md `lp`), written out here so the tests do not reuse src/crypto/bytes. */
const lp = (value: string | Uint8Array) => {
  const b = typeof value === 'string' ? encode(value) : value;
  const out = new Uint8Array(4 + b.byteLength);
  new DataView(out.buffer).setUint32(0, b.byteLength, false);
  out.set(b, 4);
  return out;
};

function expectIntegrity(fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(isMemvaultError(thrown), `threw ${String(thrown)}`).toBe(true);
  expect((thrown as { code: string }).code).toBe('INTEGRITY');
  expect((thrown as Error).message).toBe(INTEGRITY_MESSAGE);
}

let keys: UserKeys;
beforeAll(async () => {
  await loadSodium();
  keys = deriveUserKeys(bytes(KEY_BYTES, 7), 3);
});

describe('format constants', () => {
  it('match docs/format.md: version 2, a 61-byte header, 77 bytes of overhead, 73-byte local wraps, 22-character deployment ids, 32-byte record MACs', () => {
    expect(FORMAT_VERSION).toBe(2);
    expect(DEPLOYMENT_ID_BYTES).toBe(16);
    expect(RECORD_MAC_BYTES).toBe(32);
    expect(CONTENT_HEADER_BYTES).toBe(1 + 4 + 32 + 24);
    expect(CONTENT_OVERHEAD).toBe(CONTENT_HEADER_BYTES + TAG_BYTES);
    expect(LOCAL_WRAP_BYTES).toBe(1 + 24 + 32 + 16);
    expect(INTEGRITY_MESSAGE).toBe(
      'Error: A stored memory file could not be decrypted: it was damaged, moved from another path or user, or sealed with a different key. Nothing was read.',
    );
    const error = integrityError();
    expect(error.code).toBe('INTEGRITY');
    expect(error.message).toBe(INTEGRITY_MESSAGE);
  });
});

describe('content objects', () => {
  it('an empty file is exactly the overhead long and opens to nothing', () => {
    const stored = sealContentWithNonce(keys, DEP, UID, PATH, new Uint8Array(0), bytes(NONCE_BYTES, 1));
    expect(stored.byteLength).toBe(CONTENT_OVERHEAD);
    expect(openContent(keys, DEP, UID, PATH, stored)).toEqual(new Uint8Array(0));
  });

  it('the header is version | key version (u32be) | commitment | nonce', () => {
    const nonce = bytes(NONCE_BYTES, 9);
    const stored = sealContentWithNonce(keys, DEP, UID, PATH, encode('hello'), nonce);
    expect(stored[0]).toBe(2);
    expect([...stored.subarray(1, 5)]).toEqual([0, 0, 0, 3]);
    expect(stored.subarray(5, 37)).toEqual(keys.commitment);
    expect(stored.subarray(37, 61)).toEqual(nonce);
    expect(stored.byteLength).toBe(CONTENT_OVERHEAD + 5);
  });

  it('anything shorter than the overhead, even 0 to 4 bytes, is the integrity error (not a crash)', () => {
    const stored = sealContentWithNonce(keys, DEP, UID, PATH, new Uint8Array(0), bytes(NONCE_BYTES, 1));
    for (const length of [0, 1, 4, 5, CONTENT_HEADER_BYTES, CONTENT_OVERHEAD - 1]) {
      expectIntegrity(() => openContent(keys, DEP, UID, PATH, stored.subarray(0, length)));
    }
  });

  it('another version byte (format 1 among them), key version, commitment, deployment, uid or path does not open', () => {
    const stored = sealContentWithNonce(keys, DEP, UID, PATH, encode('secret'), bytes(NONCE_BYTES, 2));
    for (const [offset, value] of [
      [0, 1],
      [0, 3],
      [0, 0],
      [4, 4],
      [5, stored[5]! ^ 1],
      [36, stored[36]! ^ 0x80],
      [60, stored[60]! ^ 1],
      [stored.byteLength - 1, stored[stored.byteLength - 1]! ^ 1],
    ] as const) {
      const damaged = stored.slice();
      damaged[offset] = value;
      expectIntegrity(() => openContent(keys, DEP, UID, PATH, damaged));
    }
    expectIntegrity(() => openContent(keys, OTHER_DEP, UID, PATH, stored));
    expectIntegrity(() => openContent(keys, DEP, 'B'.repeat(32), PATH, stored));
    expectIntegrity(() => openContent(keys, DEP, UID, '/memories/other.md', stored));
    expectIntegrity(() => openContent(deriveUserKeys(bytes(KEY_BYTES, 7), 4), DEP, UID, PATH, stored));
    expectIntegrity(() => openContent(deriveUserKeys(bytes(KEY_BYTES, 8), 3), DEP, UID, PATH, stored));
    expect(new TextDecoder().decode(openContent(keys, DEP, UID, PATH, stored))).toBe('secret');
  });

  it('contentKeyVersion reads the header from exactly the overhead on, and is null below it', () => {
    const big = deriveUserKeys(bytes(KEY_BYTES, 7), 0x01020304);
    const stored = sealContentWithNonce(big, DEP, UID, PATH, new Uint8Array(0), bytes(NONCE_BYTES, 1));
    expect(contentKeyVersion(stored)).toBe(0x01020304);
    expect(contentKeyVersion(stored.subarray(0, CONTENT_OVERHEAD - 1))).toBeNull();
    expect(contentKeyVersion(new Uint8Array(0))).toBeNull();
    const withText = sealContentWithNonce(
      deriveUserKeys(bytes(KEY_BYTES, 7), 0xfffffffe),
      DEP,
      UID,
      PATH,
      encode('x'),
      bytes(NONCE_BYTES, 1),
    );
    expect(contentKeyVersion(withText)).toBe(0xfffffffe);
  });

  it('refuses a nonce of the wrong length and a data key of the wrong length, with their messages', () => {
    for (const n of [NONCE_BYTES - 1, NONCE_BYTES + 1, 0]) {
      expect(() => sealContentWithNonce(keys, DEP, UID, PATH, encode('x'), bytes(n, 1))).toThrow(
        'nonce must be 24 bytes',
      );
    }
    for (const n of [KEY_BYTES - 1, KEY_BYTES + 1, 0]) {
      let thrown: unknown;
      try {
        deriveUserKeys(bytes(n, 1), 1);
      } catch (error) {
        thrown = error;
      }
      expect(isMemvaultError(thrown)).toBe(true);
      expect((thrown as { code: string }).code).toBe('KEY_UNAVAILABLE');
      expect((thrown as Error).message).toBe('A data key has the wrong length.');
    }
  });

  it('derives five distinct subkeys (the audit pseudonym key among them), records the key version, and wipes all five', () => {
    const k = deriveUserKeys(bytes(KEY_BYTES, 5), 17);
    expect(k.keyVersion).toBe(17);
    const subkeys = [k.contentKey, k.nameKey, k.nameSivKey, k.commitment, k.auditPseudonymKey];
    const all = subkeys.map((b) => Buffer.from(b).toString('hex'));
    expect(new Set(all).size).toBe(5);
    for (const b of subkeys) expect(b.byteLength).toBe(32);
    wipeUserKeys(k);
    for (const b of subkeys) expect(b.every((x) => x === 0)).toBe(true);
  });

  it('keyedHash: the label and the key both change the output; the length is honoured', () => {
    const a = keyedHash(bytes(32, 1), 'label-a');
    expect(a.byteLength).toBe(32);
    expect(keyedHash(bytes(32, 1), 'label-b')).not.toEqual(a);
    expect(keyedHash(bytes(32, 2), 'label-a')).not.toEqual(a);
    expect(keyedHash(bytes(32, 1), encode('label-a'))).toEqual(a);
    expect(keyedHash(bytes(32, 1), 'label-a', 16).byteLength).toBe(16);
  });
});

describe('encrypted names', () => {
  it('round-trip, depend on the parent directory, and have the predicted length', () => {
    for (const segment of ['a', 'notes.md', 'ü'.repeat(40), 'x'.repeat(255)]) {
      const encoded = encryptSegment(keys, '/memories', segment);
      expect(decryptSegment(keys, '/memories', encoded)).toBe(segment);
      expect(encoded.length).toBe(encryptedSegmentLength(Buffer.byteLength(segment)));
      expect(encryptSegment(keys, '/memories/dir', segment)).not.toBe(encoded);
      expect(encryptSegment(keys, '/memories', segment)).toBe(encoded);
    }
    expect(encryptedSegmentLength(1)).toBe(23);
    expect(encryptedSegmentLength(2)).toBe(24);
    expect(encryptedSegmentLength(255)).toBe(362);
  });

  it('a name of only the SIV (16 bytes), damaged bytes, another parent or invalid base64url is the integrity error', () => {
    const encoded = encryptSegment(keys, '/memories', 'notes.md');
    const raw = Buffer.from(encoded, 'base64url');
    expectIntegrity(() => decryptSegment(keys, '/memories', raw.subarray(0, SIV_BYTES).toString('base64url')));
    expectIntegrity(() => decryptSegment(keys, '/memories', ''));
    expectIntegrity(() => decryptSegment(keys, '/memories/dir', encoded));
    expectIntegrity(() => decryptSegment(keys, '/memories', `${encoded}=`));
    expectIntegrity(() =>
      decryptSegment(
        keys,
        '/memories',
        encoded.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      ),
    );
    const damaged = Buffer.from(raw);
    damaged[SIV_BYTES] = damaged[SIV_BYTES]! ^ 1;
    expectIntegrity(() => decryptSegment(keys, '/memories', damaged.toString('base64url')));
    // The shortest real name: SIV + 1 byte opens.
    expect(decryptSegment(keys, '/memories', encryptSegment(keys, '/memories', 'x'))).toBe('x');
  });
});

describe('pseudonymous ids', () => {
  const secret = bytes(32, 3);

  it('uids are 32 base64url characters, per user and per deployment', () => {
    const uid = computeUid(secret, 'alice');
    expect(uid).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(isUid(uid)).toBe(true);
    expect(computeUid(secret, 'bob')).not.toBe(uid);
    expect(computeUid(bytes(32, 4), 'alice')).not.toBe(uid);
    expect(computeUid(secret, 'alice')).toBe(uid);
  });

  it('the uid pattern is anchored at both ends and exact in length and alphabet', () => {
    const good = computeUid(secret, 'alice');
    expect(UID_PATTERN.test(good)).toBe(true);
    for (const bad of [
      `${good}x`,
      `x${good}`,
      `${good}/f/file`,
      `../${good}`,
      good.slice(1),
      `${good.slice(1)}+`,
      `${good.slice(1)}/`,
      `${good.slice(1)}=`,
      `${good.slice(1)}.`,
      `${good}\n`,
      '',
      '_deployment',
    ]) {
      expect(UID_PATTERN.test(bad), bad).toBe(false);
      expect(isUid(bad), bad).toBe(false);
    }
  });

  it('the deployment id pattern (format 2) is anchored at both ends and exact in length and alphabet', () => {
    expect(DEPLOYMENT_ID_PATTERN.test(DEP)).toBe(true);
    expect(DEPLOYMENT_ID_PATTERN.test(Buffer.from(bytes(DEPLOYMENT_ID_BYTES, 0xfb)).toString('base64url'))).toBe(true);
    for (const bad of [
      `${DEP}x`,
      `x${DEP}`,
      `${DEP}/k`,
      `../${DEP}`,
      DEP.slice(1),
      `${DEP.slice(1)}+`,
      `${DEP.slice(1)}/`,
      `${DEP.slice(1)}=`,
      `${DEP.slice(1)}.`,
      `${DEP}\n`,
      `${DEP}==`,
      computeUid(secret, 'alice'),
      '',
      '_deployment',
    ]) {
      expect(DEPLOYMENT_ID_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it('path ids: 22 characters (16 bytes), bound to the secret, the uid and the path, with an unambiguous join', () => {
    const id = computePathId(secret, 'u1', '/memories/a');
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(computePathId(secret, 'u1', '/memories/a')).toBe(id);
    expect(computePathId(secret, 'u2', '/memories/a')).not.toBe(id);
    expect(computePathId(secret, 'u1', '/memories/b')).not.toBe(id);
    expect(computePathId(bytes(32, 4), 'u1', '/memories/a')).not.toBe(id);
    expect(computePathId(secret, 'u', '1\u0000/memories/a')).not.toBe(computePathId(secret, 'u1', '\u0000/memories/a'));
    expect(id).not.toBe(computeUid(secret, 'u1').slice(0, 22));
  });

  it('the audit MAC key is 32 bytes, per deployment, and differs from the secret', () => {
    const key = computeAuditMacKey(secret);
    expect(key.byteLength).toBe(32);
    expect(computeAuditMacKey(secret)).toEqual(key);
    expect(computeAuditMacKey(bytes(32, 4))).not.toEqual(key);
    expect(Buffer.from(key).equals(Buffer.from(secret))).toBe(false);
  });
});

describe('local key wrapping', () => {
  const master = bytes(32, 11);
  const dataKey = bytes(32, 12);
  const nonce = bytes(NONCE_BYTES, 13);

  it('key ids are local- and 16 base64url characters, one per master key', () => {
    const { keyId, wrapKey } = deriveLocalMasterKeys(master);
    expect(keyId).toMatch(/^local-[A-Za-z0-9_-]{16}$/);
    expect(deriveLocalMasterKeys(bytes(32, 1)).keyId).not.toBe(keyId);
    expect(wrapKey.byteLength).toBe(32);
    expect(Buffer.from(wrapKey).equals(Buffer.from(master))).toBe(false);
  });

  it('wraps as version | nonce | sealed key and unwraps only for the same deployment, uid and key version', () => {
    const { wrapKey } = deriveLocalMasterKeys(master);
    const wrapped = localWrapWithNonce(wrapKey, dataKey, DEP, UID, 2, nonce);
    expect(wrapped.byteLength).toBe(LOCAL_WRAP_BYTES);
    expect(wrapped[0]).toBe(FORMAT_VERSION);
    expect(wrapped.subarray(1, 1 + NONCE_BYTES)).toEqual(nonce);
    expect(localUnwrap(wrapKey, wrapped, DEP, UID, 2)).toEqual(dataKey);
    expect(localUnwrap(wrapKey, wrapped, OTHER_DEP, UID, 2)).toBeNull();
    expect(localUnwrap(wrapKey, wrapped, DEP, 'B'.repeat(32), 2)).toBeNull();
    expect(localUnwrap(wrapKey, wrapped, DEP, UID, 3)).toBeNull();
    expect(localUnwrap(deriveLocalMasterKeys(bytes(32, 1)).wrapKey, wrapped, DEP, UID, 2)).toBeNull();
  });

  it('a wrap with another version byte is refused even though its sealed part is intact', () => {
    const { wrapKey } = deriveLocalMasterKeys(master);
    const wrapped = localWrapWithNonce(wrapKey, dataKey, DEP, UID, 2, nonce);
    for (const version of [0, 1, 3, 0xff]) {
      const other = wrapped.slice();
      other[0] = version;
      expect(localUnwrap(wrapKey, other, DEP, UID, 2)).toBeNull();
    }
  });

  it('a wrap one byte short or long, or damaged, is refused (null, not a crash)', () => {
    const { wrapKey } = deriveLocalMasterKeys(master);
    const wrapped = localWrapWithNonce(wrapKey, dataKey, DEP, UID, 2, nonce);
    expect(localUnwrap(wrapKey, wrapped.subarray(0, LOCAL_WRAP_BYTES - 1), DEP, UID, 2)).toBeNull();
    const longer = new Uint8Array(LOCAL_WRAP_BYTES + 1);
    longer.set(wrapped);
    expect(localUnwrap(wrapKey, longer, DEP, UID, 2)).toBeNull();
    expect(localUnwrap(wrapKey, new Uint8Array(0), DEP, UID, 2)).toBeNull();
    for (const offset of [1, 24, 25, LOCAL_WRAP_BYTES - 1]) {
      const damaged = wrapped.slice();
      damaged[offset] = damaged[offset]! ^ 1;
      expect(localUnwrap(wrapKey, damaged, DEP, UID, 2)).toBeNull();
    }
  });
});

describe('what only a key holder could forge is refused too', () => {
  // These objects are authentic AEAD ciphertexts under the user's content key, built here by hand:
  // only the format's own checks (version, commitment, lengths) refuse them. The AD is format 2's:
  // header without the nonce | lp(deployment id) | lp(uid) | lp(path).
  const ad = (header: Uint8Array, deploymentId: string, uid: string, path: string) =>
    Buffer.concat([header.subarray(0, 37), lp(deploymentId), lp(uid), lp(path)]);
  const forge = (version: number, commitment: Uint8Array, plaintext: Uint8Array) => {
    const nonce = bytes(NONCE_BYTES, 5);
    const header = new Uint8Array(CONTENT_HEADER_BYTES);
    header[0] = version;
    new DataView(header.buffer).setUint32(1, keys.keyVersion, false);
    header.set(commitment, 5);
    header.set(nonce, 37);
    const sealed = sodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
      plaintext,
      ad(header, DEP, UID, PATH),
      null,
      nonce,
      keys.contentKey,
    );
    return new Uint8Array(Buffer.concat([header, sealed]));
  };
  let sodium: () => Awaited<ReturnType<typeof loadSodium>>;
  beforeAll(async () => {
    const s = await loadSodium();
    sodium = () => s;
  });

  it('the hand-built object opens when it is a version 2 object with the right commitment (the forge is faithful)', () => {
    expect(
      new TextDecoder().decode(
        openContent(keys, DEP, UID, PATH, forge(FORMAT_VERSION, keys.commitment, encode('genuine'))),
      ),
    ).toBe('genuine');
  });

  it('an object of another format version (format 1 among them) is refused, not misread as version 2', () => {
    for (const version of [0, 1, 3, 255])
      expectIntegrity(() =>
        openContent(keys, DEP, UID, PATH, forge(version, keys.commitment, encode('future format'))),
      );
  });

  it('a genuine format 1 object (version byte 1, format 1 AD without the deployment id) is refused', () => {
    const nonce = bytes(NONCE_BYTES, 5);
    const header = new Uint8Array(CONTENT_HEADER_BYTES);
    header[0] = 1;
    new DataView(header.buffer).setUint32(1, keys.keyVersion, false);
    header.set(keys.commitment, 5);
    header.set(nonce, 37);
    const v1Ad = Buffer.concat([header.subarray(0, 37), lp(UID), lp(PATH)]);
    const sealed = sodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
      encode('old store'),
      v1Ad,
      null,
      nonce,
      keys.contentKey,
    );
    expectIntegrity(() => openContent(keys, DEP, UID, PATH, new Uint8Array(Buffer.concat([header, sealed]))));
  });

  it('an authentic object of this deployment does not open under another deployment id', () => {
    const genuine = forge(FORMAT_VERSION, keys.commitment, encode('deployment a'));
    expectIntegrity(() => openContent(keys, OTHER_DEP, UID, PATH, genuine));
    expect(new TextDecoder().decode(openContent(keys, DEP, UID, PATH, genuine))).toBe('deployment a');
  });

  it('an object whose commitment is not that of the key is refused, although its ciphertext is authentic', () => {
    const other = deriveUserKeys(bytes(KEY_BYTES, 99), keys.keyVersion).commitment;
    expectIntegrity(() => openContent(keys, DEP, UID, PATH, forge(FORMAT_VERSION, other, encode('two keys'))));
  });

  it('an encrypted empty name (a valid SIV over nothing) is refused', () => {
    const empty = encryptSegment(keys, '/memories', '');
    expect(Buffer.from(empty, 'base64url').byteLength).toBe(SIV_BYTES);
    expectIntegrity(() => decryptSegment(keys, '/memories', empty));
  });

  it('a name whose SIV checks but whose bytes are not UTF-8 is the integrity error, not a string', () => {
    const parent = '/memories';
    const forgeName = (plain: Uint8Array) => {
      const parentBytes = encode(parent);
      const prefixed = new Uint8Array(4 + parentBytes.byteLength + plain.byteLength);
      new DataView(prefixed.buffer).setUint32(0, parentBytes.byteLength, false);
      prefixed.set(parentBytes, 4);
      prefixed.set(plain, 4 + parentBytes.byteLength);
      const siv = keyedHash(keys.nameSivKey, prefixed, SIV_BYTES);
      const nonce = new Uint8Array(NONCE_BYTES);
      nonce.set(siv);
      const { ciphertext } = sodium().crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
        plain,
        null,
        null,
        nonce,
        keys.nameKey,
      );
      return Buffer.concat([siv, ciphertext]).toString('base64url');
    };
    // The forge is faithful: over UTF-8 bytes it is exactly what encryptSegment makes.
    expect(forgeName(encode('ab'))).toBe(encryptSegment(keys, parent, 'ab'));
    expectIntegrity(() => decryptSegment(keys, parent, forgeName(Uint8Array.from([0x61, 0xff, 0x62]))));
  });

  it('a wrap that holds a key of the wrong length is refused, although it opens', () => {
    const { wrapKey } = deriveLocalMasterKeys(bytes(32, 11));
    for (const length of [31, 33]) {
      const wrapped = localWrapWithNonce(wrapKey, bytes(length, 1), DEP, UID, 1, bytes(NONCE_BYTES, 2));
      expect(wrapped.byteLength).toBe(LOCAL_WRAP_BYTES + length - KEY_BYTES);
      expect(localUnwrap(wrapKey, wrapped, DEP, UID, 1)).toBeNull();
    }
  });
});

describe('the documented derivations (docs/format.md, docs/audit.md), computed independently', () => {
  const secret = bytes(32, 21);
  const hmac = (label: string, message = '') =>
    createHmac('sha256', secret)
      .update(label + message, 'utf8')
      .digest();

  it('uid = base64url(HMAC-SHA256(secret, "memvault/v1/uid\\0" | user id)[0..24])', () => {
    expect(computeUid(secret, 'alice')).toBe(
      hmac('memvault/v1/uid\u0000', 'alice').subarray(0, 24).toString('base64url'),
    );
    expect(computeUid(secret, 'jürgen')).toBe(
      hmac('memvault/v1/uid\u0000', 'jürgen').subarray(0, 24).toString('base64url'),
    );
  });

  it('path id = base64url(HMAC-SHA256(secret, "memvault/v1/audit-path\\0" | uid | 0 | path)[0..16])', () => {
    expect(computePathId(secret, UID, '/memories/ä.md')).toBe(
      hmac('memvault/v1/audit-path\u0000', `${UID}\u0000/memories/ä.md`).subarray(0, 16).toString('base64url'),
    );
  });

  it('audit MAC key = HMAC-SHA256(secret, "memvault/v1/audit-mac-key")', () => {
    expect(Buffer.from(computeAuditMacKey(secret)).toString('hex')).toBe(
      hmac('memvault/v1/audit-mac-key').toString('hex'),
    );
  });

  // Format 2: BLAKE2b-n(key, msg) is libsodium's crypto_generichash(n, msg, key), called directly here.
  const blake2b = async (length: number, key: Uint8Array, message: Uint8Array) =>
    (await loadSodium()).crypto_generichash(length, message, key);

  it('record MAC key = BLAKE2b-32(secret, "memvault/v2/record-mac-key")', async () => {
    expect(Buffer.from(deriveRecordMacKey(secret)).toString('hex')).toBe(
      Buffer.from(await blake2b(32, secret, encode('memvault/v2/record-mac-key'))).toString('hex'),
    );
  });

  it('record MAC = BLAKE2b-32(MAC key, lp(label) | lp(deployment) | lp(uid) | lp(kind) | lp(keyId) | u32be(keyVersion) | lp(wrapped))', async () => {
    const macKey = deriveRecordMacKey(secret);
    const fields: RecordMacFields = {
      deploymentId: DEP,
      uid: UID,
      kind: 'local',
      keyId: 'local-kNhzSaszksmSrX3N',
      keyVersion: 0x01020304,
      wrapped: bytes(LOCAL_WRAP_BYTES, 0x2b),
    };
    const version = new Uint8Array(4);
    new DataView(version.buffer).setUint32(0, fields.keyVersion, false);
    const message = Buffer.concat([
      lp('memvault/v2/key-record'),
      lp(fields.deploymentId),
      lp(fields.uid),
      lp(fields.kind),
      lp(fields.keyId),
      version,
      lp(fields.wrapped),
    ]);
    const expected = await blake2b(RECORD_MAC_BYTES, macKey, message);
    expect(Buffer.from(computeRecordMac(macKey, fields)).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
    expect(verifyRecordMac(macKey, fields, expected)).toBe(true);
  });

  it('deployment fingerprint = deployment id | "." | base64url(BLAKE2b-16(secret, lp("memvault/v2/deployment-check") | lp(deployment id)))', async () => {
    const check = await blake2b(16, secret, Buffer.concat([lp('memvault/v2/deployment-check'), lp(DEP)]));
    expect(computeDeploymentFingerprint(secret, DEP)).toBe(`${DEP}.${Buffer.from(check).toString('base64url')}`);
    expect(computeDeploymentFingerprint(secret, OTHER_DEP)).not.toBe(computeDeploymentFingerprint(secret, DEP));
    expect(computeDeploymentFingerprint(bytes(32, 22), DEP)).not.toBe(computeDeploymentFingerprint(secret, DEP));
  });

  it('audit pseudonym key = BLAKE2b-32(data key, "memvault/v1/audit-pseudonym-key")', async () => {
    const dataKey = bytes(KEY_BYTES, 23);
    const expected = await blake2b(32, dataKey, encode('memvault/v1/audit-pseudonym-key'));
    expect(Buffer.from(deriveUserKeys(dataKey, 1).auditPseudonymKey).toString('hex')).toBe(
      Buffer.from(expected).toString('hex'),
    );
  });
});

describe('key-record MACs (format 2)', () => {
  const secret = bytes(32, 31);
  const fields: RecordMacFields = {
    deploymentId: DEP,
    uid: UID,
    kind: 'local',
    keyId: 'local-AAAAAAAAAAAAAAAA',
    keyVersion: 2,
    wrapped: bytes(LOCAL_WRAP_BYTES, 0x41),
  };

  it('a MAC is refused when any field it covers changes, when it is damaged or truncated, or under another deployment secret', () => {
    const macKey = deriveRecordMacKey(secret);
    const mac = computeRecordMac(macKey, fields);
    expect(mac.byteLength).toBe(RECORD_MAC_BYTES);
    expect(verifyRecordMac(macKey, fields, mac)).toBe(true);
    const wrappedChanged = fields.wrapped.slice();
    wrappedChanged[LOCAL_WRAP_BYTES - 1] = wrappedChanged[LOCAL_WRAP_BYTES - 1]! ^ 1;
    for (const changed of [
      { ...fields, deploymentId: OTHER_DEP },
      { ...fields, uid: 'B'.repeat(32) },
      { ...fields, uid: '_deployment' },
      { ...fields, kind: 'kms' },
      { ...fields, keyId: 'local-AAAAAAAAAAAAAAAB' },
      { ...fields, keyVersion: 3 },
      { ...fields, wrapped: wrappedChanged },
      { ...fields, wrapped: fields.wrapped.subarray(0, LOCAL_WRAP_BYTES - 1) },
    ]) {
      expect(verifyRecordMac(macKey, changed, mac)).toBe(false);
      expect(computeRecordMac(macKey, changed)).not.toEqual(mac);
    }
    const damaged = mac.slice();
    damaged[0] = damaged[0]! ^ 1;
    expect(verifyRecordMac(macKey, fields, damaged)).toBe(false);
    expect(verifyRecordMac(macKey, fields, mac.subarray(0, RECORD_MAC_BYTES - 1))).toBe(false);
    expect(verifyRecordMac(macKey, fields, new Uint8Array(0))).toBe(false);
    expect(verifyRecordMac(deriveRecordMacKey(bytes(32, 32)), fields, mac)).toBe(false);
  });

  it('the length prefixes keep field boundaries unambiguous (moving a character between fields changes the MAC)', () => {
    const macKey = deriveRecordMacKey(secret);
    const a = computeRecordMac(macKey, { ...fields, kind: 'local', keyId: 'xkey' });
    const b = computeRecordMac(macKey, { ...fields, kind: 'localx', keyId: 'key' });
    expect(a).not.toEqual(b);
  });

  it('the record MAC key is 32 bytes of its own: not the secret, not the audit MAC key, per deployment', () => {
    const macKey = deriveRecordMacKey(secret);
    expect(macKey.byteLength).toBe(32);
    expect(Buffer.from(macKey).equals(Buffer.from(secret))).toBe(false);
    expect(Buffer.from(macKey).equals(Buffer.from(computeAuditMacKey(secret)))).toBe(false);
    expect(deriveRecordMacKey(bytes(32, 32))).not.toEqual(macKey);
  });
});
