/**
 * The delete and rename of trees on a store that runs a whole operation as one transaction (the
 * SQLite store: `transaction` in src/store/port.ts, detected by transactionOf). Each is one
 * transaction: no journal, no fence markers, nothing half-done to resume, and no other instance
 * ever sees it half-done. A step that fails, or a process killed part-way, rolls every step back.
 * The answers are the journalled protocols' (operations.ts), in the same words.
 */
import { newFenceId } from '../../store/fence.js';
import type { ObjectStore } from '../../store/port.js';
import { transactionOf } from '../files/capabilities.js';
import { fileAncestor, filesThatAreDirectories, treeNameConflict } from '../names.js';
import type { ListedFile } from '../user-files.js';
import { fail, type TreeEnv } from './env.js';
import { failOnConflict } from './fences.js';
import type { TreeOperations } from './index.js';
import { deleteTree, moveFile } from './operations.js';

/** Runs `fn` as one transaction of the store (StoreTransaction in src/vault/files/capabilities.ts). */
export type Transaction = <T>(fn: () => Promise<T>) => Promise<T>;

export function transactionalTree(transaction: Transaction): TreeOperations {
  return {
    // A delete fences each file with the store's own conditional delete (deleteExactly), so inside
    // one transaction it is already all or nothing: the protocol's code, without its partial outcomes.
    remove: (path, env) => transaction(() => deleteTree(path, env)),
    rename: (from, to, env) => transaction(() => renameInOne(from, to, env)),
  };
}

async function collect(files: AsyncIterable<ListedFile>): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  for await (const file of files) out.push(file);
  return out;
}

/**
 * A file moves as the protocol moves one (a create-only copy, the source fenced `If-Match`); a
 * directory moves file by file, then the destination's names are checked: every step inside the
 * transaction, so a refusal at any point leaves the tree exactly as it was.
 */
async function renameInOne(from: string, to: string, env: TreeEnv): Promise<void> {
  const [source, below] = await Promise.all([env.files.read(from), collect(env.files.listFiles(from))]);
  if (source && below.length === 0) return moveFile(from, to, source, env);
  const sources = source ? [from, ...below.map((f) => f.path)] : below.map((f) => f.path);
  if (sources.length === 0) fail('NOT_FOUND', env.messages.renameMissing(from));
  const targetOf = (path: string): string => to + path.slice(from.length);
  const [fileAbove, destinationFile, destinationDir] = await Promise.all([
    fileAncestor(env.files, to),
    env.files.stat(to),
    env.files.isDirectory(to),
  ]);
  if (fileAbove !== null) fail('NOT_A_DIRECTORY', env.messages.ancestorIsFile(to, fileAbove));
  // Every target is storable (within the key limit), or nothing is written at all.
  for (const path of sources) env.files.assertStorable(targetOf(path));
  if (destinationFile || destinationDir) fail('ALREADY_EXISTS', env.messages.destinationExists(to));
  const op = newFenceId();
  for (const path of sources) {
    const file = await env.files.read(path);
    if (!file) continue;
    await env.files.write(targetOf(path), file.data, { ifNoneMatch: true, origin: op, deferNameCheck: true });
    await (
      await env.files.fence(path, file.etag, 'moved', op)
    ).settled;
  }
  const broken = filesThatAreDirectories(sources);
  const conflict = await treeNameConflict(env.files, to, new Set([...broken].map(targetOf)));
  if (conflict) failOnConflict(to, conflict, env);
}

/** The tree operations of a store that runs transactions; undefined for any other (the journalled protocols run). */
export function treeOperationsOf(store: ObjectStore): TreeOperations | undefined {
  const transaction = transactionOf(store);
  return transaction ? transactionalTree(transaction) : undefined;
}
