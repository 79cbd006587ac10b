import { createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { validateUserId } from '../../memvault.js';
import { usageError } from '../errors.js';
import { addLifecycleOptions, lifecycleAction } from '../lifecycle.js';
import type { VaultFlags } from '../vault.js';
import { commitTemporary, temporaryPathFor } from '../../util/fs.js';

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
  const user = program.command('user').description('per-user data subject operations (erasure, access and portability), each audited');
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
      .description("write all of a user's files, decrypted, into a tar archive with a manifest.json (access and portability requests)")
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
        const exported = await vault.exportUser(flags.user, { ...(flags.actor ? { actor: flags.actor } : {}), onProgress: (p) => bar.update(p.files) });
        const written = pipeline(exported.stream, target ? createWriteStream(target.temporary, { mode: 0o600 }) : process.stdout);
        const [result] = await Promise.all([exported.done, written]);
        if (target) await commitTemporary(target.temporary, target.path);
        finished = true;
        return {
          text: flags.json
            ? `${JSON.stringify(result)}\n`
            : `user export: ${result.files} files, ${result.bytes} bytes written to ${target ? flags.out : 'standard output'}.\n`,
          // With --out - the archive is on stdout; the summary goes to stderr.
          toStderr: !target,
        };
      },
      {
        check: () => {
          validateUserId(flags.user);
          target = outputTarget(flags.out);
        },
        onFailure: async () => {
          if (target && !finished) await rm(target.temporary, { force: true });
        },
      },
    );
  });
}
