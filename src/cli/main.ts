#!/usr/bin/env node
import { Command } from 'commander';
import { registerChat } from './commands/chat.js';
import { registerExec } from './commands/exec.js';
import { registerKeys } from './commands/keys.js';
import { registerUser } from './commands/user.js';

const program = new Command()
  .name('memvault')
  .description('Storage backend for Claude\'s memory tool: run commands, chat, and operate the store.')
  .showHelpAfterError();

registerExec(program);
registerChat(program);
registerKeys(program);
registerUser(program);

await program.parseAsync(process.argv);
