/**
 * The key formats of docs/format.md: the local master key's wrap of a data key, the MAC that
 * authenticates a key record, and the deployment fingerprint (format.ts re-exports them).
 */
import { concatBytes, constantTimeEqual, lengthPrefixed, toBase64Url, u32be, utf8 } from './bytes.js';
import {
  FORMAT_VERSION,
  keyedHash,
  LABEL_DEPLOYMENT_CHECK,
  LABEL_KEY_CHECK,
  LABEL_RECORD_MAC,
  LABEL_RECORD_MAC_KEY,
  LABEL_WRAP_KEY,
  LOCAL_WRAP_BYTES,
  NONCE_BYTES,
  RECORD_MAC_BYTES,
} from './format-base.js';
import { readySodium } from './sodium.js';

// ---------------------------------------------------------------------------------------------
// Local master-key wrapping

export interface LocalMasterKeys {
  wrapKey: Uint8Array;
  /** Key check value: identifies the master key without revealing it (`local-` + base64url). */
  keyId: string;
}

export function deriveLocalMasterKeys(masterKey: Uint8Array): LocalMasterKeys {
  return {
    wrapKey: keyedHash(masterKey, LABEL_WRAP_KEY),
    keyId: `local-${toBase64Url(keyedHash(masterKey, LABEL_KEY_CHECK, 16).subarray(0, 12))}`,
  };
}

function wrapAssociatedData(deploymentId: string, uid: string, keyVersion: number): Uint8Array {
  return concatBytes(
    Uint8Array.of(FORMAT_VERSION),
    u32be(keyVersion),
    lengthPrefixed(utf8(deploymentId)),
    lengthPrefixed(utf8(uid)),
  );
}

export function localWrapWithNonce(
  wrapKey: Uint8Array,
  dataKey: Uint8Array,
  deploymentId: string,
  uid: string,
  keyVersion: number,
  nonce: Uint8Array,
): Uint8Array {
  const sealed = readySodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
    dataKey,
    wrapAssociatedData(deploymentId, uid, keyVersion),
    null,
    nonce,
    wrapKey,
  );
  return concatBytes(Uint8Array.of(FORMAT_VERSION), nonce, sealed);
}

/** Returns null when the wrapped key does not open (wrong master key, other user, damage). */
export function localUnwrap(
  wrapKey: Uint8Array,
  wrapped: Uint8Array,
  deploymentId: string,
  uid: string,
  keyVersion: number,
): Uint8Array | null {
  if (wrapped.byteLength !== LOCAL_WRAP_BYTES || wrapped[0] !== FORMAT_VERSION) return null;
  try {
    return readySodium().crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      wrapped.subarray(1 + NONCE_BYTES),
      wrapAssociatedData(deploymentId, uid, keyVersion),
      wrapped.subarray(1, 1 + NONCE_BYTES),
      wrapKey,
    );
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Key-record authentication (format 2)

/** What a record MAC covers: every field of a key record but the MAC itself. */
export interface RecordMacFields {
  deploymentId: string;
  /** The uid of the record ('_deployment' for the deployment record). */
  uid: string;
  kind: string;
  keyId: string;
  keyVersion: number;
  wrapped: Uint8Array;
  /** Versioned records only (keyVersion > 1): the oldest key version content may still carry. */
  readFrom?: number;
  /** Versioned records only: the older versions the record keeps, ascending (version 1 always: the name root). */
  older?: readonly { keyVersion: number; wrapped: Uint8Array }[];
}

/**
 * The key that authenticates key records: derived from the deployment secret, which only a holder
 * of the master key (or kms:Decrypt) can recover. Someone who can write the bucket and call
 * kms:Encrypt can wrap a key of their own, but cannot MAC the record that carries it.
 */
export function deriveRecordMacKey(deploymentSecret: Uint8Array): Uint8Array {
  return keyedHash(deploymentSecret, LABEL_RECORD_MAC_KEY);
}

export function computeRecordMac(macKey: Uint8Array, fields: RecordMacFields): Uint8Array {
  const message = concatBytes(
    lengthPrefixed(utf8(LABEL_RECORD_MAC)),
    lengthPrefixed(utf8(fields.deploymentId)),
    lengthPrefixed(utf8(fields.uid)),
    lengthPrefixed(utf8(fields.kind)),
    lengthPrefixed(utf8(fields.keyId)),
    u32be(fields.keyVersion),
    lengthPrefixed(fields.wrapped),
    // A single-version record's message ends here (its MAC is unchanged by versioning); a versioned
    // record continues, so every older wrapped secret and the read-from version are covered too.
    ...(fields.older !== undefined
      ? [
          u32be(fields.readFrom ?? 0),
          u32be(fields.older.length),
          ...fields.older.map((o) => concatBytes(u32be(o.keyVersion), lengthPrefixed(o.wrapped))),
        ]
      : []),
  );
  return keyedHash(macKey, message, RECORD_MAC_BYTES);
}

export function verifyRecordMac(macKey: Uint8Array, fields: RecordMacFields, mac: Uint8Array): boolean {
  return constantTimeEqual(computeRecordMac(macKey, fields), mac);
}

/**
 * The deployment fingerprint `{deployment id}.{check}`: a commitment to the deployment secret that
 * a host can pin (encryption.deploymentFingerprint / MEMVAULT_DEPLOYMENT_FINGERPRINT). A replaced
 * deployment record has another secret, so it cannot have this fingerprint. It is a one-way hash:
 * safe for logs.
 */
export function computeDeploymentFingerprint(deploymentSecret: Uint8Array, deploymentId: string): string {
  const check = keyedHash(
    deploymentSecret,
    concatBytes(lengthPrefixed(utf8(LABEL_DEPLOYMENT_CHECK)), lengthPrefixed(utf8(deploymentId))),
    16,
  );
  return `${deploymentId}.${toBase64Url(check)}`;
}
