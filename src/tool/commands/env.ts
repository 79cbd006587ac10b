import { PreconditionFailedError } from '../../vault/user-files.js';
import { writeRetried } from '../../telemetry/signals.js';
import type { VaultLocks } from '../../vault/locks.js';
import type { UserFiles } from '../../vault/user-files.js';
import type { TreeOperation, TreeOperations } from '../../vault/tree/index.js';

export { fail } from '../../vault/tree/env.js';

export interface CommandLimits {
  /** Characters of file text (or listing) one view returns before it says how to page on. */
  viewChars: number;
  /** Bytes one file may hold (plaintext). */
  maxFileBytes: number;
  /** Bytes of an image that view returns as an image block. */
  maxImageBytes: number;
  /** Conditional-write attempts of one edit before it gives up with a conflict error. */
  maxWriteAttempts: number;
  /**
   * How long a directory rename journalled by another vault instance must have been idle before
   * this one resumes it (its instance presumed dead; docs/s3.md, "Directory rename journals").
   * A host that knows the other instance is gone (a restart) may set it lower.
   */
  resumeAfterMs: number;
}

export const DEFAULT_LIMITS: CommandLimits = {
  viewChars: 16_000,
  maxFileBytes: 1024 * 1024,
  maxImageBytes: 5 * 1024 * 1024,
  maxWriteAttempts: 20,
  resumeAfterMs: 2 * 60 * 1000,
};

/**
 * What the chain may do to an edit's result before it is written (the PII redactor hands one
 * down): the command applies the edit to the text as stored, and writes what `edited` returns.
 */
/** What a write filter stores for an edit. */
export interface StoredEdit {
  text: string;
  /**
   * The filter redacted text the file already held (not only what the edit brought in): the file's
   * earlier kept versions hold it too, and are dropped once the edit is written (docs/pii.md,
   * "Redaction and file history").
   */
  redactedStored: boolean;
}

export interface WriteFilter {
  /** The text to store for an edit that turned `before` into `after`; throws a MemvaultError to refuse the edit. */
  edited(path: string, before: string, after: string): StoredEdit;
  /** How `oldStr` reads once stored, if that differs (values the model wrote were redacted), else undefined. */
  storedForm(oldStr: string): string | undefined;
}

/**
 * A host's condition on a create or delete: `ifMatch` the hex SHA-256 of the file's current plaintext
 * (the file must exist and hold exactly that), or `ifNoneMatch: '*'` (create only: no file at the path).
 */
export type Precondition = { readonly ifMatch: string } | { readonly ifNoneMatch: '*' };

/** How the vault runs every command (src/entry/chain.ts), before a user's files are known. */
export interface CommandSettings {
  /** Applied to the result of str_replace and insert before it is written (absent: written as is). */
  writeFilter?: WriteFilter;
  locks: VaultLocks;
  limits: CommandLimits;
  /** 'overwrite': create replaces an existing file (what the model is told); 'fail': the reference error. */
  createMode: 'overwrite' | 'fail';
  /**
   * The delete and rename of trees: a store that runs a whole command as one transaction hands its
   * own; absent, the journalled protocols over the object store (src/vault/tree/).
   */
  tree?: TreeOperations;
}

/** The user's tree operations, bound to their files (command-env.ts): what delete and rename call. */
export interface UserTree {
  remove(path: string): Promise<void>;
  /** Delete the file at `path` only as version `etag` (no directory, no newer version); false when it is not that. */
  removeExactly(path: string, etag: string): Promise<boolean>;
  rename(from: string, to: string): Promise<void>;
  /** Finish the user's renames a stopped runner left part-way, but `except` (the command's own). */
  finishStopped(except?: TreeOperation): Promise<number>;
}

/** What one command runs with: the user's files as a command sees them, and their tree operations. */
export interface CommandEnv extends Omit<CommandSettings, 'tree'> {
  files: UserFiles;
  tree: UserTree;
}

/**
 * Optimistic concurrency: run a read-modify-write until its conditional write wins, re-reading
 * each time (so the edit is re-applied to what is there now), with a jittered backoff.
 */
export async function retryOnConflict<T>(
  attempts: number,
  onExhausted: () => never,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
      if (i + 1 < attempts) writeRetried('edit');
      // Full jitter, growing to 1 s: contending processes spread out instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(1000, 10 * 2 ** i)));
    }
  }
  return onExhausted();
}
