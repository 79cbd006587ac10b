import { createHmac } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import type { CodecProvider, UserCodec } from '../crypto/user-codec.js';
import { MEMORY_ROOT, pathSegments } from './paths.js';
import { userFilesPrefix } from '../store/layout.js';

/**
 * Names and bytes stored as they are: for tests, benchmarks (the "without encryption" baseline)
 * and deployments that explicitly opt out of client-side encryption. The uid is still a keyed
 * hash, but with a fixed key: it hides user ids from casual reading, not from a dictionary attack.
 */
const PLAIN_UID_KEY = 'memvault/plain-codec/uid/v1';

export function plainUid(userId: string): string {
  return createHmac('sha256', PLAIN_UID_KEY).update(userId, 'utf8').digest('base64url').slice(0, 26);
}

class PlainUserCodec implements UserCodec {
  readonly filesPrefix: string;
  constructor(readonly uid: string) {
    this.filesPrefix = userFilesPrefix(uid);
  }
  keyFor(path: string): string {
    const segments = pathSegments(path);
    if (segments.length === 0)
      throw new MemvaultError('INVALID_PATH', `Error: ${MEMORY_ROOT} is a directory, not a file`);
    return this.filesPrefix + segments.map(encodeURIComponent).join('/');
  }
  prefixFor(dir: string): string {
    const segments = pathSegments(dir);
    return segments.length === 0 ? this.filesPrefix : `${this.keyFor(dir)}/`;
  }
  pathFor(key: string): string {
    if (!key.startsWith(this.filesPrefix))
      throw new MemvaultError('INTEGRITY', 'Error: a stored name does not belong to this user');
    const rest = key.slice(this.filesPrefix.length);
    return `${MEMORY_ROOT}/${rest.split('/').map(decodeURIComponent).join('/')}`;
  }
  seal(_path: string, plaintext: Uint8Array): Uint8Array {
    return plaintext;
  }
  open(_path: string, stored: Uint8Array): Uint8Array {
    return stored;
  }
  plaintextSize(storedSize: number): number {
    return storedSize;
  }

  readonly sealOverhead = 0;
}

export function createPlainCodecProvider(): CodecProvider {
  return {
    mode: 'plain',
    forUser: async (userId: string) => new PlainUserCodec(plainUid(userId)),
    // The codec depends on the uid alone (names are only escaped).
    forUid: async (uid: string) => new PlainUserCodec(uid),
    pathId: (uid: string, path: string) =>
      createHmac('sha256', PLAIN_UID_KEY)
        .update(`path\u0000${uid}\u0000${path}`, 'utf8')
        .digest('base64url')
        .slice(0, 22),
    close: async () => {},
  };
}
