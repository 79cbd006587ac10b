import { open } from 'node:fs/promises';
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
