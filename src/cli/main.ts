#!/usr/bin/env node
import { Command } from 'commander';
import { registerAuditCommands } from './commands/audit.js';
import { registerChat } from './commands/chat.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExpire } from './commands/expire.js';
import { s3ConfigFrom } from './config.js';
import { openStoreWithEncryption } from './encryption.js';
import { openStore } from '../store/open.js';
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
registerExpire(program);
registerDoctor(program);
registerAuditCommands(program, {
  openStore: (url) => {
    const s3 = s3ConfigFrom();
    return openStore(url, s3 ? { s3 } : {});
  },
  // The uid is a keyed hash under the deployment's secret: read it from the configured store.
  uidOf: async (userId) => {
    const opened = await openStoreWithEncryption({});
    try {
      return opened.encryption.codecProvider.uidOf(userId);
    } finally {
      await opened.close();
    }
  },
});

await program.parseAsync(process.argv);
