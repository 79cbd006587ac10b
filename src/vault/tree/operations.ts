/**
 * The delete and the rename of a file or a directory, as the object-store protocols run them: a
 * directory delete fences every file; a file rename copies create-only and fences the source; a
 * directory rename is journalled (move-directory.ts). Each runs under the user's tree lock, held by
 * the caller, and answers by returning (the caller says what was done) or with a MemvaultError.
 */
import { createHash } from 'node:crypto';
import { MemvaultError } from '../../errors.js';
import { newFenceId } from '../../store/fence.js';
import { forEachLimit } from '../../util/concurrency.js';
import { fileNameConflict, NameConflictError } from '../names.js';
import { PreconditionFailedError, type ListedFile } from '../user-files.js';
import { fail, type TreeEnv } from './env.js';
import { DIRECTORY_MOVE_CONCURRENCY, failOnConflict, fenceAway, fenceSource, sameBytes } from './fences.js';
import { moveDirectory } from './move-directory.js';

async function collect(files: AsyncIterable<ListedFile>): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  for await (const file of files) out.push(file);
  return out;
}

/** Delete the file or the directory at `path` (not /memories: the caller refuses it). */
export async function deleteTree(path: string, env: TreeEnv): Promise<void> {
  // A name is a file or a directory; on a store where it is both (written by an older version, or
  // by hand), delete takes both halves, so nothing of the name is left behind.
  const [file, below] = await Promise.all([
    env.files.stat(path, { forFence: true }),
    collect(env.files.listFiles(path)),
  ]);
  const op = newFenceId();
  if (file && below.length === 0) {
    await fenceAway(path, file.etag, 'deleted', op, env);
    return;
  }
  const files = below.map((f) => ({ path: f.path, etag: f.etag }));
  if (file) files.push({ path, etag: file.etag });
  if (files.length === 0) fail('NOT_FOUND', env.messages.deleteMissing(path));
  // Not journalled: a journal is a file, which the quota would count, and a user at the quota
  // must still be able to delete. Each file is fenced (a conditional PUT of a "deleted" marker
  // over the version listed, or over a newer one it finds), so an edit racing the delete either
  // lands first (and is deleted with the file) or loses at the server and finds no file. A crash
  // part-way leaves some files deleted and the rest whole; deleting again finishes the job.
  let failed = 0;
  await forEachLimit(files, DIRECTORY_MOVE_CONCURRENCY, async (f) => {
    try {
      await fenceAway(f.path, f.etag, 'deleted', op, env);
    } catch {
      failed += 1;
    }
  });
  if (failed > 0) throw new MemvaultError('STORE_UNAVAILABLE', env.messages.deletePartial(path, failed, files.length));
}

/** The rename of a file or a directory (the caller has refused /memories and a move into itself). */
export async function renameTree(from: string, to: string, env: TreeEnv): Promise<void> {
  const [source, below] = await Promise.all([env.files.read(from), collect(env.files.listFiles(from))]);
  if (source && below.length === 0) return moveFile(from, to, source, env);
  // A directory; on a store where the name is also a file, the file moves with it (to `to`).
  await moveDirectory(
    from,
    to,
    source
      ? [{ path: from, size: source.data.byteLength, lastModified: source.lastModified, etag: source.etag }, ...below]
      : below,
    env,
  );
}

/**
 * The `origin` a file rename's copy carries: derived from the source's path and the version copied
 * (its ETag), so that the same rename run again after a crash finds its copy, and nothing else is
 * taken for one (a file created at the destination carries no origin; an edit drops it). Hashed, so
 * no path is written in the clear into the copy's metadata.
 */
export function renameOrigin(from: string, sourceEtag: string): string {
  return `rename-${createHash('sha256').update(from).update('\0').update(sourceEtag).digest('hex').slice(0, 32)}`;
}

/**
 * A file: put the target only if nothing is there (`If-None-Match: *`), then delete the source
 * only if it is still the version that was copied (`If-Match`). If it was edited in between, copy
 * the newer version over our own target and try again, so no edit is lost. A crash leaves the file
 * at its old place, its new place or both; renaming again completes it: a target that this rename
 * wrote (its origin, renameOrigin, and the source's bytes) is taken as our own earlier copy. Any
 * other file at the destination, even one with the same bytes, is refused: a rename never overwrites.
 */
export async function moveFile(
  from: string,
  to: string,
  source: { data: Uint8Array; etag: string },
  env: TreeEnv,
): Promise<void> {
  const origin = renameOrigin(from, source.etag);
  // No look at the destination before the copy: its create-only PUT refuses a file there, and the
  // check the created name runs after it lands (src/vault/names.ts) a directory there or a file
  // above it, taking the copy back before the error.
  let target: { etag: string };
  try {
    target = await env.files.write(to, source.data, { ifNoneMatch: true, origin });
  } catch (error) {
    if (error instanceof NameConflictError) failOnConflict(to, error.conflict, env);
    if (!(error instanceof PreconditionFailedError)) throw error;
    const existing = await env.files.read(to);
    if (!existing || existing.origin !== origin || !sameBytes(existing.data, source.data))
      fail('ALREADY_EXISTS', env.messages.destinationExists(to));
    target = { etag: existing.etag };
    // Our own earlier (or answer-lost) copy: the check its write would have run after landing.
    const conflict = await fileNameConflict(env.files, to);
    if (conflict) failOnConflict(to, conflict, env);
  }
  if (!(await fenceSource(from, to, source.etag, target.etag, newFenceId(), env, { origin, withdrawable: true })))
    fail('NOT_FOUND', env.messages.renameMissing(from));
}
