import { createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { validateUserId } from '../../memvault.js';
import { EXIT, usageError } from '../errors.js';
import { addLifecycleOptions, lifecycleAction } from '../lifecycle.js';
import { openCliVault, type VaultFlags } from '../vault.js';
import { openReadingVault } from '../store.js';
import type { Vault } from '../../memvault.js';
import { commitTemporary, temporaryPathFor } from '../../util/fs.js';
import { historyFromEnv } from '../../config/from-env.js';
import { parseRfc3339 } from '../../util/date-time.js';
import { checkDate, checkNumber } from '../../util/validate.js';

/** History and restore need history on; the environment may set its retention knobs (MEMVAULT_HISTORY_*). */
function openHistoryVault(flags: VaultFlags): Promise<Vault> {
  const fromEnv = historyFromEnv(process.env);
  return openCliVault(flags, { create: false, history: fromEnv === undefined || fromEnv === false ? true : fromEnv });
}

/** Strict RFC 3339 with a timezone, as the service takes `as_of`: `new Date` reads "1" as 2001 and a restore to then empties the memory. */
function asOfFrom(value: string): Date {
  const at = parseRfc3339(value);
  if (at === undefined)
    throw usageError(
      `--as-of ${value} is not a date (use an RFC 3339 date-time with a timezone, e.g. 2026-12-01T09:30:00Z)`,
    );
  return checkDate('--as-of', at);
}

interface UserFlags extends VaultFlags {
  user: string;
  json?: boolean;
  actor?: string;
}

/** A file to write, checked first: its directory must exist (a clear error, not ENOENT later). */
export function outputTarget(out: string): { path: string; temporary: string } | undefined {
  if (out === '-') return undefined;
  const path = resolve(out);
  let isDir = false;
  try {
    isDir = statSync(dirname(path)).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw usageError(`the output directory ${dirname(path)} does not exist`);
  return { path, temporary: temporaryPathFor(path) };
}

export function registerUser(program: Command): void {
  const user = program
    .command('user')
    .description('per-user data subject operations (erasure, access and portability), each audited');
  addLifecycleOptions(
    user
      .command('forget')
      .description(
        "erase a user: destroys the user's wrapped data key first, then deletes their objects; afterwards nothing of the user can be decrypted, even from old object versions or backups without that key record",
      )
      .requiredOption('--user <id>', 'the user id as the host application knows it'),
  ).action((flags: UserFlags) =>
    lifecycleAction(
      'user forget',
      flags,
      async (vault, bar) => {
        const result = await vault.forgetUser(flags.user, {
          ...(flags.actor ? { actor: flags.actor } : {}),
          onProgress: (p) => {
            if (p.phase === 'objects') bar.update(p.deleted, p.total);
          },
        });
        return {
          text: flags.json
            ? `${JSON.stringify(result)}\n`
            : `user forget: key ${result.keyDeleted ? 'destroyed' : 'was already gone'}, ${result.objectsDeleted} objects deleted (uid ${result.uid}).\n`,
        };
      },
      { check: () => validateUserId(flags.user) },
    ),
  );
  addLifecycleOptions(
    user
      .command('export')
      .description(
        "write all of a user's files and their kept versions, decrypted, into a tar archive with a manifest.json (access and portability requests)",
      )
      .requiredOption('--user <id>', 'the user id as the host application knows it')
      .requiredOption('--out <file>', 'the archive to write (.tar), or - for standard output'),
  ).action((flags: UserFlags & { out: string }) => {
    let target: { path: string; temporary: string } | undefined;
    let finished = false;
    return lifecycleAction(
      'user export',
      flags,
      async (vault, bar) => {
        // Resolves only for a known user: an unknown one is an error before any file exists.
        const exported = await vault.exportUser(flags.user, {
          ...(flags.actor ? { actor: flags.actor } : {}),
          onProgress: (p) => bar.update(p.files),
        });
        const written = pipeline(
          exported.stream,
          target ? createWriteStream(target.temporary, { mode: 0o600 }) : process.stdout,
        );
        const [result] = await Promise.all([exported.done, written]);
        if (target) await commitTemporary(target.temporary, target.path);
        finished = true;
        return {
          text: flags.json
            ? `${JSON.stringify(result)}\n`
            : `user export: ${result.files} files, ${result.bytes} bytes and ${result.versions} kept versions written to ${target ? flags.out : 'standard output'}.\n`,
          // With --out - the archive is on stdout; the summary goes to stderr.
          toStderr: !target,
        };
      },
      {
        check: () => {
          validateUserId(flags.user);
          target = outputTarget(flags.out);
        },
        // An export only reads: an older SQLite schema is CONFIG, not moved to this version.
        open: openReadingVault,
        onFailure: async () => {
          if (target && !finished) await rm(target.temporary, { force: true });
        },
      },
    );
  });
  addLifecycleOptions(
    user
      .command('history')
      .description(
        "list the kept versions of a user's file, or of every file below a directory (newest first per file; sizes, who made each, when)",
      )
      .requiredOption('--user <id>', 'the user id as the host application knows it')
      .option('--path <path>', 'a file or directory below /memories', '/memories'),
  ).action((flags: UserFlags & { path: string }) =>
    lifecycleAction(
      'user history',
      flags,
      async (vault) => {
        const { versions, truncated } = await vault.history(
          flags.user,
          flags.path,
          flags.actor ? { actor: flags.actor } : {},
        );
        const text = flags.json
          ? `${JSON.stringify({ versions: versions.map((v) => ({ ...v, time: v.time.toISOString() })), truncated })}\n`
          : versions
              .map((v) => `${v.path}\t${v.seq}\t${v.time.toISOString()}\t${v.actor}\t${v.end ?? `${v.size} bytes`}\n`)
              .join('') + `user history: ${versions.length} versions${truncated ? ' (more not listed)' : ''}.\n`;
        return { text };
      },
      { check: () => validateUserId(flags.user), open: openHistoryVault },
    ),
  );
  addLifecycleOptions(
    user
      .command('restore')
      .description(
        "restore a user's file, directory or whole memory as it was at a point in time; each file restored is a new version (so it can be undone)",
      )
      .requiredOption('--user <id>', 'the user id as the host application knows it')
      .requiredOption('--as-of <time>', 'the point in time (RFC 3339, with a timezone)')
      .option('--path <path>', 'a file or directory below /memories (default: the whole memory)')
      .option('--dry-run', 'say what would be restored or deleted, change nothing'),
  ).action((flags: UserFlags & { path?: string; asOf: string; dryRun?: boolean }) => {
    let asOf = new Date(NaN);
    return lifecycleAction(
      'user restore',
      flags,
      async (vault) => {
        const result = await vault.restore(flags.user, {
          asOf,
          ...(flags.path !== undefined ? { path: flags.path } : {}),
          ...(flags.dryRun ? { dryRun: true } : {}),
          ...(flags.actor ? { actor: flags.actor } : {}),
        });
        const text = flags.json
          ? `${JSON.stringify({ ...result, asOf: result.asOf.toISOString() })}\n`
          : result.files
              .filter((f) => f.action !== 'unchanged')
              .map((f) => `${f.action}\t${f.path}\n`)
              .join('') +
            `user restore${result.dryRun ? ' (dry run)' : ''}: ${result.restored} restored, ${result.deleted} deleted, ${result.unchanged} unchanged, ${result.conflicts} conflicts.\n`;
        // Fail closed: a file that could not be restored is not a success.
        return { text, ...(result.conflicts > 0 ? { exitCode: EXIT.checkFailed } : {}) };
      },
      {
        check: () => {
          validateUserId(flags.user);
          asOf = asOfFrom(flags.asOf);
        },
        open: openHistoryVault,
      },
    );
  });
  addLifecycleOptions(
    user
      .command('drop-version')
      .description(
        'delete one kept version of a file for good (a version holding what must not be kept); the current file is not changed',
      )
      .requiredOption('--user <id>', 'the user id as the host application knows it')
      .requiredOption('--path <path>', 'the file below /memories')
      .requiredOption('--seq <n>', 'the version (its number, from user history)'),
  ).action((flags: UserFlags & { path: string; seq: string }) => {
    const seq = Number(flags.seq);
    return lifecycleAction(
      'user drop-version',
      flags,
      async (vault) => {
        const dropped = await vault.dropVersion(flags.user, flags.path, seq, flags.actor ? { actor: flags.actor } : {});
        const text = flags.json
          ? `${JSON.stringify({ dropped })}\n`
          : dropped
            ? 'user drop-version: the version is deleted.\n'
            : 'user drop-version: no such version.\n';
        return { text, ...(dropped ? {} : { exitCode: EXIT.checkFailed }) };
      },
      {
        check: () => {
          validateUserId(flags.user);
          // The API's own rule for a version number (src/entry/arguments.ts), named by the flag.
          checkNumber('--seq', seq, { integer: true, min: 1 });
        },
        open: openHistoryVault,
      },
    );
  });
}
