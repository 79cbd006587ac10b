/**
 * What the directory protocols (rename and delete of a tree) need of a command: the user's files,
 * the vault's tree locks, two limits, and the protocol's texts for the errors they answer with. The
 * texts are the tool layer's (src/tool/messages.ts), handed down by the command that calls in
 * (src/tool/commands/tree.ts), so the protocols speak the protocol's words without importing upward.
 */
import { MemvaultError } from '../../errors.js';
import type { VaultLocks } from '../locks.js';
import type { TreeFiles } from '../tree-files.js';

export interface TreeLimits {
  /** Conditional-write attempts of one step before it gives up with a conflict error. */
  maxWriteAttempts: number;
  /** How long another instance's journal must have been idle before this one resumes its rename (docs/s3.md). */
  resumeAfterMs: number;
}

/** The texts the directory protocols answer with (a subset of src/tool/messages.ts). */
export interface TreeMessages {
  ancestorIsFile(path: string, ancestor: string): string;
  conflict(path: string): string;
  deleteMissing(path: string): string;
  deletePartial(path: string, failed: number, total: number): string;
  destinationExists(path: string): string;
  renameMissing(path: string): string;
  treeBusy(path: string): string;
  treeBusyRename(path: string, from: string, to: string): string;
  treeBusyDelete(path: string, from: string): string;
}

export interface TreeEnv {
  files: TreeFiles;
  locks: VaultLocks;
  limits: TreeLimits;
  messages: TreeMessages;
}

export function fail(code: MemvaultError['code'], message: string): never {
  throw new MemvaultError(code, message);
}
