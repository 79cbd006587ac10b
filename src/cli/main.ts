#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, type Option } from 'commander';
import { registerAuditCommands } from './commands/audit.js';
import { registerBackup } from './commands/backup.js';
import { registerChat } from './commands/chat.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExpire } from './commands/expire.js';
import { storeUrlFrom } from './config.js';
import { openCliStore, openStoreWithEncryption } from './store.js';
import { auditPseudonymsOf } from '../audit/pseudonyms.js';
import { isMemvaultError, MemvaultError } from '../errors.js';
import { registerExec } from './commands/exec.js';
import { registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerServe } from './commands/serve.js';
import { registerUser } from './commands/user.js';
import { EXIT, reportError } from './errors.js';

/** src/cli/main.ts and dist/cli/main.js both sit two levels below package.json. */
function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string })
        .version ?? 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

const program = new Command()
  .name('memvault')
  .description(
    "Storage backend for Claude's memory tool: run commands, chat, and operate the store.\nExit codes: 0 done, 1 a check failed, 2 usage or configuration error, 3 runtime error.",
  )
  .version(packageVersion(), '-V, --version', 'print the memvault version')
  // Usage errors come back here as CommanderError (exit code 2, below), each as one line.
  .exitOverride()
  .configureOutput({
    outputError: (text, write) => write(`memvault: ${text.replace(/^error: /, '').trimEnd()} (see --help)\n`),
  });

registerExec(program);
registerChat(program);
registerKeys(program);
registerUser(program);
registerExpire(program);
registerDoctor(program);
registerServe(program);
registerMigrate(program);
registerBackup(program);
registerAuditCommands(program, {
  // Audit segments are read, never written: a missing store directory is an error, not a new store.
  openStore: (url) => openCliStore(url),
  // The uid is a keyed hash under the deployment's secret: read it from the data store
  // (--data-store, else MEMVAULT_STORE, else the default), which must already exist.
  auditKeyOf: async (dataStore) => {
    const opened = await openStoreWithEncryption(storeUrlFrom({ store: dataStore }));
    try {
      return opened.encryption.codecProvider.auditMacKey();
    } finally {
      await opened.close();
    }
  },
  uidOf: async (userId, dataStore) => {
    const opened = await openStoreWithEncryption(storeUrlFrom({ store: dataStore }));
    try {
      // Audit records name a user by a pseudonym keyed by the user's own key (src/audit/pseudonyms.ts):
      // without the key (an erased user) their records cannot be found, by design.
      const provider = opened.encryption.codecProvider;
      let userCodec;
      try {
        userCodec = await provider.forUid(provider.uidOf(userId));
      } catch (error) {
        if (isMemvaultError(error, 'NOT_FOUND'))
          throw new MemvaultError(
            'NOT_FOUND',
            'this user has no key in the data store (never stored anything, or was erased): their audit records cannot be linked to the id; pass --uid if you know their audit uid',
          );
        throw error;
      }
      return auditPseudonymsOf(userCodec, provider).uid;
    } finally {
      await opened.close();
    }
  },
});
markRequiredOptions(program);

/** Help shows which options are required (commander lists them like any other). */
function markRequiredOptions(command: Command): void {
  for (const option of command.options as Option[]) {
    if (option.mandatory && !option.description.endsWith('(required)'))
      option.description = `${option.description} (required)`;
  }
  for (const sub of command.commands) markRequiredOptions(sub);
}

try {
  if (process.argv.length <= 2) {
    process.stderr.write(program.helpInformation());
    process.exitCode = EXIT.usage;
  } else {
    await program.parseAsync(process.argv);
  }
} catch (error) {
  if (error instanceof CommanderError && !(error instanceof InvalidArgumentError)) {
    // --help and --version end through here too, successfully; commander already printed its line.
    const done =
      ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code) && error.exitCode === 0;
    process.exitCode = done ? EXIT.ok : EXIT.usage;
  } else {
    process.exitCode = reportError(error);
  }
}
