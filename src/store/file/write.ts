/**
 * Atomic writes of the embedded store: a temp file in the object's directory (named by keys.ts with
 * the writer's pid), fsync'd, renamed over the object, the directory fsync'd (util/fs.ts's policy).
 * A crash leaves the old object or the new one, never a torn one, and at most a temp file, which a
 * later listing removes once its writer is gone or it is old.
 */
import { randomBytes } from 'node:crypto';
import { link, open, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errnoOf } from '../../util/errno.js';
import { fsyncDirectory } from '../../util/fs.js';
import { OBJECT_SUFFIX, TEMP_MARKER, tempFileName } from './keys.js';
import { NO_HARD_LINKS, pidIsAlive } from './lock.js';

/** Writes an object's file bytes under its key's lock: temp file, fsync, rename over the object, fsync the directory. */
export async function writeObjectFile(
  loc: { dir: string; name: string; file: string },
  bytes: Uint8Array,
  durable: boolean,
): Promise<void> {
  await renameTempOver(loc, await writeTempFile(loc, bytes, durable), durable);
}

/** A written temp file renamed over the object (under the key's lock), then the directory fsync'd. */
export async function renameTempOver(
  loc: { dir: string; file: string },
  temp: string,
  durable: boolean,
): Promise<void> {
  try {
    await renameOver(temp, loc.file);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  if (durable) await fsyncDirectory(loc.dir);
}

/** Attempts at a temp file whose directory an empty-directory prune keeps removing. */
const TEMP_DIRECTORY_TRIES = 20;

/**
 * The object's bytes in a new temp file next to it, fsync'd when durable; its path. With
 * `ensureDirectory` (a writer that holds no lock, whose directory a prune may remove after the
 * caller's check) a missing directory is made again and the temp file tried again.
 */
export async function writeTempFile(
  loc: { dir: string; name: string },
  bytes: Uint8Array,
  durable: boolean,
  ensureDirectory?: () => Promise<void>,
): Promise<string> {
  const temp = join(loc.dir, tempFileName(loc.name, process.pid, randomBytes(8).toString('hex')));
  let handle;
  for (let attempt = 1; ; attempt++) {
    try {
      handle = await open(temp, 'wx', 0o600);
      break;
    } catch (e) {
      if (errnoOf(e) !== 'ENOENT' || !ensureDirectory || attempt >= TEMP_DIRECTORY_TRIES) throw e;
      await ensureDirectory();
    }
  }
  try {
    try {
      await handle.writeFile(bytes);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  return temp;
}

/**
 * Creates an object's file only if there is none (S3's If-None-Match: *), without the key's lock:
 * temp file, fsync, link() to the object's name, fsync the directory. link() fails with EEXIST when
 * the name is taken, atomically against every other writer (a locked one renames over an object it
 * has seen, or links too), so the check and the write are one step. Returns false when the name was
 * taken (nothing written). `ensureDirectory` recreates the directory when an empty-directory prune
 * removed it between the caller's check and the temp file.
 */
export async function createObjectFile(
  loc: { dir: string; name: string; file: string },
  bytes: Uint8Array,
  durable: boolean,
  ensureDirectory: () => Promise<void>,
): Promise<boolean> {
  return linkTempIfAbsent(loc, await writeTempFile(loc, bytes, durable, ensureDirectory), durable);
}

/**
 * The second half of createObjectFile: a written temp file linked to the object's name if none is
 * there (false: taken, nothing published), the temp name removed, the directory fsync'd.
 */
export async function linkTempIfAbsent(
  loc: { dir: string; file: string },
  temp: string,
  durable: boolean,
): Promise<boolean> {
  let created: boolean;
  try {
    created = await linkIfAbsent(temp, loc.file);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  // The temp name goes either way (linked, its inode lives on under the object's name), beside the
  // directory's fsync; a crash before this leaves it for a listing to remove (removeIfStaleTemp).
  await Promise.all([unlink(temp).catch(() => undefined), created && durable ? fsyncDirectory(loc.dir) : undefined]);
  return created;
}

/** A file system without hard links (FAT, some network and FUSE mounts): the caller takes the locked path. */
export class HardLinksUnsupportedError extends Error {
  constructor(readonly errno: string) {
    super(`hard links are not supported here (${errno})`);
  }
}

async function linkIfAbsent(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'EEXIST') return false;
    if (NO_HARD_LINKS.includes(code ?? '')) throw new HardLinksUnsupportedError(code!);
    throw e;
  }
}

async function renameOver(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await rename(from, to);
      return;
    } catch (e) {
      // Windows refuses to replace a file another process has open for reading; readers are brief.
      if (attempt >= 20 || !['EPERM', 'EACCES', 'EBUSY'].includes(errnoOf(e) ?? '')) throw e;
      await sleep(5 * (attempt + 1));
    }
  }
}

/** Temp files of a writer that crashed are removed once old; a live writer's are recent. */
export async function removeIfStaleTemp(path: string, name: string, staleMs: number): Promise<void> {
  const marker = name.indexOf(OBJECT_SUFFIX + TEMP_MARKER);
  if (marker === -1) return;
  const pid = Number(name.slice(marker + 1 + TEMP_MARKER.length).split('.')[0]);
  try {
    const info = await stat(path);
    const age = Date.now() - info.mtimeMs;
    const ownerGone = Number.isInteger(pid) && pid !== process.pid && !pidIsAlive(pid);
    // A dead owner's file may still be in use by a pid-reusing process only in theory; give it a minute.
    if (age > staleMs || (ownerGone && age > 60_000)) await unlink(path);
  } catch {
    // Raced with its writer's rename or another cleaner: nothing to do.
  }
}
