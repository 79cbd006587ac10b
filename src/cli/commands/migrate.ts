import type { Command } from 'commander';
import { auditUidOf } from '../../lifecycle/context.js';
import { auditedBy } from '../../lifecycle/audited.js';
import { migrateStore, type MigrateResult } from '../../lifecycle/migrate.js';
import { validateUserId } from '../../memvault.js';
import { usageError } from '../errors.js';
import { lifecycleAction } from '../lifecycle.js';
import { openCliStore, openReadingVault, openStoreWithEncryption } from '../store.js';
import type { VaultFlags } from '../vault.js';

interface MigrateFlags extends VaultFlags {
  from: string;
  to: string;
  user?: string;
  actor?: string;
  json?: boolean;
}

/**
 * `memvault migrate --from URL --to URL [--user ID]`: the deployment (or one user) copied to another
 * store as it is stored (src/lifecycle/migrate.ts). The source is opened as the service opens it
 * (its key must match its deployment record) but only read: never created, and never changed (a
 * SQLite source of an older schema is CONFIG, not moved to this version). The destination is
 * created where a store can be (a SQLite file, a directory; never an S3 bucket). One `migrate` audit record, in the
 * source deployment's audit log (--audit-file, MEMVAULT_AUDIT_FILE).
 */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description(
      'copy a whole deployment (or --user) to another store, sealed objects as they are; resumable, verified, audited',
    )
    .requiredOption('--from <url>', 'the store to copy: sqlite:..., file:///..., s3://...; must exist, never created')
    .requiredOption('--to <url>', 'the store to copy into: empty, or holding the same deployment (a resumed run)')
    .option('--user <id>', 'copy only this user (with the deployment record), as the host application knows them')
    .option('--audit-file <path>', 'append the audit record of this operation here (env MEMVAULT_AUDIT_FILE)')
    .option(
      '--actor <id>',
      'who asked (an operator or ticket id, [A-Za-z0-9._:-]), recorded in the audit record',
      'cli',
    )
    .option('--json', 'print the summary as one JSON object')
    .action((flags: MigrateFlags) =>
      lifecycleAction(
        'migrate',
        { store: flags.from, ...(flags.auditFile ? { auditFile: flags.auditFile } : {}) },
        async (vault, bar) => {
          const uid = flags.user === undefined ? undefined : await storeUidOf(flags.from, flags.user);
          const destination = await openCliStore(flags.to, process.env, { create: true });
          try {
            const result = await auditedBy(vault.audit)(
              {
                type: 'migrate',
                ...(uid ? { uid: uid.audit } : {}),
                ...(flags.actor !== undefined ? { actor: flags.actor } : {}),
              },
              (counts) =>
                migrateStore(
                  vault.store,
                  destination,
                  {
                    ...(uid ? { uid: uid.store } : {}),
                    onProgress: (p) => bar.update(p.done),
                  },
                  counts,
                ),
              (r: MigrateResult) => ({ ...r }),
            );
            return {
              text: flags.json
                ? `${JSON.stringify(result)}\n`
                : `migrate: ${result.objects} objects (${result.bytes} bytes): ${result.copied} copied, ${result.kept} there already; ${result.verified} verified at the destination.\n`,
            };
          } finally {
            await destination.close();
          }
        },
        {
          open: openReadingVault,
          check: () => {
            if (flags.from === flags.to) throw usageError('--from and --to are the same store');
            if (flags.user !== undefined) validateUserId(flags.user);
          },
        },
      ),
    );
}

/** The user's store uid and audit pseudonym, from the source's keys (nothing created). */
async function storeUidOf(from: string, userId: string): Promise<{ store: string; audit: string | undefined }> {
  const opened = await openStoreWithEncryption(from);
  try {
    const provider = opened.encryption.codecProvider;
    const uid = provider.uidOf(userId);
    return { store: uid, audit: await auditUidOf(provider, uid) };
  } finally {
    await opened.close();
  }
}
