/**
 * The local key provider: a 32-byte master key from MEMVAULT_MASTER_KEY (base64) or a key file
 * (base64 text, mode 0600). The master key itself never wraps anything: a wrap key and a key check
 * value are derived from it (docs/format.md), and the key check value is the provider's key id.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { promises as fs, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import { MemvaultError } from '../errors.js';
import { errnoOf } from '../util/errno.js';
import { fsyncDirectory } from '../util/fs.js';
import { decodeBase64Secret, randomNonce, toBase64 } from './bytes.js';
import { deriveLocalMasterKeys, KEY_BYTES, localUnwrap, localWrapWithNonce, NONCE_BYTES } from './format.js';
import type { KeyProvider, WrapContext } from './key-provider.js';
import { loadSodium, readySodium } from './sodium.js';

const HOW_TO_MAKE_A_KEY = 'generate one with `openssl rand -base64 32`';

/** Decode a base64 master key; the message names the source, never the key. */
export function parseMasterKey(text: string, source: string): Uint8Array {
  const decoded = decodeBase64Secret(text.trim());
  if (!decoded)
    throw new MemvaultError(
      'CONFIG',
      `${source} is not valid base64; it must be the base64 encoding of exactly 32 bytes (${HOW_TO_MAKE_A_KEY}).`,
    );
  if (decoded.byteLength !== KEY_BYTES) {
    const length = decoded.byteLength;
    decoded.fill(0);
    throw new MemvaultError(
      'CONFIG',
      `${source} decodes to ${length} bytes; it must be the base64 encoding of exactly 32 bytes (${HOW_TO_MAKE_A_KEY}).`,
    );
  }
  // The caller owns (and wipes) this buffer; it is no slice of the shared pool.
  return decoded;
}

/** Read a master key file, refusing one that other users could read or change. */
export async function readMasterKeyFile(file: string): Promise<Uint8Array> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT')
      throw new MemvaultError('CONFIG', `The master key file ${file} does not exist.`, { cause: e });
    throw new MemvaultError('CONFIG', `The master key file ${file} cannot be read (${errnoOf(e) ?? 'error'}).`, {
      cause: e,
    });
  }
  if (!stat.isFile()) throw new MemvaultError('CONFIG', `The master key file ${file} is not a regular file.`);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new MemvaultError(
      'CONFIG',
      `The master key file ${file} has mode ${mode}: other users can access it. Run \`chmod 600 ${file}\` (only its owner may read it).`,
    );
  }
  let raw: Buffer;
  try {
    raw = await fs.readFile(file);
  } catch (e) {
    throw new MemvaultError('CONFIG', `The master key file ${file} cannot be read (${errnoOf(e) ?? 'error'}).`, {
      cause: e,
    });
  }
  try {
    // The text form is a JS string, which cannot be wiped; the file's bytes can.
    return parseMasterKey(raw.toString('utf8'), `The master key file ${file}`);
  } finally {
    raw.fill(0);
  }
}

/**
 * The embedded default: read the key file, or create it on first run. Creation writes the key to a
 * private temporary file and hard-links it into place: link() fails if the name exists (like
 * O_EXCL), and a reader never sees a half-written key. Two processes starting together therefore
 * end up with one key: the loser of the link reads the winner's file.
 */
export async function loadOrCreateLocalMasterKey(file: string): Promise<{ masterKey: Uint8Array; created: boolean }> {
  try {
    return { masterKey: await readMasterKeyFile(file), created: false };
  } catch (e) {
    if (!(e instanceof MemvaultError) || !(await isMissing(file))) throw e;
  }
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const masterKey = randomFillSync(new Uint8Array(KEY_BYTES));
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await fs.open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
  try {
    await handle.writeFile(`${toBase64(masterKey)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.link(temp, file);
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') {
      await fs.rm(temp, { force: true });
      throw new MemvaultError('CONFIG', `The master key file ${file} cannot be created (${errnoOf(e) ?? 'error'}).`, {
        cause: e,
      });
    }
    await fs.rm(temp, { force: true });
    readySodiumOrNull()?.memzero(masterKey);
    return { masterKey: await readMasterKeyFile(file), created: false };
  }
  await fs.rm(temp, { force: true });
  // The new link must survive a power loss (util/fs.ts: a platform that cannot sync a directory is
  // not an error; a failing sync is, since the key would otherwise be lost with its data).
  try {
    await fsyncDirectory(path.dirname(file));
  } catch (e) {
    readySodiumOrNull()?.memzero(masterKey);
    throw new MemvaultError(
      'CONFIG',
      `The master key file ${file} cannot be made durable (${errnoOf(e) ?? 'error'}).`,
      { cause: e },
    );
  }
  return { masterKey, created: true };
}

async function isMissing(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return false;
  } catch (e) {
    return errnoOf(e) === 'ENOENT';
  }
}

function readySodiumOrNull(): ReturnType<typeof readySodium> | null {
  try {
    return readySodium();
  } catch {
    return null;
  }
}

class LocalKeyProvider implements KeyProvider {
  readonly kind = 'local' as const;
  readonly keyId: string;
  private readonly wrapKey: Uint8Array;

  constructor(masterKey: Uint8Array) {
    const derived = deriveLocalMasterKeys(masterKey);
    this.wrapKey = derived.wrapKey;
    this.keyId = derived.keyId;
  }

  async wrap(dataKey: Uint8Array, context: WrapContext): Promise<Uint8Array> {
    this.assertOpen();
    return localWrapWithNonce(
      this.wrapKey,
      dataKey,
      context.deploymentId,
      context.uid,
      context.keyVersion,
      randomNonce(NONCE_BYTES),
    );
  }

  async unwrap(wrapped: Uint8Array, context: WrapContext): Promise<Uint8Array> {
    this.assertOpen();
    const key = localUnwrap(this.wrapKey, wrapped, context.deploymentId, context.uid, context.keyVersion);
    if (!key) {
      throw new MemvaultError(
        'INTEGRITY',
        'Error: A wrapped key did not open with the master key: the key record is damaged or was moved from another user.',
      );
    }
    return key;
  }

  close(): void {
    readySodium().memzero(this.wrapKey);
    this.closed = true;
  }

  private closed = false;

  private assertOpen(): void {
    if (this.closed) throw new MemvaultError('KEY_UNAVAILABLE', 'Error: The master key was closed.');
  }
}

/**
 * A provider for a 32-byte master key. It keeps only keys derived from it; the caller owns (and
 * should wipe) its own buffer.
 */
export async function createLocalKeyProvider(masterKey: Uint8Array): Promise<KeyProvider> {
  await loadSodium();
  if (masterKey.byteLength !== KEY_BYTES)
    throw new MemvaultError('CONFIG', `A master key must be exactly 32 bytes (got ${masterKey.byteLength}).`);
  return new LocalKeyProvider(masterKey);
}
