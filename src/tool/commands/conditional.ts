/**
 * A host's conditional create and delete (vault.run's `precondition`; serve's PUT and DELETE with
 * If-Match / If-None-Match): read the file, compare the SHA-256 of its plaintext with the condition,
 * then write or delete on condition that the store still holds the very version read (its ETag), so
 * an edit landing in between makes the command fail (VERSION_MISMATCH) instead of being overwritten.
 * Nothing is retried: a lost condition is the answer.
 */
import { createHash } from 'node:crypto';
import { PreconditionFailedError, type UserFiles, type WriteCondition } from '../../vault/user-files.js';
import { messages } from '../messages.js';
import type { CreateCommand, DeleteCommand } from '../types.js';
import { create } from './edit.js';
import { fail, type CommandEnv, type Precondition } from './env.js';

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The store ETag of the file at `path` if its plaintext hashes to `ifMatch`, else the mismatch error. */
async function versionMatching(path: string, ifMatch: string, env: CommandEnv): Promise<string> {
  const file = await env.files.read(path, { freshness: 'write' });
  if (!file || sha256Hex(file.data) !== ifMatch) fail('VERSION_MISMATCH', messages.versionChanged(path));
  return file.etag;
}

/** `files` whose writes of `path` carry `condition` too (what the create command writes goes through it). */
function conditionedWrites(files: UserFiles, path: string, condition: WriteCondition): UserFiles {
  return {
    uid: files.uid,
    read: (p, options) => files.read(p, options),
    listFiles: (dir) => files.listFiles(dir),
    write: (p, data, own) => files.write(p, data, p === path ? { ...own, ...condition } : own),
    ...(files.dropVersionsBefore ? { dropVersionsBefore: files.dropVersionsBefore.bind(files) } : {}),
  };
}

export async function createIf(command: CreateCommand, precondition: Precondition, env: CommandEnv): Promise<string> {
  const { path } = command;
  const condition: WriteCondition =
    'ifMatch' in precondition
      ? { ifMatch: await versionMatching(path, precondition.ifMatch, env) }
      : { ifNoneMatch: true };
  // 'overwrite' leaves the store's lost condition to us (in 'fail' mode create names it ALREADY_EXISTS).
  const conditioned: CommandEnv = {
    ...env,
    createMode: 'overwrite',
    files: conditionedWrites(env.files, path, condition),
  };
  try {
    return await create(command, conditioned);
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
    fail('VERSION_MISMATCH', 'ifMatch' in precondition ? messages.versionChanged(path) : messages.versionExists(path));
  }
}

export async function removeIf(command: DeleteCommand, precondition: Precondition, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (!('ifMatch' in precondition)) fail('INVALID_INPUT', messages.preconditionUnsupported('delete with ifNoneMatch'));
  return env.locks.withTree(env.files.uid, async () => {
    const etag = await versionMatching(path, precondition.ifMatch, env);
    // Exactly that version, never a newer one: an edit since keeps the file (and the caller gets the mismatch).
    if (!(await env.tree.removeExactly(path, etag))) fail('VERSION_MISMATCH', messages.versionChanged(path));
    return messages.deleted(path);
  });
}
