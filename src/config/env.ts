/**
 * The one table of environment variables: each MEMVAULT_* variable once, with its parser, the
 * setting it fills and the line the docs print (docs/configuration.md is checked against it). The
 * library never reads process.env by itself: the CLI, the Lambda handler and a host that calls
 * `fromEnv()` (config/from-env.ts) apply this table to an environment they hand over.
 */
import { MemvaultError } from '../errors.js';

/** Who applies a variable: `fromEnv()` (every host), the sweeper (`memvault expire`, the Lambda), the Lambda alone, the CLI alone. */
export type EnvScope = 'vault' | 'sweeper' | 'lambda' | 'cli';

export interface EnvVariable<T = unknown> {
  readonly name: string;
  /** The option it fills (createVault's, or a command's flag). */
  readonly setting: string;
  readonly scope: EnvScope;
  /** One line for docs/configuration.md. */
  readonly doc: string;
  /** From the raw text (never empty) to the setting's value; a CONFIG error names the variable. */
  readonly parse: (raw: string, variable: EnvVariable) => T;
}

function refuse(variable: EnvVariable, what: string): MemvaultError {
  return new MemvaultError('CONFIG', `${variable.name} ${what}`);
}

const text = (raw: string): string => raw;

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

/** 1/true/yes/on or 0/false/no/off; any other word is CONFIG, never a silent "no". */
function flag(raw: string, variable: EnvVariable): boolean {
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  throw refuse(variable, 'must be 1/true or 0/false');
}

function numberFrom(raw: string, variable: EnvVariable, what: string, ok: (n: number) => boolean): number {
  const n = Number(raw.trim());
  if (!Number.isFinite(n) || !ok(n))
    throw refuse(variable, `must be ${what} (it sets ${variable.setting}; got '${raw.trim().slice(0, 32)}')`);
  return n;
}

const positive =
  (unit: string) =>
  (raw: string, variable: EnvVariable): number =>
    numberFrom(raw, variable, `a positive number of ${unit}`, (n) => n > 0);
const nonNegative = (raw: string, variable: EnvVariable): number =>
  numberFrom(raw, variable, 'a number >= 0', (n) => n >= 0);
const whole =
  (min: number, max: number) =>
  (raw: string, variable: EnvVariable): number =>
    numberFrom(
      raw,
      variable,
      `a whole number from ${min} to ${max.toLocaleString('en-US')}`,
      (n) => Number.isInteger(n) && n >= min && n <= max,
    );

const oneOf =
  <T extends string>(words: readonly T[]) =>
  (raw: string, variable: EnvVariable): T => {
    const word = raw.trim().toLowerCase();
    if (!(words as readonly string[]).includes(word))
      throw refuse(variable, `must be one of ${words.join(', ')} (got '${raw.trim().slice(0, 32)}')`);
    return word as T;
  };

/**
 * A master key's shape (base64 of 32 bytes), checked here so that the message names the variable;
 * crypto/local-key.ts decodes it for use. Never echoed.
 */
function base64Key(raw: string, variable: EnvVariable): string {
  const text = raw.trim();
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : undefined;
  const ok = decoded?.byteLength === 32;
  decoded?.fill(0);
  if (!ok)
    throw refuse(
      variable,
      'must be the base64 encoding of exactly 32 bytes (generate one with `openssl rand -base64 32`)',
    );
  return raw;
}

function jsonObject(raw: string, variable: EnvVariable): Record<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw refuse(variable, 'must be a JSON object of class -> days');
  return parsed as Record<string, number>;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function v<T>(
  name: string,
  setting: string,
  scope: EnvScope,
  doc: string,
  parse: (raw: string, variable: EnvVariable) => T,
): EnvVariable<T> {
  return { name, setting, scope, doc, parse };
}

/** Every variable memvault reads, by the short name the code uses. */
export const ENV = {
  store: v(
    'MEMVAULT_STORE',
    'store',
    'vault',
    'The store URL: sqlite:/abs/file.db, file:///abs/dir, s3://bucket/prefix or memory: (CLI default ./.memvault.db).',
    text,
  ),
  masterKey: v(
    'MEMVAULT_MASTER_KEY',
    'encryption.masterKey',
    'vault',
    'The master key: base64 of 32 bytes (`openssl rand -base64 32`).',
    base64Key,
  ),
  masterKeyFile: v(
    'MEMVAULT_MASTER_KEY_FILE',
    'encryption.masterKeyFile',
    'vault',
    'A file holding the base64 master key (mode 0600).',
    text,
  ),
  kmsKeyId: v(
    'MEMVAULT_KMS_KEY_ID',
    'encryption.kms.keyId',
    'vault',
    'An AWS KMS key id or ARN that wraps the data keys (instead of a master key).',
    text,
  ),
  previousMasterKey: v(
    'MEMVAULT_PREVIOUS_MASTER_KEY',
    'encryption.previous',
    'vault',
    'The old master key during a rotation (only opens records not yet re-wrapped).',
    base64Key,
  ),
  previousMasterKeyFile: v(
    'MEMVAULT_PREVIOUS_MASTER_KEY_FILE',
    'encryption.previous',
    'vault',
    'The old master key file during a rotation.',
    text,
  ),
  previousKmsKeyId: v(
    'MEMVAULT_PREVIOUS_KMS_KEY_ID',
    'encryption.previous',
    'vault',
    'The old KMS key during a rotation.',
    text,
  ),
  deploymentFingerprint: v(
    'MEMVAULT_DEPLOYMENT_FINGERPRINT',
    'encryption.deploymentFingerprint',
    'vault',
    'The deployment fingerprint to pin ({id}.{check}); another deployment record is refused.',
    text,
  ),
  createKeyFile: v(
    'MEMVAULT_CREATE_KEY_FILE',
    'encryption.createKeyFile',
    'vault',
    'S3 and adapter stores: 1 lets memvault create the default key file when no key is configured (default 0).',
    flag,
  ),
  home: v(
    'MEMVAULT_HOME',
    'encryption.defaultKeyDir',
    'vault',
    'Where the default key file of a non-file store lives (default ~/.memvault).',
    text,
  ),
  s3Endpoint: v(
    'MEMVAULT_S3_ENDPOINT',
    's3.endpoint',
    'vault',
    'An S3-compatible endpoint (radosgw, MinIO, R2); path-style addressing follows.',
    text,
  ),
  s3Region: v(
    'MEMVAULT_S3_REGION',
    's3.region',
    'vault',
    'The S3 region (else AWS_DEFAULT_REGION when AWS_REGION is unset, else the SDK chain).',
    text,
  ),
  s3ForcePathStyle: v(
    'MEMVAULT_S3_FORCE_PATH_STYLE',
    's3.forcePathStyle',
    'vault',
    '1 or 0: path-style addressing (default 1 with an endpoint).',
    flag,
  ),
  s3AccessKeyId: v(
    'MEMVAULT_S3_ACCESS_KEY_ID',
    's3.credentials.accessKeyId',
    'vault',
    'S3 access key id (with the secret; else the SDK chain).',
    text,
  ),
  s3SecretAccessKey: v(
    'MEMVAULT_S3_SECRET_ACCESS_KEY',
    's3.credentials.secretAccessKey',
    'vault',
    'S3 secret access key (with the key id).',
    text,
  ),
  ttlDays: v(
    'MEMVAULT_TTL_DAYS',
    'expiry.ttlDays',
    'vault',
    'Idle days after which a file of the default TTL class expires.',
    whole(1, 100_000),
  ),
  ttlClasses: v(
    'MEMVAULT_TTL_CLASSES',
    'expiry.classes',
    'vault',
    'Further TTL classes as JSON, class -> days (e.g. {"pro":365}).',
    jsonObject,
  ),
  ttlDefaultClass: v(
    'MEMVAULT_TTL_DEFAULT_CLASS',
    'expiry.defaultClass',
    'vault',
    "The class of files no other class applies to (default 'default').",
    text,
  ),
  touchIntervalHours: v(
    'MEMVAULT_TOUCH_INTERVAL_HOURS',
    'expiry.touchIntervalMs',
    'vault',
    'Hours between touches of a file that is read (default a day, or half the shortest TTL); shorter than the shortest TTL.',
    positive('hours'),
  ),
  history: v(
    'MEMVAULT_HISTORY',
    'history',
    'vault',
    'File history: 1 (default) or 0 (off; no versions are kept).',
    flag,
  ),
  historyDays: v(
    'MEMVAULT_HISTORY_DAYS',
    'history.retentionDays',
    'vault',
    'Days a version is kept (default 30).',
    positive('days'),
  ),
  historyVersions: v(
    'MEMVAULT_HISTORY_VERSIONS',
    'history.maxVersions',
    'vault',
    'Versions kept per file (default 100, at most 1,000).',
    whole(1, 1000),
  ),
  auditFile: v('MEMVAULT_AUDIT_FILE', 'audit.file', 'vault', 'Append audit records as JSON lines to this file.', text),
  auditCheckpointFile: v(
    'MEMVAULT_AUDIT_CHECKPOINT_FILE',
    'audit.checkpoint.file',
    'vault',
    "Append the audit chain's head to this file (the witness for `audit verify --checkpoints`).",
    text,
  ),
  auditStore: v(
    'MEMVAULT_AUDIT_STORE',
    'expire --audit-store',
    'sweeper',
    "Ship the sweeper's audit records to this store URL.",
    text,
  ),
  conditionalDelete: v(
    'MEMVAULT_CONDITIONAL_DELETE',
    'expire --conditional-delete',
    'sweeper',
    'recheck (default: HEAD each candidate first) or native (the server checks the ETag: AWS).',
    oneOf(['native', 'recheck'] as const),
  ),
  graceMinutes: v(
    'MEMVAULT_EXPIRE_GRACE_MINUTES',
    'expire --grace-minutes',
    'sweeper',
    'Delete a file only this long after its TTL ran out (default 60).',
    nonNegative,
  ),
  stopMarginSeconds: v(
    'MEMVAULT_SWEEP_STOP_MARGIN_SECONDS',
    'Lambda stop margin',
    'lambda',
    'The sweeper Lambda stops after the batch in hand when fewer seconds remain (default 60).',
    nonNegative,
  ),
  overdueHours: v(
    'MEMVAULT_SWEEP_OVERDUE_HOURS',
    'Lambda overdue alarm',
    'lambda',
    'The sweeper Lambda fails every run when no pass finished for this many hours (default 48).',
    nonNegative,
  ),
  logLevel: v(
    'MEMVAULT_LOG_LEVEL',
    'CLI log level',
    'cli',
    `The CLI's log level on stderr: ${LOG_LEVELS.join(', ')} (default warn).`,
    oneOf(LOG_LEVELS),
  ),
  debug: v(
    'MEMVAULT_DEBUG',
    'CLI stack traces',
    'cli',
    'Set (to anything): a failing CLI command prints its stack trace too.',
    text,
  ),
} as const;

export type EnvName = keyof typeof ENV;
export const ENV_VARIABLES: readonly EnvVariable[] = Object.values(ENV);

type ValueOf<V> = V extends EnvVariable<infer T> ? T : never;

/** The variable's value from `env`, parsed; undefined when it is unset or empty. */
export function readEnv<K extends EnvName>(env: NodeJS.ProcessEnv, name: K): ValueOf<(typeof ENV)[K]> | undefined {
  const variable = ENV[name] as EnvVariable;
  const raw = env[variable.name];
  if (raw === undefined || raw.trim() === '') return undefined;
  return variable.parse(raw, variable) as ValueOf<(typeof ENV)[K]>;
}
