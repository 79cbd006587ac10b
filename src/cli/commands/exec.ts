import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { Vault } from '../../memvault.js';
import { validateUserId } from '../../memvault.js';
import { exitWithError } from '../errors.js';
import { openCliVault, type VaultFlags } from '../vault.js';

interface ExecFlags extends VaultFlags {
  user: string;
}

/** One line of output per command: what the model would receive. */
async function runLine(vault: Vault, user: string, line: string): Promise<string> {
  let input: unknown;
  try {
    input = JSON.parse(line);
  } catch {
    return JSON.stringify({
      content: 'Error: the command is not valid JSON; give one JSON object per line.',
      is_error: true,
    });
  }
  const result = await vault.run(user, input);
  return JSON.stringify({ content: result.content, is_error: result.isError });
}

export function registerExec(program: Command): void {
  program
    .command('exec')
    .description(
      'run memory tool commands (JSON) for one user; with no JSON argument, one command per line of standard input',
    )
    .requiredOption('--user <id>', 'the end user whose memory to use')
    .option(
      '--store <url>',
      'sqlite:/abs/file.db, file:///abs/dir, s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault.db)',
    )
    .option(
      '--audit-file <path>',
      'write audit records as JSON lines to this file (env MEMVAULT_AUDIT_FILE); several processes may share it',
    )
    .option(
      '--audit-checkpoints <path>',
      'append the chain head to this file, the tail witness for audit verify --checkpoints (env MEMVAULT_AUDIT_CHECKPOINT_FILE); keep it elsewhere',
    )
    .argument('[json]', 'one command, e.g. \'{"command":"view","path":"/memories"}\'')
    .action(async (json: string | undefined, flags: ExecFlags) => {
      let vault: Vault;
      try {
        validateUserId(flags.user);
        vault = await openCliVault(flags);
      } catch (error) {
        exitWithError(error);
      }
      try {
        if (json !== undefined) {
          process.stdout.write(`${await runLine(vault, flags.user, json)}\n`);
        } else {
          const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
          for await (const line of lines) {
            if (line.trim() === '') continue;
            process.stdout.write(`${await runLine(vault, flags.user, line)}\n`);
          }
        }
      } catch (error) {
        exitWithError(error);
      } finally {
        await vault.close();
      }
    });
}
