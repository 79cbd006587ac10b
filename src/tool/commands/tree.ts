import { createHash } from 'node:crypto';
import type { DeleteCommand, RenameCommand } from '../types.js';
import { messages } from '../messages.js';
import { encodeText } from '../text.js';
import { MemvaultError } from '../../errors.js';
import { PreconditionFailedError } from '../../store/port.js';
import { writeRetried } from '../../telemetry/signals.js';
import { isWithin, MEMORY_ROOT } from '../../vault/paths.js';
import type { ListedFile } from '../../vault/user-files.js';
import { fail, type CommandEnv } from './env.js';
import { assertWritablePath } from './edit.js';

/**
 * memvault's own bookkeeping lives in a reserved hidden directory of the user's tree, so that it is
 * encrypted and erased like the user's files. The path guard refuses it to the model.
 */
export const RESERVED_DIR = `${MEMORY_ROOT}/.memvault`;

export async function remove(command: DeleteCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (path === MEMORY_ROOT) fail('INVALID_PATH', messages.deleteRoot());
  return env.locks.withTree(env.files.uid, async () => {
    if (await env.files.stat(path)) {
      await env.files.remove(path);
      return messages.deleted(path);
    }
    const files: string[] = [];
    for await (const file of env.files.listFiles(path)) files.push(file.path);
    if (files.length === 0) fail('NOT_FOUND', messages.deleteMissing(path));
    // Batched deletes: a crash part-way leaves some files deleted and the rest whole; deleting
    // again finishes the job.
    const { failed } = await env.files.removeMany(files);
    if (failed.length > 0) throw new MemvaultError('STORE_UNAVAILABLE', `Error: ${failed.length} of ${files.length} files in ${path} could not be deleted; the rest were. Run delete again to finish.`);
    return messages.deleted(path);
  });
}

export async function rename(command: RenameCommand, env: CommandEnv): Promise<string> {
  const from = command.old_path;
  const to = command.new_path;
  if (from === MEMORY_ROOT) fail('INVALID_PATH', messages.renameRoot());
  if (to === MEMORY_ROOT || from === to) fail('ALREADY_EXISTS', messages.destinationExists(to));
  if (isWithin(to, from)) fail('INVALID_PATH', messages.renameIntoItself(from, to));
  return env.locks.withTree(env.files.uid, async () => {
    const source = await env.files.read(from);
    if (source) {
      await moveFile(from, to, source, env);
      return messages.renamed(from, to);
    }
    await moveDirectory(from, to, env);
    return messages.renamed(from, to);
  });
}

/**
 * A file: put the target only if nothing is there (`If-None-Match: *`), then delete the source
 * only if it is still the version that was copied (`If-Match`). If it was edited in between, copy
 * the newer version over our own target and try again, so no edit is lost. A crash leaves the file
 * at its old place, its new place or both; renaming again completes it (a target that already holds
 * exactly the source's bytes is taken as our own earlier copy).
 */
/**
 * S3 has no directories: a destination that is a directory (its one LIST) is an existing
 * destination, in the spec's words; one below a file is refused as such.
 */
async function assertRenameDestination(to: string, env: CommandEnv): Promise<void> {
  await assertWritablePath(to, env).catch((error: unknown) => {
    if (error instanceof MemvaultError && error.code === 'NOT_A_FILE') fail('ALREADY_EXISTS', messages.destinationExists(to));
    throw error;
  });
}

async function moveFile(from: string, to: string, source: { data: Uint8Array; etag: string }, env: CommandEnv): Promise<void> {
  await assertRenameDestination(to, env);
  let target: { etag: string };
  try {
    target = await env.files.write(to, source.data, { ifNoneMatch: true });
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
    const existing = await env.files.read(to);
    if (!existing || !sameBytes(existing.data, source.data)) fail('ALREADY_EXISTS', messages.destinationExists(to));
    target = { etag: existing.etag };
  }
  await deleteSourceKeepingEdits(from, to, source.etag, target.etag, env);
}

async function deleteSourceKeepingEdits(from: string, to: string, sourceEtag: string, targetEtag: string, env: CommandEnv): Promise<void> {
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    try {
      await env.files.remove(from, { ifMatch: sourceEtag });
      return;
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
      const newer = await env.files.read(from);
      if (!newer) return; // someone else finished the move
      writeRetried('rename');
      targetEtag = (await env.files.write(to, newer.data, { ifMatch: targetEtag })).etag;
      sourceEtag = newer.etag;
    }
  }
  fail('CONFLICT', messages.conflict(from));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

const DIRECTORY_MOVE_CONCURRENCY = 8;

/**
 * Runs `fn` over the items, at most `limit` at a time. On a failure no new item starts, and the
 * ones in flight finish before the first error is thrown: a command never returns while its
 * requests still run.
 */
async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}

function journalPath(from: string, to: string): string {
  const id = createHash('sha256').update(`${from}\u0000${to}`).digest('hex').slice(0, 32);
  return `${RESERVED_DIR}/renames/${id}`;
}

/**
 * A directory: write a journal entry, copy every file (targets `If-None-Match: *`), then delete
 * every source (`If-Match` the copied version), then drop the journal. A crash at any step leaves
 * each file whole at its old place, its new place or both; the journal lets the same rename run
 * again and finish, where it would otherwise find its own half-written destination in the way.
 */
async function moveDirectory(from: string, to: string, env: CommandEnv): Promise<void> {
  const journal = journalPath(from, to);
  const resuming = (await env.files.read(journal)) !== null;
  const sources: ListedFile[] = [];
  for await (const file of env.files.listFiles(from)) sources.push(file);
  if (sources.length === 0) {
    if (resuming) {
      await env.files.remove(journal);
      return;
    }
    fail('NOT_FOUND', messages.renameMissing(from));
  }
  if (!resuming) {
    if (await env.files.stat(to)) fail('ALREADY_EXISTS', messages.destinationExists(to));
    await assertRenameDestination(to, env);
    await env.files.write(journal, encodeText(JSON.stringify({ from, to })));
  }
  const copied: Array<{ from: string; to: string; sourceEtag: string; targetEtag: string }> = [];
  // Files move independently (each whole at its old place, new place or both), so several at once.
  await forEachLimit(sources, DIRECTORY_MOVE_CONCURRENCY, async (file) => {
    const target = to + file.path.slice(from.length);
    const source = await env.files.read(file.path);
    if (!source) return; // deleted meanwhile
    let targetEtag: string;
    try {
      targetEtag = (await env.files.write(target, source.data, { ifNoneMatch: true })).etag;
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
      // Only a resumed rename may meet its own earlier copies; bring them up to date.
      const existing = await env.files.read(target);
      if (!resuming || !existing) fail('ALREADY_EXISTS', messages.destinationExists(to));
      targetEtag = sameBytes(existing.data, source.data)
        ? existing.etag
        : (await env.files.write(target, source.data, { ifMatch: existing.etag })).etag;
    }
    copied.push({ from: file.path, to: target, sourceEtag: source.etag, targetEtag });
  });
  await forEachLimit(copied, DIRECTORY_MOVE_CONCURRENCY, (c) => deleteSourceKeepingEdits(c.from, c.to, c.sourceEtag, c.targetEtag, env));
  await env.files.remove(journal);
}

