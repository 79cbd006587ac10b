import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { createLocalKeyProvider, keyProviderFromConfig, loadOrCreateLocalMasterKey } from '../../crypto/index.js';
import { EXIT, exitWithError, usageError } from '../errors.js';
import type { VaultFlags } from '../vault.js';
import { addLifecycleOptions, lifecycleAction } from '../lifecycle.js';
import { validateUserId } from '../../memvault.js';
import type { RekeyProgress, RekeyUserResult } from '../../crypto/index.js';
import { checkNumber } from '../../util/validate.js';

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
    .description(
      'create a new local master key file (32 random bytes, base64, mode 0600); refuses to replace an existing file',
    )
    .requiredOption('--out <path>', 'where to write the key file (required)')
    .action(async (flags: { out: string }) => {
      try {
        if (existsSync(flags.out))
          throw usageError(
            `${flags.out} already exists; a key file is never replaced (it may be the only way to read memories)`,
          );
        const { masterKey, created } = await loadOrCreateLocalMasterKey(flags.out);
        masterKey.fill(0);
        if (!created)
          throw usageError(
            `${flags.out} already exists; a key file is never replaced (it may be the only way to read memories)`,
          );
        process.stdout.write(
          `keys create: wrote a new master key to ${flags.out} (mode 0600). Back it up; then set MEMVAULT_MASTER_KEY_FILE=${flags.out}.\n`,
        );
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
      .option(
        '--to-master-key-file <path>',
        'the new local master key file (created, mode 0600, when it does not exist)',
      )
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
        if (created)
          process.stderr.write(
            `memvault: created a new master key at ${flags.toMasterKeyFile}; back it up before you retire the old one.\n`,
          );
        try {
          to = await createLocalKeyProvider(masterKey);
        } finally {
          masterKey.fill(0); // the provider keeps only keys derived from it
        }
      }
      const result = await vault.rotateKeys({
        to,
        ...(flags.actor ? { actor: flags.actor } : {}),
        onProgress: (p) => bar.update(p.done, p.total),
      });
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
  addLifecycleOptions(
    keys
      .command('rekey')
      .description(
        "replace a user's data key (or every user's, --all): a new key version, every object re-sealed under it in place (conditional writes: " +
          'an edit that races wins), and the old version dropped once no object needs it and every running instance has re-read the key record ' +
          '(the settle time: the key-cache age plus a minute). Resumable (run it again to continue), safe while the service runs. ' +
          'Exits 1 unless every old version was dropped.',
      )
      .option('--user <id>', 'the user id as the host application knows it')
      .option('--all', 'every user with a key record')
      .option(
        '--settle-seconds <n>',
        'the longest key-cache age of any running instance plus grace (default 660: the default 10 minutes plus one)',
      )
      .option(
        '--no-wait',
        'do not wait out the settle time: re-seal, then exit 1 saying when to run again to drop the old version',
      )
      .option(
        '--continue',
        'only continue re-keys under way (a rerun of --all after a crash); never start a new version',
      ),
  ).action(
    async (
      flags: VaultFlags & {
        user?: string;
        all?: boolean;
        settleSeconds?: string;
        wait: boolean;
        continue?: boolean;
        json?: boolean;
        actor?: string;
      },
    ) => {
      if (Boolean(flags.user) === Boolean(flags.all))
        exitWithError(usageError('give exactly one of --user <id> and --all'));
      let settleMs: number | undefined;
      if (flags.settleSeconds !== undefined) {
        const seconds = Number(flags.settleSeconds);
        try {
          // The API's rule for settleMs (a whole number >= 0), named by the flag.
          settleMs = checkNumber('--settle-seconds', seconds, { integer: true, min: 0 }) * 1000;
        } catch (error) {
          exitWithError(error);
        }
      }
      await lifecycleAction(
        'keys rekey',
        flags,
        async (vault, bar) => {
          const onProgress = (p: RekeyProgress) => {
            if (p.phase === 'reseal') bar.update(p.scanned, Math.max(p.scanned, 1));
            else if (p.phase === 'version')
              process.stderr.write(`memvault: ${p.uid}: key version ${p.keyVersion} written; re-sealing\n`);
            else if (p.phase === 'settle')
              process.stderr.write(
                `memvault: ${p.uid}: every object re-sealed; the old version can be dropped after ${p.settlesAt}\n`,
              );
            else if (p.phase === 'done')
              process.stderr.write(`memvault: ${p.uid}: old key versions dropped (${p.resealed} objects re-sealed)\n`);
          };
          const options = {
            wait: flags.wait,
            ...(settleMs !== undefined ? { settleMs } : {}),
            ...(flags.continue ? { continueOnly: true } : {}),
            ...(flags.actor ? { actor: flags.actor } : {}),
            onProgress,
          };
          let incomplete: RekeyUserResult[];
          let text: string;
          if (flags.user !== undefined) {
            const result = await vault.rekeyUser(flags.user, options);
            incomplete = result.oldVersionsDropped ? [] : [result];
            text = flags.json
              ? `${JSON.stringify(result)}\n`
              : `keys rekey: user ${result.uid} at key version ${result.keyVersion}, ${result.resealed} objects re-sealed${describeLeft(result)}.\n`;
          } else {
            const result = await vault.rekeyAll(options);
            incomplete = result.results.filter((r) => !r.oldVersionsDropped);
            text = flags.json
              ? `${JSON.stringify(result)}\n`
              : incomplete.map((r) => `INCOMPLETE ${r.uid}${describeLeft(r)}\n`).join('') +
                `keys rekey: ${result.users} users, ${result.completed} completed, ${result.resealed} objects re-sealed.\n`;
          }
          if (incomplete.length === 0) return { text };
          if (!flags.json)
            process.stderr.write(
              'memvault: keys rekey: old key versions remain (see above); run it again to continue.\n',
            );
          return { text, exitCode: EXIT.checkFailed };
        },
        { check: () => (flags.user !== undefined ? void validateUserId(flags.user) : undefined) },
      );
    },
  );
}

/** What keeps an old version in a user's record, or ', old key versions dropped'. */
function describeLeft(r: RekeyUserResult): string {
  if (r.oldVersionsDropped) return ', old key versions dropped';
  const reasons = [
    r.failed > 0 ? `${r.failed} objects do not open (INTEGRITY; restore or delete them)` : '',
    r.conflicts > 0 ? `${r.conflicts} objects kept changing` : '',
    r.expired > 0 ? `${r.expired} expired objects wait for the sweeper` : '',
    r.settlesAt !== undefined ? `running instances may cache the old record until ${r.settlesAt}` : '',
  ].filter(Boolean);
  return `; the old key version is kept: ${reasons.join('; ')}`;
}
