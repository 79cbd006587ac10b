import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
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
  const handle = await open(temporary, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
  await fsyncDirectory(dirname(path));
}
