/**
 * The vault's command runner: run(userId, input) loads the user's key, sends the command down the
 * chain and answers with a result, never a throw; and the memory tool's handlers over it.
 */
import { randomUUID } from 'node:crypto';
import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { AuditPseudonyms } from '../audit/index.js';
import { validateUserId } from '../crypto/user-id.js';
import { loggableError, MemvaultError } from '../errors.js';
import { GatedFiles } from '../pipeline/gated-files.js';
import type { CommandContext, CommandResult, Writer } from '../pipeline/context.js';
import { withErrorBoundary } from '../pipeline/error-result.js';
import { observeCommands } from '../pipeline/telemetry.js';
import { withCommandStats, withRequestCounter, type CommandStats } from '../store/accounting.js';
import { messages } from '../tool/messages.js';
import type { ResultContent } from '../tool/types.js';
import type { StoreUserFiles } from '../vault/store-user-files.js';
import type { CommandIdentities } from './audit.js';
import { checkExtraProps, checkRunOptions } from './arguments.js';
import type { VaultLogger } from './logger.js';
import type { MemoryToolExtraProps } from './vault-types.js';

export interface RunnerDeps {
  openUser: (userId: string, writer?: Writer) => Promise<{ files: StoreUserFiles; pseudonyms: AuditPseudonyms }>;
  runChain: (ctx: CommandContext) => Promise<CommandResult>;
  identities: CommandIdentities;
  logger: VaultLogger | undefined;
}

export function commandRunner({
  openUser,
  runChain,
  identities,
  logger,
}: RunnerDeps): (userId: string, input: unknown, options?: unknown) => Promise<CommandResult> {
  const runOne = async (userId: string, input: unknown, options: unknown): Promise<CommandResult> => {
    const stats: CommandStats = { bytesRead: 0, bytesWritten: 0, requests: {} };
    const requestId = randomUUID();
    let uid: string | undefined;
    // The one error boundary: whatever the key load, a middleware or a command throws becomes the
    // model's answer here (run() answers with a result, never a throw); faults are logged by name only.
    return withErrorBoundary(
      async () => {
        // Checked before the key load: an invalid option is the host's error, answered before anything is read.
        const { precondition, actor, writer, signal } = checkRunOptions(options);
        if (signal) stopIfAborted(signal);
        // Loading the user's key (GET, and PUT the very first time) is part of this command's cost:
        // count it into the command's stats, which metrics and the audit record read.
        const { files, pseudonyms } = await withRequestCounter(stats.requests, () => openUser(userId, writer));
        uid = files.uid;
        const ctx: CommandContext = {
          requestId,
          uid,
          input,
          pathsCanonical: false,
          // With a signal, the command stops at its first change once the signal fired (gated-files.ts).
          files: signal ? new GatedFiles(files, () => stopIfAborted(signal)) : files,
          stats,
          decisions: {},
          ...(precondition !== undefined ? { precondition } : {}),
          ...(actor !== undefined ? { actor } : {}),
          ...(writer !== undefined ? { writer } : {}),
        };
        identities.rawUserIds.set(ctx, userId);
        identities.pseudonyms.set(ctx, pseudonyms);
        return withCommandStats(stats, () => runChain(ctx));
      },
      (error) =>
        logger?.error(
          { requestId, ...(uid !== undefined ? { uid } : {}), err: loggableError(error) },
          'memvault command failed',
        ),
    );
  };
  const observed = observeCommands((userId, input) => runOne(userId, input, undefined));
  // Without options, the one observed runner; with them, a runner observed the same way for this call.
  return (userId, input, options) =>
    options === undefined ? observed(userId, input) : observeCommands((u, i) => runOne(u, i, options))(userId, input);
}

function stopIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new MemvaultError('ABORTED', messages.aborted());
}

function toHandlerResult(result: CommandResult): ResultContent {
  // ToolError content reaches the model verbatim with is_error: true, so spec strings stay exact.
  if (result.isError) throw new ToolError(result.content);
  return result.content;
}

/** One user's tool call: any input through the chain, an error result thrown as the SDK's ToolError. */
export function toolCallOver(
  run: (userId: string, input: unknown) => Promise<CommandResult>,
): (userId: string) => (input: unknown) => Promise<ResultContent> {
  return (userId) => {
    validateUserId(userId);
    return async (input: unknown) => toHandlerResult(await run(userId, input));
  };
}

export function handlersOver(
  run: (userId: string, input: unknown) => Promise<CommandResult>,
): (userId: string) => MemoryToolHandlers {
  const callFor = toolCallOver(run);
  return (userId) => handlersOf(callFor(userId));
}

function handlersOf(call: (input: unknown) => Promise<ResultContent>): MemoryToolHandlers {
  return { view: call, create: call, str_replace: call, insert: call, delete: call, rename: call };
}

/**
 * `vault.tool(userId, extraProps)`: betaMemoryTool over the handlers, with every input sent through
 * the chain whatever its command. betaMemoryTool's own dispatch answers an unknown command with
 * "chmod not implemented", and looks a command such as "toString" up on Object.prototype, where the
 * protocol's answer is memvault's INVALID_INPUT.
 */
export function memoryToolOver(run: (userId: string, input: unknown) => Promise<CommandResult>) {
  const callFor = toolCallOver(run);
  return (userId: string, extraProps?: MemoryToolExtraProps): ReturnType<typeof betaMemoryTool> => {
    // The user id is checked once, here (an invalid one throws before extraProps is looked at).
    const call = callFor(userId);
    checkExtraProps(extraProps);
    return { ...betaMemoryTool(handlersOf(call), extraProps), run: call };
  };
}
