import type { Command } from 'commander';
import { createLocalKeyProvider, keyProviderFromConfig, loadOrCreateLocalMasterKey, rotateKeys } from '../../crypto/index.js';
import { exitWithError, usageError } from '../errors.js';
import { openStoreWithEncryption } from '../encryption.js';
import { progressBar } from '../progress.js';

interface RotateFlags {
  store?: string;
  toMasterKeyFile?: string;
  toKmsKeyId?: string;
  json?: boolean;
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('master key operations');
  keys
    .command('rotate')
    .description(
      "re-wrap every user's data key (and the deployment record) under a new master key or KMS key, without re-encrypting content; " +
        'resumable, and safe while the service runs. The current key comes from the usual configuration (MEMVAULT_MASTER_KEY, MEMVAULT_MASTER_KEY_FILE, MEMVAULT_KMS_KEY_ID).',
    )
    .option('--store <url>', 'file:///abs/dir or s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault)')
    .option('--to-master-key-file <path>', 'the new local master key file (created, mode 0600, when it does not exist)')
    .option('--to-kms-key-id <id>', 'the new AWS KMS key id or ARN')
    .option('--json', 'print the summary as one JSON object')
    .action(async (flags: RotateFlags) => {
      if (Boolean(flags.toMasterKeyFile) === Boolean(flags.toKmsKeyId)) {
        exitWithError(usageError('give exactly one of --to-master-key-file and --to-kms-key-id'));
      }
      const bar = progressBar('keys rotate');
      try {
        const opened = await openStoreWithEncryption(flags);
        try {
          let to;
          if (flags.toKmsKeyId) {
            to = (await keyProviderFromConfig({ kms: { keyId: flags.toKmsKeyId } })).keyProvider;
          } else {
            const { masterKey, created } = await loadOrCreateLocalMasterKey(flags.toMasterKeyFile!);
            if (created) process.stderr.write(`memvault: created a new master key at ${flags.toMasterKeyFile}; back it up before you retire the old one.\n`);
            to = await createLocalKeyProvider(masterKey);
          }
          const result = await rotateKeys({
            store: opened.store,
            from: [opened.encryption.keyProvider, ...opened.encryption.previousKeyProviders],
            to,
            onProgress: (p) => bar.update(p.done, p.total),
          });
          bar.stop();
          if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
          else process.stdout.write(`keys rotate: ${result.total} key records, ${result.rewrapped} re-wrapped, ${result.skipped} already done. Switch the service to the new key now; keep the old one until every instance has.\n`);
        } finally {
          await opened.close();
        }
      } catch (error) {
        bar.stop();
        exitWithError(error);
      }
    });
}
