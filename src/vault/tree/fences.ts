/**
 * How a tree command takes a file out of use and moves one file's content: the fence (a conditional
 * write the server enforces) and what follows a lost condition. Shared by delete, rename and the
 * directory rename (move-directory.ts).
 */
import { PreconditionFailedError } from '../user-files.js';
import type { TreeFileVersion } from '../tree-files.js';
import type { NameConflict } from '../names.js';
import { writeRetried } from '../../telemetry/signals.js';
import { fail, type TreeEnv } from './env.js';

/** Files a directory command moves or deletes at once. */
export const DIRECTORY_MOVE_CONCURRENCY = 8;

/**
 * What one fence attempt found: it landed (or had landed: our own marker, whose answer was lost),
 * or it lost to a newer version of the file (`file`), or to no file at all (deleted, moved or swept
 * by someone else: `file` undefined).
 */
type FenceAttempt = { fenced: true } | { fenced: false; file: TreeFileVersion | undefined };

/**
 * One fence of `path`, `If-Match` `etag` (TreeFiles.fence: what follows it has settled when this
 * returns). On a lost condition the path is inspected: a marker of this command's own `op` is our
 * fence (the SDK's retry met it after its answer was lost), cleaned up like a landed one. The one mechanism behind
 * `fenceAway`, `withdrawCopy` and `fenceSource`, which differ only in what they do after a loss.
 */
async function fenceOwn(
  path: string,
  etag: string,
  reason: 'moved' | 'deleted',
  op: string,
  env: TreeEnv,
): Promise<FenceAttempt> {
  try {
    await (
      await env.files.fence(path, etag, reason, op)
    ).settled;
    return { fenced: true };
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
    const state = await env.files.inspect(path);
    if (state?.marker?.op === op) {
      await cleanUpMarker(path, state.marker.etag, env);
      return { fenced: true };
    }
    return { fenced: false, file: state?.file };
  }
}

/**
 * Take a file out of use: fence it (`If-Match` the version known; on a lost condition the newer
 * version found is fenced instead, so the delete takes what is there when it lands), then clean the
 * marker up. Returns false when the file was already gone (someone else deleted, moved or swept it).
 */
export async function fenceAway(
  path: string,
  etag: string,
  reason: 'moved' | 'deleted',
  op: string,
  env: TreeEnv,
): Promise<boolean> {
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    const attempted = await fenceOwn(path, etag, reason, op, env);
    if (attempted.fenced) return true;
    if (attempted.file === undefined) return false;
    etag = attempted.file.etag;
  }
  fail('CONFLICT', env.messages.conflict(path));
}

/**
 * Take back a copy this command wrote, only as it wrote it: fence it `If-Match` the copy's own
 * version, never a newer one (unlike `fenceAway`, which takes what is there). Another instance may
 * have found the copy and edited it, and that edit is acknowledged: the lost condition then keeps
 * the copy, edit and all. A fence, not `remove(If-Match)`: on RGW 16, which ignores DELETE conditions,
 * an edit landing between a check and the DELETE would be deleted with it. Returns whether the copy was taken back
 * (false: rewritten since, and kept, or already gone).
 */
export async function withdrawCopy(path: string, etag: string, op: string, env: TreeEnv): Promise<boolean> {
  return (await fenceOwn(path, etag, 'deleted', op, env)).fenced;
}

/**
 * Delete a marker this command wrote whose PUT's answer was lost, only as it wrote it (a file
 * created over it since stays; docs/s3.md). Best effort: the fence
 * already took the file out of use, and a marker left behind is no file to anyone (a create
 * replaces it, the sweeper removes it once it is idle past the TTL).
 */
async function cleanUpMarker(path: string, etag: string, env: TreeEnv): Promise<void> {
  await env.files.remove(path, { ifMatch: etag }).catch(() => undefined);
}

/** A name conflict met at a rename's destination, in the rename's words. */
export function failOnConflict(to: string, conflict: NameConflict, env: Pick<TreeEnv, 'messages'>): never {
  if (conflict.kind === 'ancestor-is-file') fail('NOT_A_DIRECTORY', env.messages.ancestorIsFile(to, conflict.ancestor));
  fail('ALREADY_EXISTS', env.messages.destinationExists(to));
}

/**
 * The linearisation point of moving one file: replace the source, `If-Match` the version copied, by
 * a "moved" marker (a conditional PUT, which every listed server enforces). An edit of the source
 * that landed after the copy makes the fence lose: the newer version is copied over our own copy
 * (`If-Match` the copy we wrote) and the fence tried again, so no acknowledged edit is lost; an
 * editor whose write comes after the fence loses its own condition, re-reads and finds no file.
 * Then the marker is cleaned up. Returns false when the source was deleted (or swept) after it was
 * copied: a copy this command created (`withdrawable`) is taken back (fenced too, only as it wrote
 * it), as the file no longer exists. A copy it rewrote over an earlier run's copy of the same
 * directory rename (one it took over) is kept: that run may have been the one that moved the source
 * (it was paused, not dead, and woke up), and the copy is then the file's only place. So is one
 * another run rewrote since (its `origin` no longer this run's): a run that moves a source rewrites
 * its copy first, so once the source is gone its rewrite is there to be seen. (The ETag alone does
 * not tell: S3's is the MD5 of the body, the same for the same plain bytes.)
 */
export async function fenceSource(
  from: string,
  to: string,
  sourceEtag: string,
  targetEtag: string,
  op: string,
  env: TreeEnv,
  options: { origin?: string; withdrawable: boolean },
): Promise<boolean> {
  const { origin, withdrawable } = options;
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    const attempted = await fenceOwn(from, sourceEtag, 'moved', op, env);
    if (attempted.fenced) return true;
    if (attempted.file === undefined) {
      // The source was deleted (or swept) after it was copied: that came first, so the copy goes
      // too, unless someone edited it meanwhile (then their acknowledged edit stays with it).
      if (withdrawable && (origin === undefined || (await env.files.read(to))?.origin === origin))
        await withdrawCopy(to, targetEtag, op, env);
      return false;
    }
    writeRetried('rename');
    try {
      const copyOptions =
        origin !== undefined ? { ifMatch: targetEtag, origin, deferNameCheck: true } : { ifMatch: targetEtag };
      targetEtag = (await env.files.write(to, attempted.file.data, copyOptions)).etag;
    } catch (copyError) {
      // Both the source and our copy were edited: neither may be overwritten. Both stay whole.
      if (copyError instanceof PreconditionFailedError) fail('CONFLICT', env.messages.conflict(from));
      throw copyError;
    }
    sourceEtag = attempted.file.etag;
  }
  fail('CONFLICT', env.messages.conflict(from));
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
