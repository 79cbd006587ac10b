import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { hasErrno } from './errno.js';

/**
 * Codes with which a platform refuses to open or fsync a directory (Windows, some network file
 * systems). The rename being made durable is atomic all the same, so these are not failures.
 */
const DIRECTORY_SYNC_UNSUPPORTED = ['EISDIR', 'EPERM', 'EACCES', 'EINVAL', 'ENOTSUP'];

/**
 * Makes a directory's entries (a file just created or renamed into it) durable: the one directory
 * fsync. Policy: a platform that cannot sync directories is not an error; any other failure (EIO,
 * ENOSPC, the directory gone) is thrown, since the caller was promised durability.
 */
export async function fsyncDirectory(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, 'r');
    await handle.sync();
  } catch (error) {
    if (!hasErrno(error, ...DIRECTORY_SYNC_UNSUPPORTED)) throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * `fsyncDirectory` for synchronous callers (the audit writer seals a segment inside one turn of the
 * event loop); the same policy.
 */
export function fsyncDirectorySync(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (!hasErrno(error, ...DIRECTORY_SYNC_UNSUPPORTED)) throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The one temp-file-and-rename writer, in two steps around the caller's own writing (a stream, a
 * pipeline): `temporaryPathFor(path)` names a file beside the target (same directory, so the rename
 * is atomic), and `commitTemporary` makes its bytes durable (fsync), renames it over the target and
 * makes the rename durable (directory fsync). A crash leaves the old target or the new one whole,
 * and a failed write leaves only the temporary, which the caller removes.
 */
export function temporaryPathFor(path: string): string {
  return `${path}.${randomBytes(4).toString('hex')}.partial`;
}

export async function commitTemporary(temporary: string, path: string): Promise<void> {
  await syncFile(temporary);
  await rename(temporary, path);
  await fsyncDirectory(dirname(path));
}

/** The codes with which link(2) says the file system has no hard links (FAT, some network and FUSE mounts). */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'ENOSYS', 'EOPNOTSUPP'];

/**
 * `commitTemporary` for a target that must not exist: it never replaces a file it did not write.
 * The temporary is made durable, then link(2)ed to the target's name, which fails with EEXIST when
 * anything is there by then (the look and the publish are one step, unlike a stat before a long
 * write and a rename after it); the temporary's name is then removed and the directory synced.
 * On EEXIST the error is thrown and the temporary left for the caller to remove. A file system
 * without hard links takes the name with an exclusive create (O_EXCL, EEXIST likewise) and renames
 * the temporary over that empty file of its own; a crash in between leaves that empty file.
 */
export async function publishTemporary(temporary: string, path: string): Promise<void> {
  await syncFile(temporary);
  try {
    await link(temporary, path);
  } catch (error) {
    if (!hasErrno(error, ...NO_HARD_LINKS)) throw error;
    await (await open(path, 'wx', 0o600)).close();
    await rename(temporary, path);
    await fsyncDirectory(dirname(path));
    return;
  }
  await unlink(temporary);
  await fsyncDirectory(dirname(path));
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
