import { open, rm, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { hasErrno } from '../../util/errno.js';
import { publishTemporary } from '../../util/fs.js';
import { EXIT, exitWithError, usageError } from '../errors.js';
import { storeUrlFrom } from '../config.js';
import { openCliStore } from '../store.js';
import { outputTarget } from './user.js';

interface BackupFlags {
  store?: string;
  out: string;
  json?: boolean;
}

/**
 * `memvault backup --store sqlite:... --out FILE`: an online, consistent copy of a SQLite store
 * (VACUUM INTO), safe while the service runs. The copy is a SQLite store itself
 * (`sqlite:FILE`); its key is not in it: keep the key file (or the key) as before.
 */
export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description('write a consistent copy of a SQLite store to a new file while the service runs (VACUUM INTO)')
    .option('--store <url>', 'sqlite:/path/to/store.db (env MEMVAULT_STORE; default ./.memvault.db); must exist')
    .requiredOption('--out <file>', 'the new database file (must not exist)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (flags: BackupFlags) => {
      let temporary: string | undefined;
      try {
        const url = storeUrlFrom(flags);
        if (!url.startsWith('sqlite:'))
          throw usageError('backup copies a SQLite store (sqlite:...); copy other stores with memvault migrate');
        const target = outputTarget(flags.out);
        if (!target) throw usageError('--out must be a file');
        // Looked at first so that a taken name costs no copy; the publish refuses it again (a file that
        // appears meanwhile is never replaced: publishTemporary links, it does not rename over).
        if (await exists(target.path)) throw usageError(`${flags.out} exists already: nothing was written`);
        const store = await openCliStore(url);
        try {
          const { SqliteStore } = await import('../../store/sqlite.js');
          if (!(store instanceof SqliteStore)) throw usageError('backup copies a SQLite store');
          // Created empty and owner-only first: VACUUM INTO fills it with the same mode.
          temporary = target.temporary;
          await (await open(temporary, 'wx', 0o600)).close();
          await store.backupTo(temporary);
          try {
            await publishTemporary(temporary, target.path);
          } catch (error) {
            if (!hasErrno(error, 'EEXIST')) throw error;
            throw usageError(
              `${flags.out} appeared while the copy was made: it was left as it is and the copy removed; choose another --out`,
              error,
            );
          }
          temporary = undefined;
        } finally {
          await store.close();
        }
        const { size } = await stat(target.path);
        process.stdout.write(
          flags.json
            ? `${JSON.stringify({ out: flags.out, bytes: size })}\n`
            : `backup: ${size} bytes written to ${flags.out}.\n`,
        );
        process.exitCode = EXIT.ok;
      } catch (error) {
        if (temporary) await rm(temporary, { force: true });
        exitWithError(error);
      }
    });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
