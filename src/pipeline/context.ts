import type { ErrorCode } from '../errors.js';
import type { Precondition, WriteFilter } from '../tool/commands/env.js';
import type { MemoryCommand, ResultContent } from '../tool/types.js';
import type { CommandStats } from '../store/accounting.js';
import type { TreeFiles } from '../vault/tree-files.js';
import type { CommandDecisions } from './decisions.js';

/** What one command produced: the model sees `content` (and `isError`); `code` is for logs and audit. */
export interface CommandResult {
  content: ResultContent;
  isError: boolean;
  code?: ErrorCode;
}

export type { CommandStats } from '../store/accounting.js';
export type { CommandDecisions } from './decisions.js';
export type { Precondition } from '../tool/commands/env.js';

/**
 * The state of one command as it travels through the middleware chain.
 * `input` is the untrusted object from the model. `command` is set by the validation step; after
 * the path guard, its path fields are canonical (`pathsCanonical`), and nothing below the guard
 * may act on a command whose paths are not.
 */
export interface CommandContext {
  readonly requestId: string;
  /** Pseudonymous user id (keyed hash); the only user identifier that logs and audit may carry. */
  readonly uid: string;
  readonly input: unknown;
  command?: MemoryCommand;
  pathsCanonical: boolean;
  /** The user's files; a middleware may wrap it for the commands below (the quota meters writes). */
  files: TreeFiles;
  /** Set by a middleware that must see what an edit will store (the PII redactor); the command applies it. */
  writeFilter?: WriteFilter;
  readonly stats: CommandStats;
  /** What each middleware decided, one typed field per middleware (decisions.ts). */
  readonly decisions: CommandDecisions;
  /** The host's write condition (vault.run's options): the command writes or deletes only if it holds. */
  readonly precondition?: Precondition;
  /** Who sent the command, for its audit record (a key id the operator chose; absent: the model, as before). */
  readonly actor?: string;
  /** Whose write this is, for the file's history and the pause (absent: the model's, through the tool). */
  readonly writer?: Writer;
}

/** Who writes through vault.run: the model (the tool), the person remembered (page, own token), the host. */
export type Writer = 'model' | 'person' | 'host';
export const WRITERS: readonly Writer[] = ['model', 'person', 'host'];

export type Next = () => Promise<CommandResult>;
export type Middleware = (ctx: CommandContext, next: Next) => Promise<CommandResult>;
