/**
 * The glue every framework adapter shares: one user's memory tool, bound when it is built, run the
 * way `client.beta.messages.toolRunner` runs `vault.tool(userId)`, so that a framework's model
 * reads exactly what a toolRunner model reads (the same text, the same error flag).
 */
import type { Vault } from '../entry/vault-types.js';
import type { ResultContent } from '../tool/types.js';
import { invalidArgument } from '../util/validate.js';

/** What one command answered: the tool_result content and whether it is an error result. */
export interface ToolAnswer {
  content: ResultContent;
  isError: boolean;
}

/** Runs one tool input for the bound user; never throws for a command that failed (isError says so). */
export type BoundMemoryTool = (input: unknown, signal?: AbortSignal) => Promise<ToolAnswer>;

/**
 * The user id is checked here, once, and never read from the model's input. Each call is
 * `vault.run`, the runner under `vault.tool(userId).run` (the same chain, content and error flag as
 * under toolRunner), given the framework's signal: a call whose signal fired before the command's
 * first change (before it started, or while it waited for its lock or a read) rejects with the
 * signal's reason and changes nothing; a command that has written runs to its end, since each
 * command lands whole or not at all.
 */
export function bindMemoryTool(vault: Vault, userId: string, entry: string): BoundMemoryTool {
  if (!isVault(vault)) throw invalidArgument(`${entry}: vault`, 'a Vault from createVault()', vault);
  vault.tool(userId); // validates the user id (INVALID_USER) when the tool is built
  return async (input, signal) => {
    signal?.throwIfAborted();
    const result = await vault.run(userId, input, signal ? { signal } : undefined);
    // Cancelled by the signal: the framework gets its own abort, as from any other aborted call.
    if (result.code === 'ABORTED') signal?.throwIfAborted();
    return { content: result.content, isError: result.isError };
  };
}

function isVault(value: unknown): value is Vault {
  const vault = value as Partial<Vault> | null;
  return (
    typeof vault === 'object' && vault !== null && typeof vault.tool === 'function' && typeof vault.run === 'function'
  );
}

/** The text blocks of a result joined, for frameworks whose tool output is a string. */
export function textOf(content: ResultContent): string {
  return typeof content === 'string'
    ? content
    : content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('\n');
}

/**
 * An error result thrown where a framework turns a throw into the model's error result. Its
 * toString() is the message alone (the AI SDK sends `String(error)`), so the model reads the
 * protocol's text, not "MemoryToolResultError: ..." before it.
 */
export class MemoryToolResultError extends Error {
  constructor(content: ResultContent) {
    super(textOf(content));
    this.name = 'MemoryToolResultError';
  }
  override toString(): string {
    return this.message;
  }
}
