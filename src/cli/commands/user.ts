import { createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import { exportUser, forgetUser } from '../../crypto/index.js';
import { validateUserId } from '../../memvault.js';
import { exitWithError } from '../errors.js';
import { openStoreWithEncryption } from '../encryption.js';
import { progressBar } from '../progress.js';

interface UserFlags {
  store?: string;
  user: string;
  json?: boolean;
}

export function registerUser(program: Command): void {
  const user = program.command('user').description('per-user data subject operations (erasure, access and portability)');
  user
    .command('forget')
    .description("erase a user: destroys the user's wrapped data key first, then deletes their objects; afterwards nothing of the user can be decrypted, even from old object versions or backups without that key record")
    .requiredOption('--user <id>', 'the user id as the host application knows it')
    .option('--store <url>', 'file:///abs/dir or s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (flags: UserFlags) => {
      const bar = progressBar('user forget');
      try {
        validateUserId(flags.user);
        const opened = await openStoreWithEncryption(flags);
        try {
          const result = await forgetUser({
            store: opened.store,
            codecProvider: opened.encryption.codecProvider,
            userId: flags.user,
            onProgress: (p) => {
              if (p.phase === 'objects') bar.update(p.deleted, p.total);
            },
          });
          bar.stop();
          if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
          else process.stdout.write(`user forget: key ${result.keyDeleted ? 'destroyed' : 'was already gone'}, ${result.objectsDeleted} objects deleted (uid ${result.uid}).\n`);
        } finally {
          await opened.close();
        }
      } catch (error) {
        bar.stop();
        exitWithError(error);
      }
    });
  user
    .command('export')
    .description("write all of a user's files, decrypted, into a tar archive (access and portability requests)")
    .requiredOption('--user <id>', 'the user id as the host application knows it')
    .requiredOption('--out <file>', 'the archive to write (.tar)')
    .option('--store <url>', 'file:///abs/dir or s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (flags: UserFlags & { out: string }) => {
      const bar = progressBar('user export');
      try {
        validateUserId(flags.user);
        const opened = await openStoreWithEncryption(flags);
        try {
          const result = await exportUser({
            store: opened.store,
            codecProvider: opened.encryption.codecProvider,
            userId: flags.user,
            out: createWriteStream(flags.out, { mode: 0o600 }),
            onProgress: (p) => bar.update(p.files),
          });
          bar.stop();
          if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
          else process.stdout.write(`user export: ${result.files} files, ${result.bytes} bytes written to ${flags.out}.\n`);
        } finally {
          await opened.close();
        }
      } catch (error) {
        bar.stop();
        exitWithError(error);
      }
    });
}
