import { InvalidArgumentError, type Command } from 'commander';
import { EXPIRY_ENV, resolveTtl, ttlSettingsFromEnv } from '../../expiry/config.js';
import { doctorFailed, formatDoctor, runDoctor } from '../../expiry/doctor.js';
import { reportError } from '../errors.js';
import { ENV, s3ConfigFrom, storeUrlFrom } from '../config.js';

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
    .description('check an S3 bucket against what memvault needs (versioning, lifecycle rules, encryption, public access, conditional writes)')
    .option('--store <url>', `s3://bucket/prefix (env ${ENV.store})`)
    .option('--ttl-days <n>', `idle days of the default TTL class to look for (env ${EXPIRY_ENV.ttlDays})`, positiveInt)
    .option('--no-probes', 'only read the bucket configuration; write no probe objects')
    .option('--json', 'print the checks as one JSON object')
    .action(async (flags: { store?: string; ttlDays?: number; probes: boolean; json?: boolean }) => {
      try {
        const url = storeUrlFrom(flags, env);
        if (!url.startsWith('s3://')) {
          out('memvault doctor checks S3 buckets; a file or memory store needs no bucket configuration\n');
          setExitCode(0);
          return;
        }
        const settings = ttlSettingsFromEnv(env, flags.ttlDays);
        const notes: string[] = [];
        if (!settings) notes.push(`no TTL configured (${EXPIRY_ENV.ttlDays}, ${EXPIRY_ENV.classes}): checking for the infra default, class 'default' = ${INFRA_DEFAULT_TTL_DAYS} days`);
        const ttl = resolveTtl(settings ?? { ttlDays: INFRA_DEFAULT_TTL_DAYS });
        const { createS3Store, parseS3Url, s3ConfigFromEnv } = await import('../../store/s3.js');
        const store = createS3Store({ url, s3: { ...(s3ConfigFrom(env) ?? {}), ...s3ConfigFromEnv(env) } });
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
