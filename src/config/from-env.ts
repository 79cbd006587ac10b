/**
 * `fromEnv(env)`: createVault's options from an environment, through the one table (config/env.ts).
 * Each feature has one reader here; the feature's own resolver (expiry/config.ts, crypto/config.ts,
 * vault/history-options.ts, store/s3/settings.ts) checks the values and holds the defaults. The
 * return types are structural, so this module sits below every feature and any layer may use it.
 */
import { MemvaultError } from '../errors.js';
import { ENV, readEnv } from './env.js';

type Env = NodeJS.ProcessEnv;

/** The S3 client settings of `s3: {...}` (a subset of the SDK's S3ClientConfig). */
export interface EnvS3Config {
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface EnvKeySource {
  masterKey?: string;
  masterKeyFile?: string;
  kms?: { keyId: string };
}

export interface EnvEncryption extends EnvKeySource {
  previous?: EnvKeySource[];
  deploymentFingerprint?: string;
  createKeyFile?: boolean;
  defaultKeyDir?: string;
}

export interface EnvTtl {
  ttlDays: number;
  classes?: Record<string, number>;
  defaultClass: string;
}

export interface EnvExpiry extends EnvTtl {
  touchIntervalMs?: number;
}

export interface EnvHistory {
  retentionDays?: number;
  maxVersions?: number;
}

export interface EnvAudit {
  file: string;
  checkpoint?: { file: string };
}

/** What `fromEnv` returns: a part of createVault's options (spread it under your own). */
export interface EnvVaultOptions {
  store?: string;
  s3?: EnvS3Config;
  encryption?: EnvEncryption;
  expiry?: EnvExpiry;
  history?: false | EnvHistory;
  audit?: EnvAudit;
}

const HOUR_MS = 3_600_000;

/** S3 client settings: an endpoint implies path style unless told otherwise; key id and secret go together. */
export function s3FromEnv(env: Env): EnvS3Config {
  const config: EnvS3Config = {};
  const endpoint = readEnv(env, 's3Endpoint');
  if (endpoint) config.endpoint = endpoint;
  // AWS_DEFAULT_REGION is the CLI's variable, which the SDK itself does not read.
  const region = readEnv(env, 's3Region') ?? (env['AWS_REGION'] ? undefined : env['AWS_DEFAULT_REGION'] || undefined);
  if (region) config.region = region;
  const pathStyle = readEnv(env, 's3ForcePathStyle');
  if (pathStyle !== undefined) config.forcePathStyle = pathStyle;
  else if (endpoint) config.forcePathStyle = true;
  const accessKeyId = readEnv(env, 's3AccessKeyId');
  const secretAccessKey = readEnv(env, 's3SecretAccessKey');
  if (accessKeyId && secretAccessKey) config.credentials = { accessKeyId, secretAccessKey };
  else if (accessKeyId || secretAccessKey) {
    throw new MemvaultError(
      'CONFIG',
      `${ENV.s3AccessKeyId.name} and ${ENV.s3SecretAccessKey.name} must be set together`,
    );
  }
  return config;
}

/** The current key source: at most one of the three variables. */
export function keySourceFromEnv(env: Env): EnvKeySource {
  const masterKey = readEnv(env, 'masterKey');
  const masterKeyFile = readEnv(env, 'masterKeyFile');
  const kmsKeyId = readEnv(env, 'kmsKeyId');
  if ([masterKey, masterKeyFile, kmsKeyId].filter((s) => s !== undefined).length > 1)
    throw new MemvaultError(
      'CONFIG',
      `Set only one of ${ENV.masterKey.name}, ${ENV.masterKeyFile.name} and ${ENV.kmsKeyId.name}.`,
    );
  return {
    ...(masterKey !== undefined ? { masterKey } : {}),
    ...(masterKeyFile !== undefined ? { masterKeyFile } : {}),
    ...(kmsKeyId !== undefined ? { kms: { keyId: kmsKeyId } } : {}),
  };
}

/** Old keys during a rotation, with the variable each came from (for logs and messages). */
export function previousKeysFromEnv(env: Env): Array<[EnvKeySource, string]> {
  const keys: Array<[EnvKeySource, string]> = [];
  const masterKey = readEnv(env, 'previousMasterKey');
  if (masterKey !== undefined) keys.push([{ masterKey }, ENV.previousMasterKey.name]);
  const masterKeyFile = readEnv(env, 'previousMasterKeyFile');
  if (masterKeyFile !== undefined) keys.push([{ masterKeyFile }, ENV.previousMasterKeyFile.name]);
  const keyId = readEnv(env, 'previousKmsKeyId');
  if (keyId !== undefined) keys.push([{ kms: { keyId } }, ENV.previousKmsKeyId.name]);
  return keys;
}

export function encryptionFromEnv(env: Env): EnvEncryption {
  const previous = previousKeysFromEnv(env).map(([source]) => source);
  const deploymentFingerprint = readEnv(env, 'deploymentFingerprint');
  const createKeyFile = readEnv(env, 'createKeyFile');
  const defaultKeyDir = readEnv(env, 'home');
  return {
    ...keySourceFromEnv(env),
    ...(previous.length > 0 ? { previous } : {}),
    ...(deploymentFingerprint !== undefined ? { deploymentFingerprint } : {}),
    ...(createKeyFile !== undefined ? { createKeyFile } : {}),
    ...(defaultKeyDir !== undefined ? { defaultKeyDir } : {}),
  };
}

/**
 * The TTL settings; undefined when neither days nor classes are set. `ttlDaysOverride` (a
 * `--ttl-days` flag) wins over MEMVAULT_TTL_DAYS. The classes may carry the default class's days.
 */
export function ttlSettingsFromEnv(env: Env, ttlDaysOverride?: number): EnvTtl | undefined {
  const defaultClass = readEnv(env, 'ttlDefaultClass') ?? 'default';
  const classes = readEnv(env, 'ttlClasses');
  let ttlDays = ttlDaysOverride ?? readEnv(env, 'ttlDays');
  if (ttlDays === undefined && classes && Object.hasOwn(classes, defaultClass)) ttlDays = classes[defaultClass];
  if (ttlDays === undefined) {
    if (classes)
      throw new MemvaultError(
        'CONFIG',
        `expiry: ${ENV.ttlClasses.name} has no '${defaultClass}' class and ${ENV.ttlDays.name} is unset`,
      );
    return undefined;
  }
  return { ttlDays, ...(classes ? { classes } : {}), defaultClass };
}

/**
 * The vault's idle expiry: the TTL settings and MEMVAULT_TOUCH_INTERVAL_HOURS. Undefined when no TTL
 * is set; a malformed interval is CONFIG even then (a setting that is read is never silently ignored).
 */
export function expiryOptionsFromEnv(env: Env): EnvExpiry | undefined {
  const hours = readEnv(env, 'touchIntervalHours');
  const ttl = ttlSettingsFromEnv(env);
  if (!ttl) return undefined;
  return { ...ttl, ...(hours !== undefined ? { touchIntervalMs: hours * HOUR_MS } : {}) };
}

/** false for MEMVAULT_HISTORY=0; else the retention knobs given (undefined when none: history on, its defaults). */
export function historyFromEnv(env: Env): false | EnvHistory | undefined {
  const on = readEnv(env, 'history');
  if (on === false) return false;
  const retentionDays = readEnv(env, 'historyDays');
  const maxVersions = readEnv(env, 'historyVersions');
  if (retentionDays === undefined && maxVersions === undefined) return undefined;
  return {
    ...(retentionDays !== undefined ? { retentionDays } : {}),
    ...(maxVersions !== undefined ? { maxVersions } : {}),
  };
}

export function auditFromEnv(env: Env): EnvAudit | undefined {
  const file = readEnv(env, 'auditFile');
  const checkpoint = readEnv(env, 'auditCheckpointFile');
  if (file === undefined) return undefined;
  return { file, ...(checkpoint !== undefined ? { checkpoint: { file: checkpoint } } : {}) };
}

/**
 * createVault's options from the environment (docs/configuration.md lists the variables). The
 * library never reads process.env by itself; a host that configures memvault by environment calls
 * this and spreads the result under its own options: `createVault({ ...fromEnv(), logger })`.
 * Only what is set appears; a malformed value is a CONFIG error naming the variable. `env` is read,
 * never changed.
 */
export function fromEnv(env: Env = process.env): EnvVaultOptions {
  const store = readEnv(env, 'store');
  const s3 = s3FromEnv(env);
  const encryption = encryptionFromEnv(env);
  const expiry = expiryOptionsFromEnv(env);
  const history = historyFromEnv(env);
  const audit = auditFromEnv(env);
  return {
    ...(store !== undefined ? { store } : {}),
    ...(Object.keys(s3).length > 0 ? { s3 } : {}),
    ...(Object.keys(encryption).length > 0 ? { encryption } : {}),
    ...(expiry ? { expiry } : {}),
    ...(history !== undefined ? { history } : {}),
    ...(audit ? { audit } : {}),
  };
}

/** What the sweeper (`memvault expire`, the Lambda) reads besides the vault's settings. */
export interface EnvSweeper {
  auditStore?: string;
  conditionalDelete?: 'native' | 'recheck';
  graceMinutes?: number;
  stopMarginSeconds?: number;
  overdueHours?: number;
}

export function sweeperFromEnv(env: Env): EnvSweeper {
  const out: EnvSweeper = {};
  const auditStore = readEnv(env, 'auditStore');
  if (auditStore !== undefined) out.auditStore = auditStore;
  const conditionalDelete = readEnv(env, 'conditionalDelete');
  if (conditionalDelete !== undefined) out.conditionalDelete = conditionalDelete;
  const graceMinutes = readEnv(env, 'graceMinutes');
  if (graceMinutes !== undefined) out.graceMinutes = graceMinutes;
  const stopMarginSeconds = readEnv(env, 'stopMarginSeconds');
  if (stopMarginSeconds !== undefined) out.stopMarginSeconds = stopMarginSeconds;
  const overdueHours = readEnv(env, 'overdueHours');
  if (overdueHours !== undefined) out.overdueHours = overdueHours;
  return out;
}
