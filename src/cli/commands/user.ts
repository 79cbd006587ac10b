import { createWriteStream, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { validateUserId, type Vault } from '../../memvault.js';
import { exitWithError, usageError } from '../errors.js';
import { progressBar } from '../progress.js';
import { openCliVault, type VaultFlags } from '../vault.js';
import { commitTemporary, temporaryPathFor } from '../../util/fs.js';

interface UserFlags extends VaultFlags {
  user: string;
  json?: boolean;
  actor?: string;
}

/** Options every lifecycle command shares: where, who asked, where the audit record goes. */
export function addLifecycleOptions(command: Command): Command {
  return command
    .option('--store <url>', 'file:///abs/dir or s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault); must exist, never created')
    .option('--audit-file <path>', 'append the audit record of this operation here (env MEMVAULT_AUDIT_FILE)')
    .option('--actor <id>', 'who asked (an operator or ticket id, [A-Za-z0-9._:-]), recorded in the audit record', 'cli')
    .option('--json', 'print the summary as one JSON object');
}

/** The vault of an existing deployment: these commands only read, erase or re-wrap. */
export function openExistingVault(flags: VaultFlags): Promise<Vault> {
  return openCliVault(flags, { create: false });
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
  ).action(async (flags: UserFlags) => {
    const bar = progressBar('user forget');
    try {
      validateUserId(flags.user);
      const vault = await openExistingVault(flags);
      try {
        const result = await vault.forgetUser(flags.user, {
          ...(flags.actor ? { actor: flags.actor } : {}),
          onProgress: (p) => {
            if (p.phase === 'objects') bar.update(p.deleted, p.total);
          },
        });
        bar.stop();
        if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else
          process.stdout.write(
            `user forget: key ${result.keyDeleted ? 'destroyed' : 'was already gone'}, ${result.objectsDeleted} objects deleted (uid ${result.uid}).\n`,
          );
      } finally {
        await vault.close();
      }
    } catch (error) {
      bar.stop();
      exitWithError(error);
    }
  });
  addLifecycleOptions(
    user
      .command('export')
      .description("write all of a user's files, decrypted, into a tar archive with a manifest.json (access and portability requests)")
      .requiredOption('--user <id>', 'the user id as the host application knows it')
      .requiredOption('--out <file>', 'the archive to write (.tar), or - for standard output'),
  ).action(async (flags: UserFlags & { out: string }) => {
    const bar = progressBar('user export');
    let target: { path: string; temporary: string } | undefined;
    let finished = false;
    try {
      validateUserId(flags.user);
      target = outputTarget(flags.out);
      const vault = await openExistingVault(flags);
      try {
        // Resolves only for a known user: an unknown one is an error before any file exists.
        const exported = await vault.exportUser(flags.user, { ...(flags.actor ? { actor: flags.actor } : {}), onProgress: (p) => bar.update(p.files) });
        const written = pipeline(exported.stream, target ? createWriteStream(target.temporary, { mode: 0o600 }) : process.stdout);
        const [result] = await Promise.all([exported.done, written]);
        if (target) await commitTemporary(target.temporary, target.path);
        finished = true;
        bar.stop();
        const say = (text: string) => void (target ? process.stdout : process.stderr).write(text);
        if (flags.json) say(`${JSON.stringify(result)}\n`);
        else say(`user export: ${result.files} files, ${result.bytes} bytes written to ${target ? flags.out : 'standard output'}.\n`);
      } finally {
        await vault.close();
      }
    } catch (error) {
      bar.stop();
      if (target && !finished) await rm(target.temporary, { force: true });
      exitWithError(error);
    }
  });
}
