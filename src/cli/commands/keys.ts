import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { createLocalKeyProvider, keyProviderFromConfig, loadOrCreateLocalMasterKey } from '../../crypto/index.js';
import { EXIT, exitWithError, usageError } from '../errors.js';
import type { VaultFlags } from '../vault.js';
import { addLifecycleOptions, lifecycleAction } from '../lifecycle.js';

interface RotateFlags extends VaultFlags {
  toMasterKeyFile?: string;
  toKmsKeyId?: string;
  json?: boolean;
  actor?: string;
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('master key operations');
  keys
    .command('create')
    .description('create a new local master key file (32 random bytes, base64, mode 0600); refuses to replace an existing file')
    .requiredOption('--out <path>', 'where to write the key file (required)')
    .action(async (flags: { out: string }) => {
      try {
        if (existsSync(flags.out)) throw usageError(`${flags.out} already exists; a key file is never replaced (it may be the only way to read memories)`);
        const { masterKey, created } = await loadOrCreateLocalMasterKey(flags.out);
        masterKey.fill(0);
        if (!created) throw usageError(`${flags.out} already exists; a key file is never replaced (it may be the only way to read memories)`);
        process.stdout.write(`keys create: wrote a new master key to ${flags.out} (mode 0600). Back it up; then set MEMVAULT_MASTER_KEY_FILE=${flags.out}.\n`);
      } catch (error) {
        exitWithError(error);
      }
    });
  addLifecycleOptions(
    keys
      .command('rotate')
      .description(
        "re-wrap every user's data key (and the deployment record) under a new master key or KMS key, without re-encrypting content; " +
          'resumable, and safe while the service runs. The current key comes from the usual configuration (MEMVAULT_MASTER_KEY, MEMVAULT_MASTER_KEY_FILE, MEMVAULT_KMS_KEY_ID).',
      )
      .option('--to-master-key-file <path>', 'the new local master key file (created, mode 0600, when it does not exist)')
      .option('--to-kms-key-id <id>', 'the new AWS KMS key id or ARN'),
  ).action((flags: RotateFlags) => {
    if (Boolean(flags.toMasterKeyFile) === Boolean(flags.toKmsKeyId)) {
      exitWithError(usageError('give exactly one of --to-master-key-file and --to-kms-key-id'));
    }
    return lifecycleAction('keys rotate', flags, async (vault, bar) => {
      let to;
      if (flags.toKmsKeyId) {
        to = (await keyProviderFromConfig({ kms: { keyId: flags.toKmsKeyId } })).keyProvider;
      } else {
        const { masterKey, created } = await loadOrCreateLocalMasterKey(flags.toMasterKeyFile!);
        if (created) process.stderr.write(`memvault: created a new master key at ${flags.toMasterKeyFile}; back it up before you retire the old one.\n`);
        try {
          to = await createLocalKeyProvider(masterKey);
        } finally {
          masterKey.fill(0); // the provider keeps only keys derived from it
        }
      }
      const result = await vault.rotateKeys({ to, ...(flags.actor ? { actor: flags.actor } : {}), onProgress: (p) => bar.update(p.done, p.total) });
      return {
        text: flags.json
          ? `${JSON.stringify(result)}\n`
          : `keys rotate: ${result.total} key records, ${result.rewrapped} re-wrapped, ${result.skipped} already done. Switch the service to the new key now; keep the old one until every instance has.\n`,
      };
    });
  });
  addLifecycleOptions(
    keys
      .command('verify')
      .description(
        'open every key record (and the deployment record) with the configured key alone: each must pass its integrity check and unwrap. ' +
          'Run it after `keys rotate` and before destroying the old key; exits 1 if any record does not open. Only reads.',
      ),
  ).action((flags: VaultFlags & { json?: boolean }) =>
    lifecycleAction('keys verify', flags, async (vault, bar) => {
      const result = await vault.verifyKeys({ onProgress: (p) => bar.update(p.done, p.total) });
      const failed = result.failed.length;
      const text = flags.json
        ? `${JSON.stringify(result)}\n`
        : result.failed.map((failure) => `FAILED ${failure.key}: ${failure.reason}\n`).join('') +
          (failed === 0
            ? `keys verify: all ${result.total} key records open with the configured key; the old key may be destroyed. Deployment fingerprint ${result.deploymentFingerprint}.\n`
            : `keys verify: ${failed} of ${result.total} key records do not open with the configured key; do NOT destroy the old key.\n`);
      return { text, ...(failed > 0 ? { exitCode: EXIT.checkFailed } : {}) };
    }),
  );
}
