/**
 * `memvault doctor` for the embedded file store: permissions of the directory and key file, the
 * deployment record opening with the configured key, stale locks, temp files and rename journals.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DoctorCheck } from './checks.js';

/**
 * Opens the deployment with the configured key and creates nothing; throws the start-up error
 * (no deployment, a key that does not match, user data without a deployment record).
 */
export type DeploymentOpener = () => Promise<{
  keyId: string;
  users(): AsyncIterable<string>;
  renameJournals(uid: string): Promise<Array<{ lastModified: Date }>>;
  close(): Promise<void>;
}>;

export interface FileStoreDoctorOptions {
  /** The store's root directory. */
  dir: string;
  /** The master key file in use, when the key comes from a file (the default `<dir>.key` or MEMVAULT_MASTER_KEY_FILE). */
  keyFile?: string;
  /** Where the key comes from, when not from a file ('MEMVAULT_MASTER_KEY', 'kms:...'). */
  keySource?: string;
  /**
   * Opens the deployment with the configured key and creates nothing; throws the start-up error
   * (no deployment, a key that does not match, user data without a deployment record).
   */
  openDeployment: DeploymentOpener;
  now?: () => number;
}

/** A lock or breaker file older than this is stale (the store breaks its own after 15 s). */
const STALE_LOCK_MS = 15_000;
/** A temp file older than this is debris of a crashed write (the store removes its own after 15 min). */
const STALE_TEMP_MS = 15 * 60_000;
/** A rename journal older than this belongs to a rename that failed and was never finished. */
const STALE_JOURNAL_MS = 60 * 60_000;

/**
 * doctor for `file:///dir`: the directory and key file are private, the deployment record opens
 * with the configured key, and no stale locks, temp files or unfinished rename journals linger.
 */
export async function runFileStoreDoctor(options: FileStoreDoctorOptions): Promise<DoctorCheck[]> {
  const now = options.now ?? Date.now;
  const checks: DoctorCheck[] = [];
  const { dir } = options;
  const { check: dirCheck, present: dirOk } = await privatePathCheck({
    id: 'store-dir',
    title: 'Store directory',
    path: dir,
    kind: 'directory',
    openTo: 'other users can list or change it',
    fix: `chmod 700 ${dir}`,
    okDetail: `${dir}, owner only`,
    missingDetail: `${dir} does not exist (check --store; doctor creates nothing)`,
  });
  // The directory is there (private or not): its debris and deployment are checked below.
  checks.push(dirCheck);

  checks.push(await keyFileCheck(options.keyFile, options.keySource));

  if (dirOk) {
    const debris = await staleFiles(dir, now());
    checks.push(
      debris.locks + debris.temps === 0
        ? { id: 'stale-locks', title: 'Stale locks and temp files', status: 'ok', required: false, detail: 'none' }
        : {
            id: 'stale-locks',
            title: 'Stale locks and temp files',
            status: 'warn',
            required: false,
            detail: `${debris.locks} lock file(s) older than ${STALE_LOCK_MS / 1000} s, ${debris.temps} temp file(s) older than ${STALE_TEMP_MS / 60_000} min: left by crashed processes`,
            fix: 'the store breaks stale locks and removes old temp files on the next write to the same name; with no memvault process running they are safe to delete (*~lock, *~break, *~tmp.*)',
          },
    );
  }

  checks.push(...(await deploymentChecks(options.openDeployment, now)));
  return checks;
}

/** The master key file is there and private (mode 0600), or the key comes from elsewhere. */
export async function keyFileCheck(keyFile: string | undefined, keySource: string | undefined): Promise<DoctorCheck> {
  if (keyFile !== undefined) {
    const file = keyFile;
    return (
      await privatePathCheck({
        id: 'key-file',
        title: 'Master key file',
        path: file,
        kind: 'regular file',
        openTo: 'other users can read it',
        fix: `chmod 600 ${file}`,
        okDetail: `${file}, mode 0600`,
        missingDetail: `${file} does not exist: without it the stored memories cannot be read (restore it from your backup)`,
      })
    ).check;
  }
  return {
    id: 'key-file',
    title: 'Master key',
    status: 'ok',
    required: true,
    detail: `from ${keySource ?? 'the environment'} (no key file)`,
  };
}

/** The deployment record opens with the configured key, and no directory rename journal is stale. */
export async function deploymentChecks(openDeployment: DeploymentOpener, now: () => number): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  let deployment: Awaited<ReturnType<DeploymentOpener>> | undefined;
  try {
    deployment = await openDeployment();
    checks.push({
      id: 'deployment',
      title: 'Deployment record (k/_deployment)',
      status: 'ok',
      required: true,
      detail: `opens with the configured key (${deployment.keyId})`,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^(Error: |memvault: )/, '') : String(error);
    checks.push({
      id: 'deployment',
      title: 'Deployment record (k/_deployment)',
      status: 'missing',
      required: true,
      detail: message,
    });
  }
  if (deployment) {
    try {
      let pending = 0;
      let stale = 0;
      for await (const uid of deployment.users()) {
        for (const journal of await deployment.renameJournals(uid)) {
          pending++;
          if (now() - journal.lastModified.getTime() > STALE_JOURNAL_MS) stale++;
        }
      }
      checks.push(
        stale === 0
          ? {
              id: 'journals',
              title: 'Unfinished directory renames',
              status: 'ok',
              required: false,
              detail: pending === 0 ? 'none' : `${pending} in progress`,
            }
          : {
              id: 'journals',
              title: 'Unfinished directory renames',
              status: 'warn',
              required: false,
              detail: `${stale} rename journal(s) older than an hour: a directory rename failed part way and was not retried`,
              fix: 'the affected user can repeat the same rename to finish it, or delete the half-copied destination',
            },
      );
    } catch (error) {
      checks.push({
        id: 'journals',
        title: 'Unfinished directory renames',
        status: 'unknown',
        required: false,
        detail: `could not check: ${error instanceof Error ? error.message : String(error)}`,
      });
    } finally {
      await deployment.close();
    }
  }
  return checks;
}

/**
 * The one check that a path doctor relies on is there, of its kind, and private to its owner (no
 * group or other bits; not checked on Windows): ok, missing (absent, wrong kind, too open: with the
 * chmod fix) or unknown (could not stat it). `present`: it is there and of its kind.
 */
export async function privatePathCheck(p: {
  id: string;
  title: string;
  path: string;
  kind: 'directory' | 'regular file';
  openTo: string;
  fix: string;
  okDetail: string;
  missingDetail: string;
}): Promise<{ check: DoctorCheck; present: boolean }> {
  const base = { id: p.id, title: p.title, required: true };
  try {
    const info = await stat(p.path);
    const isKind = p.kind === 'directory' ? info.isDirectory() : info.isFile();
    if (!isKind)
      return { check: { ...base, status: 'missing', detail: `${p.path} is not a ${p.kind}` }, present: false };
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0)
      return {
        check: {
          ...base,
          status: 'missing',
          detail: `${p.path} has mode ${modeText(info.mode)}: ${p.openTo}`,
          fix: p.fix,
        },
        present: true,
      };
    return { check: { ...base, status: 'ok', detail: p.okDetail }, present: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const check: DoctorCheck =
      code === 'ENOENT'
        ? { ...base, status: 'missing', detail: p.missingDetail }
        : { ...base, status: 'unknown', detail: `could not check: ${code ?? 'error'}` };
    return { check, present: false };
  }
}

function modeText(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** Lock, breaker and temp files of the file store (`~lock`, `~break`, `~tmp.<pid>.<rand>`) that are old. */
async function staleFiles(root: string, nowMs: number): Promise<{ locks: number; temps: number }> {
  const counts = { locks: 0, temps: 0 };
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(path);
        continue;
      }
      const isLock = /~(lock|break)$/.test(entry.name);
      const isTemp = /~tmp\.\d+\./.test(entry.name);
      if (!isLock && !isTemp) continue;
      const age = nowMs - (await stat(path).catch(() => ({ mtimeMs: nowMs }))).mtimeMs;
      if (isLock && age > STALE_LOCK_MS) counts.locks++;
      if (isTemp && age > STALE_TEMP_MS) counts.temps++;
    }
  };
  await walk(root);
  return counts;
}
