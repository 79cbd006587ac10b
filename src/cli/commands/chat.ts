import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { validateUserId } from '../../memvault.js';
import { exitWithError, usageError } from '../errors.js';
import { openCliVault, type VaultFlags } from '../vault.js';

interface ChatFlags extends VaultFlags {
  user: string;
  model: string;
  baseUrl?: string;
}

const SYSTEM =
  'You have a memory directory at /memories that persists between conversations. ' +
  'View it before you answer, and record what you learn about the user and their work there.';

export function registerChat(program: Command): void {
  program
    .command('chat')
    .description("talk with Claude in the terminal, with the user's memory in the vault (needs ANTHROPIC_API_KEY)")
    .requiredOption('--user <id>', 'the end user whose memory to use')
    .option('--model <model>', 'Claude model', 'claude-sonnet-5-5')
    .option('--base-url <url>', 'Messages API base URL (env ANTHROPIC_BASE_URL)')
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
    .action(async (flags: ChatFlags) => {
      if (!process.env['ANTHROPIC_API_KEY']) {
        exitWithError(
          usageError(
            'chat needs an Anthropic API key: set ANTHROPIC_API_KEY (https://console.anthropic.com/settings/keys).',
          ),
        );
      }
      let vault;
      try {
        validateUserId(flags.user);
        vault = await openCliVault(flags);
      } catch (error) {
        exitWithError(error);
      }
      // Loaded here, not at the top: the SDK is a third of the CLI's start-up, and only chat needs it.
      const { default: Anthropic } = await import('@anthropic-ai/sdk');
      const client = new Anthropic({ ...(flags.baseUrl ? { baseURL: flags.baseUrl } : {}) });
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const history: BetaMessageParam[] = [];
      process.stdout.write(`memvault chat as ${flags.user} (model ${flags.model}); an empty line or Ctrl-D ends.\n`);
      try {
        for (;;) {
          const line = await rl.question('you> ').catch(() => '');
          if (line.trim() === '') break;
          history.push({ role: 'user', content: line });
          const runner = client.beta.messages.toolRunner({
            model: flags.model,
            max_tokens: 4096,
            system: SYSTEM,
            messages: history,
            tools: [vault.tool(flags.user)],
          });
          for await (const message of runner) {
            for (const block of message.content) {
              if (block.type === 'text') process.stdout.write(`claude> ${block.text}\n`);
              if (block.type === 'tool_use')
                process.stdout.write(`  [memory ${JSON.stringify(block.input).slice(0, 120)}]\n`);
            }
          }
          // The runner's history holds the turn's tool calls and results; make sure it ends with
          // the final reply so that the next question follows it.
          const turn = [...runner.params.messages];
          const final = await runner.done();
          if (turn.at(-1)?.role !== 'assistant') turn.push({ role: 'assistant', content: final.content });
          history.splice(0, history.length, ...turn);
        }
      } catch (error) {
        exitWithError(error);
      } finally {
        rl.close();
        await vault.close();
      }
    });
}
