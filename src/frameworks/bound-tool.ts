/**
 * The glue every framework adapter shares: one user's memory tool, bound when it is built, run the
 * way `client.beta.messages.toolRunner` runs `vault.tool(userId)`, so that a framework's model
 * reads exactly what a toolRunner model reads (the same text, the same error flag).
 */
import { toolErrorContent } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
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
 * The user id is checked here, once, and never read from the model's input. A signal that is
 * aborted before the command starts cancels it (it rejects with the signal's reason and nothing is
 * written); a command that started runs to its end, since each command lands whole or not at all.
 */
export function bindMemoryTool(vault: Vault, userId: string, entry: string): BoundMemoryTool {
  if (typeof vault !== 'object' || vault === null || typeof (vault as Partial<Vault>).tool !== 'function')
    throw invalidArgument(`${entry}: vault`, 'a Vault from createVault()', vault);
  const tool = vault.tool(userId); // validates the user id (INVALID_USER)
  return async (input, signal) => {
    signal?.throwIfAborted();
    try {
      return { content: (await tool.run(tool.parse(input))) as ResultContent, isError: false };
    } catch (error) {
      // toolRunner's own mapping: a ToolError's content, anything else as `Error: <message>`.
      return { content: toolErrorContent(error) as ResultContent, isError: true };
    }
  };
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
