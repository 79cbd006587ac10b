import type { Command } from 'commander';
import type { Vault } from '../memvault.js';
import { exitWithError, type ExitCode } from './errors.js';
import { progressBar, type Progress } from './progress.js';
import { openExistingVault, type VaultFlags } from './vault.js';
import { checkActor } from '../util/validate.js';

/** Options every lifecycle command shares: where, who asked, where the audit record goes. */
export function addLifecycleOptions(command: Command): Command {
  return command
    .option(
      '--store <url>',
      'sqlite:/abs/file.db, file:///abs/dir or s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault.db); must exist, never created',
    )
    .option('--audit-file <path>', 'append the audit record of this operation here (env MEMVAULT_AUDIT_FILE)')
    .option(
      '--actor <id>',
      'who asked (an operator or ticket id, [A-Za-z0-9._:-]), recorded in the audit record',
      'cli',
    )
    .option('--json', 'print the summary as one JSON object');
}

/** What a lifecycle command has to say once its operation is done. */
export interface LifecycleOutcome {
  text: string;
  /** The summary goes to stderr (when stdout carries the data, e.g. `user export --out -`). */
  toStderr?: boolean;
  /** Exit status when the operation ran but its check failed (keys verify). */
  exitCode?: ExitCode;
}

/**
 * The one skeleton of `user forget|export` and `keys rotate|verify`: check the arguments, open the
 * existing deployment's vault (never created), run the operation with a progress bar, close the
 * vault (`open`: with other options, e.g. history on), then print the outcome. Any failure stops the bar, runs `onFailure` (remove a partial
 * output) and ends with the CLI's one-line error and exit code.
 */
export async function lifecycleAction(
  label: string,
  flags: VaultFlags,
  operation: (vault: Vault, bar: Progress) => Promise<LifecycleOutcome>,
  hooks: { check?: () => void; onFailure?: () => Promise<void>; open?: (flags: VaultFlags) => Promise<Vault> } = {},
): Promise<void> {
  const bar = progressBar(label);
  try {
    // The same checkers as the API (src/util/validate.ts): an --actor the audit record cannot hold is refused, not dropped.
    const actor = (flags as { actor?: unknown }).actor;
    if (actor !== undefined) checkActor('--actor', actor);
    hooks.check?.();
    const vault = await (hooks.open ?? openExistingVault)(flags);
    let outcome: LifecycleOutcome;
    try {
      outcome = await operation(vault, bar);
    } finally {
      await vault.close();
    }
    bar.stop();
    (outcome.toStderr ? process.stderr : process.stdout).write(outcome.text);
    if (outcome.exitCode !== undefined) process.exitCode = outcome.exitCode;
  } catch (error) {
    bar.stop();
    await hooks.onFailure?.();
    exitWithError(error);
  }
}
