/**
 * Listing the embedded store: which objects lie under a prefix, after a start key. The walk enters
 * only the directories whose key range can hold such keys, and takes only entries in the canonical
 * form of keys.ts (so a file planted under another name is never listed). Continuation tokens are
 * the last key listed, base64url.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MemvaultError } from '../../errors.js';
import { errnoOf } from '../../util/errno.js';
import { decodeComponent, keyToComponents, MAX_KEY_BYTES } from './keys.js';

export interface Candidate {
  key: string;
  bytes: Buffer;
  file: string;
}

/** Called for each of the store's own files met on the way (lock and temp files). */
export type InternalFileVisitor = (path: string, name: string) => Promise<void>;

/**
 * Where a listing's walk starts: the directory of the prefix's complete segments (everything up to
 * its last '/'), which the key mapping determines exactly, so a listing reads only the directories
 * below it instead of every directory from the root down (one readdir per level and the whole
 * user directory otherwise). `relative` are its components below the root, `keySoFar` the key bytes
 * it stands for.
 */
export function walkStart(prefix: string): { relative: string[]; keySoFar: Buffer } {
  const slash = prefix.lastIndexOf('/');
  if (slash === -1) return { relative: [], keySoFar: Buffer.alloc(0) };
  const head = prefix.slice(0, slash);
  // The components of `head/x` minus the object file: exactly the directories of head's segments.
  return { relative: keyToComponents(`${head}/x`).slice(0, -1), keySoFar: Buffer.from(`${head}/`, 'utf8') };
}

/**
 * The objects under `root` whose keys start with `prefix` and sort after `after`, in key order.
 * The walk starts at `walkStart(prefix)`; `startIsPresent` is asked first whether that directory
 * exists and is reached without a link (the walk below it never enters a link: it takes only
 * entries whose type is a directory), and nothing is listed when it is missing.
 */
export async function collectCandidates(
  root: string,
  prefix: Buffer,
  after: Buffer | undefined,
  onInternalFile: InternalFileVisitor,
  startIsPresent: (dir: string) => Promise<boolean>,
): Promise<Candidate[]> {
  const out: Candidate[] = [];
  const { relative, keySoFar } = walkStart(prefix.toString('utf8'));
  const start = relative.length === 0 ? root : join(root, ...relative);
  if (relative.length > 0 && !(await startIsPresent(start))) return out;
  await walk(start, relative, keySoFar, prefix, after, out, onInternalFile);
  return out.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
}

export function encodeToken(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeToken(token: string): string {
  const key = Buffer.from(token, 'base64url').toString('utf8');
  if (key.length === 0 || encodeToken(key) !== token)
    throw new MemvaultError('INVALID_INPUT', 'invalid list continuation token');
  return key;
}

/** Whether some key starting with `start` can also start with `prefix`. */
function compatible(start: Buffer, prefix: Buffer): boolean {
  const n = Math.min(start.length, prefix.length);
  return start.subarray(0, n).equals(prefix.subarray(0, n));
}

/** Whether every key starting with `start` sorts at or before `after` (the subtree can be skipped). */
function entirelyBefore(start: Buffer, after: Buffer | undefined): boolean {
  if (!after) return false;
  return Buffer.compare(start, after) < 0 && !after.subarray(0, start.length).equals(start);
}

/**
 * Collect the objects under `dir` whose keys start with `prefix` and sort after `after`, entering
 * only directories whose key range can hold such keys. `keySoFar` is the key bytes the directory
 * stands for; `relative` its path components (to reject entries that are not in canonical form).
 */
async function walk(
  dir: string,
  relative: string[],
  keySoFar: Buffer,
  prefix: Buffer,
  after: Buffer | undefined,
  out: Candidate[],
  onInternalFile: InternalFileVisitor,
): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return; // pruned while we looked
    throw e;
  }
  for (const entry of entries) {
    const decoded = decodeComponent(entry.name);
    switch (decoded.kind) {
      case 'internal':
        if (entry.isFile()) await onInternalFile(join(dir, entry.name), entry.name);
        break;
      case 'foreign':
        break;
      case 'object': {
        if (!entry.isFile()) break;
        const bytes = Buffer.concat([keySoFar, decoded.bytes]);
        if (!bytes.subarray(0, prefix.length).equals(prefix)) break;
        if (after && Buffer.compare(bytes, after) <= 0) break;
        const key = bytes.toString('utf8');
        if (!Buffer.from(key, 'utf8').equals(bytes) || Buffer.byteLength(key) > MAX_KEY_BYTES) break;
        if (keyToComponents(key).join('/') !== [...relative, entry.name].join('/')) break;
        out.push({ key, bytes, file: join(dir, entry.name) });
        break;
      }
      case 'directory':
      case 'continuation': {
        if (!entry.isDirectory()) break;
        const start =
          decoded.kind === 'directory'
            ? Buffer.concat([keySoFar, decoded.bytes, Buffer.from('/')])
            : Buffer.concat([keySoFar, decoded.bytes]);
        if (!compatible(start, prefix) || entirelyBefore(start, after)) break;
        await walk(join(dir, entry.name), [...relative, entry.name], start, prefix, after, out, onInternalFile);
        break;
      }
    }
  }
}
