import { InvalidArgumentError, type Command } from 'commander';
import { ENV, readEnv } from '../../config/env.js';
import { ttlSettingsFromEnv } from '../../config/from-env.js';
import { resolveTtl } from '../../expiry/config.js';
import {
  doctorFailed,
  formatDoctor,
  runDoctor,
  runFileStoreDoctor,
  runSqliteDoctor,
  type FileStoreDoctorOptions,
} from '../../doctor/index.js';
import { parseSqliteUrl } from '../../store/sqlite/url.js';
import { fileURLToPath } from 'node:url';
import { iterateUsers } from '../../crypto/index.js';
import { defaultMasterKeyFileFor } from '../../entry/encryption.js';
import { listAll } from '../../store/port.js';
import { parseS3Url } from '../../store/s3/url.js';
import { RESERVED_DIR } from '../../tool/commands/tree.js';
import { reportError } from '../errors.js';
import { storeUrlFrom } from '../config.js';
import { openCliS3Store, openStoreWithEncryption } from '../store.js';

export interface DoctorCommandDeps {
  env?: NodeJS.ProcessEnv;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  setExitCode?: (code: number) => void;
}

/** The infra construct's default when nothing is configured (infra/lib/memvault-storage.ts). */
const INFRA_DEFAULT_TTL_DAYS = 30;

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number >= 1');
  return n;
}

/**
 * `memvault doctor`: what the bucket behind `--store` lacks for memvault, and how to fix it.
 * Exit 1 when something required is missing, 2 on a configuration error.
 */
export function registerDoctor(program: Command, deps: DoctorCommandDeps = {}): Command {
  const env = deps.env ?? process.env;
  const out = deps.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = deps.stderr ?? ((text: string) => void process.stderr.write(text));
  const setExitCode = deps.setExitCode ?? ((code: number) => void (process.exitCode = code));

  return program
    .command('doctor')
    .description(
      'check a store against what memvault needs: an S3 bucket (versioning, lifecycle rules, encryption, public access, conditional writes), a file store (permissions, key file, deployment record, stale locks and journals) or a SQLite store (WAL, durability, quick_check, schema, free disk, key file, deployment record; opened read-only); a required check that could not be made fails (exit 1)',
    )
    .option(
      '--store <url>',
      `s3://bucket/prefix, file:///dir or sqlite:/path/store.db (env ${ENV.store.name}); never created`,
    )
    .option('--ttl-days <n>', `idle days of the default TTL class to look for (env ${ENV.ttlDays.name})`, positiveInt)
    .option('--no-probes', 'only read the bucket configuration; write no probe objects')
    .option('--json', 'print the checks as one JSON object')
    .action(async (flags: { store?: string; ttlDays?: number; probes: boolean; json?: boolean }) => {
      try {
        const url = storeUrlFrom(flags, env);
        if (url.startsWith('file:') || url.startsWith('sqlite:')) {
          const checks = url.startsWith('file:')
            ? await runFileStoreDoctor({ dir: fileURLToPath(url), ...localDoctorOptions(url, env) })
            : await runSqliteDoctor({ ...parseSqliteUrl(url), ...localDoctorOptions(url, env) });
          if (flags.json) out(`${JSON.stringify({ ok: !doctorFailed(checks), notes: [], checks })}\n`);
          else out(formatDoctor(checks));
          setExitCode(doctorFailed(checks) ? 1 : 0);
          return;
        }
        if (!url.startsWith('s3://')) {
          out('memvault doctor checks S3 buckets, file and SQLite stores; a memory store has nothing to check\n');
          setExitCode(0);
          return;
        }
        const settings = ttlSettingsFromEnv(env, flags.ttlDays);
        const notes: string[] = [];
        if (!settings)
          notes.push(
            `no TTL configured (${ENV.ttlDays.name}, ${ENV.ttlClasses.name}): checking for the infra default, class 'default' = ${INFRA_DEFAULT_TTL_DAYS} days`,
          );
        const ttl = resolveTtl(settings ?? { ttlDays: INFRA_DEFAULT_TTL_DAYS });
        const store = await openCliS3Store(url, env);
        try {
          const { bucket, prefix } = parseS3Url(url);
          const checks = await runDoctor({ client: store.client, bucket, prefix, ttl, skipProbes: !flags.probes });
          if (flags.json) out(`${JSON.stringify({ ok: !doctorFailed(checks), notes, checks })}\n`);
          else out(`${notes.map((n) => `note: ${n}\n`).join('')}${formatDoctor(checks)}`);
          setExitCode(doctorFailed(checks) ? 1 : 0);
        } finally {
          await store.close();
        }
      } catch (error) {
        // One line, the CLI's exit-code scheme (usage 2, runtime 3); never a stack trace.
        setExitCode(reportError(error, err));
      }
    });
}

/** What doctor checks on a file or SQLite store, with the key configured as the service would see it. */
function localDoctorOptions(url: string, env: NodeJS.ProcessEnv): Omit<FileStoreDoctorOptions, 'dir'> {
  const kmsKeyId = readEnv(env, 'kmsKeyId');
  const keySource =
    readEnv(env, 'masterKey') !== undefined
      ? ENV.masterKey.name
      : kmsKeyId !== undefined
        ? `KMS key ${kmsKeyId}`
        : undefined;
  const keyFile = keySource
    ? undefined
    : (readEnv(env, 'masterKeyFile') ?? defaultMasterKeyFileFor(url, readEnv(env, 'home')));
  return {
    ...(keyFile !== undefined ? { keyFile } : {}),
    ...(keySource !== undefined ? { keySource } : {}),
    openDeployment: async () => {
      const { store, encryption, close } = await openStoreWithEncryption(url, env);
      const provider = encryption.codecProvider;
      return {
        keyId: provider.keyId,
        users: () => iterateUsers(store),
        renameJournals: async (uid: string) => {
          const codec = await provider.forUid(uid);
          const found: Array<{ lastModified: Date }> = [];
          for await (const object of listAll(store, codec.prefixFor(`${RESERVED_DIR}/renames`)))
            found.push({ lastModified: object.lastModified });
          return found;
        },
        close,
      };
    },
  };
}
