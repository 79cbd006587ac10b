/**
 * The name invariant: a name is a file or a directory, never both. No file exists at a path while
 * another file lies below it (README, "Paths"; docs/s3.md, "A name is a file or a directory").
 *
 * S3 has no directories and no multi-key transactions, so nothing can refuse the second of two
 * concurrent writes (`/memories/x` and `/memories/x/y.md`) before it lands. What holds on any
 * linearizable store (S3, radosgw, the file store) is "write, then check": every writer that creates
 * a name writes first and only then looks for its rival, and rolls its own write back when it finds
 * one. Of two rivals, the one whose check runs second sees the other's write (which came before
 * that other's check, which came before...): so at least one of them fails, and a success is only
 * ever reported for a write that no rival overlaps. Both may fail (each then says why; trying
 * again works). The checks cost one LIST of one key and one HEAD per ancestor, in parallel.
 */
import { MemvaultError } from '../errors.js';
import { ancestorsOf, isWithin } from './paths.js';
import type { TreeFiles } from './tree-files.js';

export type NameConflict =
  /** `ancestor` (a proper ancestor of `path`) is a file. */
  | { kind: 'ancestor-is-file'; path: string; ancestor: string }
  /** `path` is a file and files lie below it. */
  | { kind: 'file-and-directory'; path: string };

/**
 * A write that would break (or found broken) the name invariant, rolled back. The message is the
 * one the tool layer shows for the same refusal before a write (src/tool/messages.ts); commands
 * that word it differently (rename) catch it.
 */
export class NameConflictError extends MemvaultError {
  constructor(readonly conflict: NameConflict) {
    super(
      conflict.kind === 'ancestor-is-file' ? 'NOT_A_DIRECTORY' : 'NOT_A_FILE',
      conflict.kind === 'ancestor-is-file'
        ? `Error: Cannot use ${conflict.path}: ${conflict.ancestor} is a file, not a directory.`
        : `Error: ${conflict.path} is a directory, not a file.`,
    );
    this.name = 'NameConflictError';
  }
}

/** The nearest-the-root ancestor of `path` that is a file, if any (one HEAD per ancestor, in parallel). */
export async function fileAncestor(files: TreeFiles, path: string): Promise<string | null> {
  const ancestors = ancestorsOf(path);
  const kinds = await Promise.all(ancestors.map(async (a) => (await files.stat(a)) !== null));
  const index = kinds.indexOf(true);
  return index === -1 ? null : ancestors[index]!;
}

/** After a file was written at `path`: does a rival break the invariant? */
export async function fileNameConflict(files: TreeFiles, path: string): Promise<NameConflict | null> {
  const [ancestor, isDirectory] = await Promise.all([fileAncestor(files, path), files.isDirectory(path)]);
  if (ancestor !== null) return { kind: 'ancestor-is-file', path, ancestor };
  if (isDirectory) return { kind: 'file-and-directory', path };
  return null;
}

/** Paths in `paths` that are both a file and (by another path below them) a directory. */
export function filesThatAreDirectories(paths: Iterable<string>): Set<string> {
  const all = new Set(paths);
  const both = new Set<string>();
  for (const path of all) for (const a of ancestorsOf(path)) if (all.has(a)) both.add(a);
  return both;
}

/**
 * After a tree was written at `dir` (a directory rename's destination): is an ancestor of `dir` a
 * file, or is any name at or below `dir` both a file and a directory? Names in `tolerated` were
 * already both at the source (a store broken before) and are carried over as they were.
 * One HEAD per ancestor and `dir`, and one LIST per 1,000 files.
 */
export async function treeNameConflict(
  files: TreeFiles,
  dir: string,
  tolerated: ReadonlySet<string>,
): Promise<NameConflict | null> {
  const below: string[] = [];
  const [ancestor, dirFile] = await Promise.all([
    fileAncestor(files, dir),
    files.stat(dir),
    (async () => {
      for await (const file of files.listFiles(dir)) below.push(file.path);
    })(),
  ]);
  if (ancestor !== null) return { kind: 'ancestor-is-file', path: dir, ancestor };
  if (dirFile) below.push(dir);
  for (const path of filesThatAreDirectories(below)) {
    if (isWithin(path, dir) && !tolerated.has(path)) return { kind: 'file-and-directory', path };
  }
  return null;
}
