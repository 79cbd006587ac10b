/**
 * `memvault doctor` for a SQLite store (`sqlite:/path/store.db`): the database file (private, a
 * memvault store of a schema this version reads), WAL mode, the durability the URL asks for, the
 * busy timeout, SQLite's quick_check, the WAL's size and the free disk, then the key file and the
 * deployment record as for the file store. The database is opened read-only, after a look that it
 * exists, and the deployment as a tool that only reads (src/store/sqlite/database.ts, `onlyReads`):
 * doctor never creates, migrates or writes one, so an older schema is reported, and the deployment
 * check that would need it moved is not made. A check that cannot be made fails closed.
 */
import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { SCHEMA_VERSION } from '../store/sqlite/database.js';
import type { SqliteDurability } from '../store/sqlite.js';
import type { DoctorCheck } from './checks.js';
import { deploymentChecks, keyFileCheck, privatePathCheck, type DeploymentOpener } from './file-store.js';

export interface SqliteDoctorOptions {
  /** The database file. */
  path: string;
  durability: SqliteDurability;
  /** The busy timeout the store uses (ms); the store's default when not given. */
  busyTimeoutMs?: number;
  keyFile?: string;
  keySource?: string;
  /** Opens the deployment with the configured key, writing nothing; run only once the database checks passed at this schema version. */
  openDeployment: DeploymentOpener;
}

const APPLICATION_ID = 0x6d766c74; // 'mvlt', as src/store/sqlite/database.ts marks its files
const DEFAULT_BUSY_TIMEOUT_MS = 15_000;
/** Free space below this (or below the database's own size, which a backup or VACUUM needs) is a warning. */
const LOW_DISK_BYTES = 256 * 1024 * 1024;
/** A WAL past this has not been checkpointed for long (a reader held open): reads slow down. */
const LARGE_WAL_BYTES = 256 * 1024 * 1024;
const MiB = 1024 * 1024;

export async function runSqliteDoctor(options: SqliteDoctorOptions): Promise<DoctorCheck[]> {
  const { path } = options;
  const checks: DoctorCheck[] = [];
  const file = await privatePathCheck({
    id: 'store-file',
    title: 'Database file',
    path,
    kind: 'regular file',
    openTo: 'other users can read it',
    fix: `chmod 600 ${path}`,
    okDetail: `${path}, owner only`,
    missingDetail: `${path} does not exist (check --store; doctor creates nothing)`,
  });
  checks.push(file.check);
  checks.push(durabilityCheck(options.durability));
  const busy = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  checks.push(
    busy >= 1000
      ? { id: 'busy-timeout', title: 'Busy timeout', status: 'ok', required: false, detail: `${busy / 1000} s` }
      : {
          id: 'busy-timeout',
          title: 'Busy timeout',
          status: 'warn',
          required: false,
          detail: `${busy} ms: a write that meets another process's transaction fails almost at once`,
        },
  );
  let databaseOk = false;
  let olderSchema = false;
  if (file.present) {
    const found = await databaseChecks(path);
    checks.push(...found);
    databaseOk = found.every((c) => !c.required || c.status === 'ok');
    olderSchema = found.some((c) => c.id === 'schema' && c.status === 'warn');
    checks.push(...(await diskChecks(path)));
  }
  checks.push(await keyFileCheck(options.keyFile, options.keySource));
  // The deployment is opened as a tool that only reads, which an older schema refuses: doctor
  // never moves it, so that check waits for the service to have done so.
  if (databaseOk && !olderSchema) checks.push(...(await deploymentChecks(options.openDeployment, Date.now)));
  else
    checks.push({
      id: 'deployment',
      title: 'Deployment record (k/_deployment)',
      status: 'unknown',
      required: true,
      detail: olderSchema
        ? `could not check: the schema is older than version ${SCHEMA_VERSION}, and doctor never migrates it (see Schema)`
        : 'could not check: the database checks above did not pass',
    });
  return checks;
}

function durabilityCheck(durability: SqliteDurability): DoctorCheck {
  return durability === 'full'
    ? {
        id: 'durability',
        title: 'Durability',
        status: 'ok',
        required: false,
        detail: 'full: every command is fsync’d before it answers (synchronous=NORMAL, the WAL fsync’d by memvault)',
      }
    : {
        id: 'durability',
        title: 'Durability',
        status: 'warn',
        required: false,
        detail: 'normal: a power loss (not a crash) can lose the commands acknowledged in the moments before it',
        fix: 'drop ?durability=normal from the store URL',
      };
}

/** Opened read-only (SQLite never creates a file it opens so); each check fails closed. */
async function databaseChecks(path: string): Promise<DoctorCheck[]> {
  const opened = await openReadOnly(path);
  if ('error' in opened)
    return [
      {
        id: 'database',
        title: 'Database',
        status: 'unknown',
        required: true,
        detail: `could not check: ${opened.error}`,
      },
    ];
  const db = opened.db;
  try {
    const pragma = <T>(sql: string): T => db.prepare(sql).get() as T;
    const checks: DoctorCheck[] = [];
    const id = pragma<{ application_id: number }>('PRAGMA application_id').application_id;
    const version = pragma<{ user_version: number }>('PRAGMA user_version').user_version;
    if (id !== APPLICATION_ID)
      return [
        {
          id: 'schema',
          title: 'Schema',
          status: 'missing',
          required: true,
          detail: 'the file is not a memvault store',
        },
      ];
    checks.push(
      version === SCHEMA_VERSION
        ? { id: 'schema', title: 'Schema', status: 'ok', required: true, detail: `version ${version}` }
        : version < SCHEMA_VERSION
          ? {
              id: 'schema',
              title: 'Schema',
              status: 'warn',
              required: false,
              detail: `version ${version}: the service moves it to version ${SCHEMA_VERSION} when it next opens it (one transaction); doctor and the other commands that only read leave it as it is, and refuse it until then`,
              fix: 'start the service on it once (memvault serve), then run doctor again',
            }
          : {
              id: 'schema',
              title: 'Schema',
              status: 'missing',
              required: true,
              detail: `version ${version}, written by a newer memvault: this version cannot read it`,
              fix: 'upgrade memvault',
            },
    );
    const mode = pragma<{ journal_mode: string }>('PRAGMA journal_mode').journal_mode;
    checks.push(
      mode === 'wal'
        ? { id: 'journal-mode', title: 'Journal mode', status: 'ok', required: true, detail: 'WAL' }
        : {
            id: 'journal-mode',
            title: 'Journal mode',
            status: 'missing',
            required: true,
            detail: `${mode}: several processes and the one-fsync commit need WAL`,
            fix: 'open the store once with memvault (it sets WAL), with no other program holding it',
          },
    );
    const problems = (db.prepare('PRAGMA quick_check').all() as Array<{ quick_check: string }>).filter(
      (row) => row.quick_check !== 'ok',
    ).length;
    checks.push(
      problems === 0
        ? { id: 'integrity', title: 'Integrity (quick_check)', status: 'ok', required: true, detail: 'ok' }
        : {
            id: 'integrity',
            title: 'Integrity (quick_check)',
            status: 'missing',
            required: true,
            detail: `${problems} problem(s) found: the database file is damaged`,
            fix: 'stop memvault, restore the last backup (memvault backup), or copy what still reads with memvault migrate',
          },
    );
    return checks;
  } catch (error) {
    return [
      {
        id: 'database',
        title: 'Database',
        status: 'unknown',
        required: true,
        detail: `could not check: ${codeOf(error)}`,
      },
    ];
  } finally {
    db.close();
  }
}

async function openReadOnly(path: string): Promise<{ db: DatabaseSync } | { error: string }> {
  try {
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path, { readOnly: true });
    db.exec(`PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
    return { db };
  } catch (error) {
    return { error: codeOf(error) };
  }
}

/** The free space where the database lives, and the WAL's size. Recommended, never required. */
async function diskChecks(path: string): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  try {
    const [fs, db] = await Promise.all([statfs(dirname(path)), stat(path)]);
    const free = fs.bavail * fs.bsize;
    const needed = Math.max(LOW_DISK_BYTES, db.size);
    checks.push(
      free >= needed
        ? {
            id: 'free-disk',
            title: 'Free disk',
            status: 'ok',
            required: false,
            detail: `${Math.floor(free / MiB)} MiB`,
          }
        : {
            id: 'free-disk',
            title: 'Free disk',
            status: 'warn',
            required: false,
            detail: `${Math.floor(free / MiB)} MiB, under ${Math.floor(needed / MiB)} MiB (a backup needs the database's size): a full disk fails every write`,
          },
    );
  } catch (error) {
    checks.push({
      id: 'free-disk',
      title: 'Free disk',
      status: 'unknown',
      required: false,
      detail: `could not check: ${codeOf(error)}`,
    });
  }
  const wal = await stat(`${path}-wal`).catch(() => null);
  if (wal && wal.size > LARGE_WAL_BYTES)
    checks.push({
      id: 'wal-size',
      title: 'WAL size',
      status: 'warn',
      required: false,
      detail: `${Math.floor(wal.size / MiB)} MiB: not checkpointed for long (a process holding a read open?)`,
    });
  return checks;
}

/** A SQLite result code name or an errno code; never a path or a message. */
function codeOf(error: unknown): string {
  const errcode = (error as { errcode?: unknown }).errcode;
  if (typeof errcode === 'number') return `SQLite error ${errcode & 0xff}`;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : 'error';
}
