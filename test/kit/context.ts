import type { CommandContext } from '../../src/pipeline/context.js';
import type { MemoryCommand } from '../../src/tool/types.js';
import type { TreeFiles } from '../../src/vault/tree-files.js';

let requestCounter = 0;

/** A command context as the vault would build it; `files` is a stub unless given (middlewares that never touch it). */
export function fakeContext(overrides: Partial<CommandContext> & { input: unknown }): CommandContext {
  requestCounter++;
  return {
    requestId: `req-${requestCounter}`,
    uid: 'u_3f9a0c',
    pathsCanonical: false,
    files: {} as TreeFiles,
    stats: { bytesRead: 0, bytesWritten: 0, requests: {} },
    decisions: {},
    ...overrides,
  };
}

/** A context past the path guard: the parsed command with canonical paths. */
export function canonicalContext(command: MemoryCommand, overrides: Partial<CommandContext> = {}): CommandContext {
  return fakeContext({ input: command, command, pathsCanonical: true, ...overrides });
}
