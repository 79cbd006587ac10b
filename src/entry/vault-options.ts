/**
 * createVault's options, checked before anything is opened: a misspelt option (`histroy: false`)
 * or a value of the wrong kind is a CONFIG error naming it, like the CLI's unknown flag, never
 * silently ignored or replaced by a default. The members that have a resolver of their own (pii,
 * quota, audit, encryption's keys, history's numbers, expiry's TTLs) are checked by it too; here
 * is what no resolver looked at: the keys, the kinds, and the numbers that went unchecked.
 */
import {
  checkBoolean,
  checkFunction,
  checkNumber,
  checkOneOf,
  checkOptions,
  ifGiven,
  invalidArgument,
} from '../util/validate.js';
import { checkExpiryTouch, checkTtlSettings } from './arguments.js';
import type { TtlSettings } from '../expiry/config.js';
import { PII_TYPES } from '../pii/types.js';
import { DEFAULT_QUOTA } from '../pipeline/quota-options.js';

const CONFIG = { code: 'CONFIG' } as const;
const S3_OPTION_KEYS = ['conditionChecks', 'restateTagsOnReplace'] as const;

export const VAULT_OPTION_KEYS = [
  'store',
  's3',
  's3Options',
  'logger',
  'encryption',
  'codec',
  'pii',
  'quota',
  'middlewares',
  'outerMiddlewares',
  'limits',
  'audit',
  'createMode',
  'expiry',
  'history',
  'create',
] as const;

const ENCRYPTION_KEYS = [
  'masterKey',
  'masterKeyFile',
  'kms',
  'previous',
  'cache',
  'maxKeyBytes',
  'createKeyFile',
  'deploymentFingerprint',
  'defaultKeyDir',
] as const;
const CACHE_KEYS = ['maxEntries', 'maxAgeMs', 'wipeGraceMs', 'now'] as const;
const LIMIT_KEYS = ['viewChars', 'maxFileBytes', 'maxImageBytes', 'maxWriteAttempts', 'resumeAfterMs'] as const;
const HISTORY_KEYS = ['retentionDays', 'maxVersions'] as const;
const EXPIRY_EXTRA_KEYS = ['classOf', 'touchIntervalMs', 'now', 'onTouchError'] as const;
const PII_KEYS = ['policy', 'allowList', 'phoneRegions', 'ipAddresses', 'pathKey'] as const;
// The quota's numbers are resolveQuota's to check; a misspelt name would leave its limit at the default.
export const QUOTA_KEYS = [...Object.keys(DEFAULT_QUOTA), 'now', 'onInternalError'];
const AUDIT_KEYS = [
  'file',
  'stdout',
  'sync',
  'fsync',
  'maxSegmentBytes',
  'sealOnClose',
  'instanceId',
  'includeUserId',
  'upload',
  'macKey',
  'checkpoint',
  'shared',
  'onError',
  'now',
  'redactPath',
  'rawUserIdOf',
  'auditUidOf',
] as const;

/** `s3Options` of createVault and openStore. */
export function checkS3Options(name: string, value: unknown): void {
  const options = checkOptions(name, value, S3_OPTION_KEYS, CONFIG);
  ifGiven(options['conditionChecks'], (c) =>
    checkOneOf(`${name}.conditionChecks`, c, ['native', 'check-first'], CONFIG),
  );
  ifGiven(options['restateTagsOnReplace'], (b) => checkBoolean(`${name}.restateTagsOnReplace`, b, CONFIG));
}

function objectOrFalse(name: string, value: unknown): value is object {
  if (value === false) return false;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidArgument(name, 'an options object or false', value, 'CONFIG');
  return true;
}

function checkMiddlewares(name: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidArgument(name, 'an array of middlewares', value, 'CONFIG');
  (value as unknown[]).forEach((m, i) => void checkFunction(`${name}[${i}]`, m, CONFIG));
}

function checkEncryption(value: unknown): void {
  if (!objectOrFalse('encryption', value)) return;
  const encryption = checkOptions('encryption', value, ENCRYPTION_KEYS, CONFIG);
  ifGiven(encryption['maxKeyBytes'], (n) =>
    checkNumber('encryption.maxKeyBytes', n, { integer: true, min: 1, ...CONFIG }),
  );
  ifGiven(encryption['createKeyFile'], (b) => checkBoolean('encryption.createKeyFile', b, CONFIG));
  ifGiven(encryption['defaultKeyDir'], (dir) => {
    if (typeof dir !== 'string' || dir === '')
      throw invalidArgument('encryption.defaultKeyDir', 'a directory path', dir, 'CONFIG');
  });
  ifGiven(encryption['previous'], (p) => {
    if (!Array.isArray(p)) throw invalidArgument('encryption.previous', 'an array of key sources', p, 'CONFIG');
  });
  ifGiven(encryption['cache'], (c) => {
    const cache = checkOptions('encryption.cache', c, CACHE_KEYS, CONFIG);
    ifGiven(cache['maxEntries'], (n) =>
      checkNumber('encryption.cache.maxEntries', n, { integer: true, min: 1, ...CONFIG }),
    );
    ifGiven(cache['maxAgeMs'], (n) => checkNumber('encryption.cache.maxAgeMs', n, { min: 0, ...CONFIG }));
    ifGiven(cache['wipeGraceMs'], (n) => checkNumber('encryption.cache.wipeGraceMs', n, { min: 0, ...CONFIG }));
    ifGiven(cache['now'], (f) => checkFunction('encryption.cache.now', f, CONFIG));
  });
}

/** A misspelt type (`EMAILS: 'allow'`) or policy would silently leave the type at its default. */
export function checkPii(value: unknown): void {
  if (!objectOrFalse('pii', value)) return;
  const pii = checkOptions('pii', value, PII_KEYS, CONFIG);
  ifGiven(pii['policy'], (p) => {
    const policy = checkOptions('pii.policy', p, PII_TYPES, CONFIG);
    for (const [type, rule] of Object.entries(policy))
      ifGiven(rule, (r) => checkOneOf(`pii.policy.${type}`, r, ['redact', 'reject', 'allow'], CONFIG));
  });
  ifGiven(pii['ipAddresses'], (m) => checkOneOf('pii.ipAddresses', m, ['host', 'all'], CONFIG));
  for (const name of ['allowList', 'phoneRegions'] as const)
    ifGiven(pii[name], (list) => {
      if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
        throw invalidArgument(`pii.${name}`, 'an array of strings', list, 'CONFIG');
    });
}

function checkExpiry(value: unknown): void {
  checkTtlSettings('expiry', value, EXPIRY_EXTRA_KEYS);
  const expiry = value as Record<string, unknown>;
  for (const name of ['classOf', 'now', 'onTouchError'] as const)
    ifGiven(expiry[name], (f) => checkFunction(`expiry.${name}`, f, CONFIG));
  checkExpiryTouch(expiry as unknown as TtlSettings, expiry['touchIntervalMs']);
}

/** Throws CONFIG for the first option createVault cannot use as given. */
export function checkVaultOptions(value: unknown): void {
  const options = checkOptions('createVault options', value, VAULT_OPTION_KEYS, CONFIG);
  ifGiven(options['store'], (store) => {
    if (typeof store !== 'string' && (typeof store !== 'object' || store === null))
      throw invalidArgument(
        'store',
        "a store URL ('file:///abs/dir', 's3://bucket/prefix', 'memory:') or an ObjectStore",
        store,
        'CONFIG',
      );
  });
  ifGiven(options['s3Options'], (o) => checkS3Options('s3Options', o));
  ifGiven(options['createMode'], (mode) => checkOneOf('createMode', mode, ['overwrite', 'fail'], CONFIG));
  ifGiven(options['create'], (b) => checkBoolean('create', b, CONFIG));
  ifGiven(options['history'], (h) => {
    if (typeof h !== 'boolean') checkOptions('history', h, HISTORY_KEYS, CONFIG);
  });
  ifGiven(options['middlewares'], (m) => checkMiddlewares('middlewares', m));
  ifGiven(options['outerMiddlewares'], (m) => checkMiddlewares('outerMiddlewares', m));
  ifGiven(options['limits'], (l) => {
    const limits = checkOptions('limits', l, LIMIT_KEYS, CONFIG);
    for (const key of LIMIT_KEYS) {
      // Attempts and sizes are counts; resumeAfterMs may be 0 (a host that knows the other instance is gone).
      ifGiven(limits[key], (n) =>
        checkNumber(`limits.${key}`, n, { integer: true, min: key === 'resumeAfterMs' ? 0 : 1, ...CONFIG }),
      );
    }
  });
  ifGiven(options['expiry'], checkExpiry);
  ifGiven(options['encryption'], checkEncryption);
  ifGiven(options['pii'], checkPii);
  ifGiven(options['quota'], (q) => {
    if (objectOrFalse('quota', q)) checkOptions('quota', q, QUOTA_KEYS, CONFIG);
  });
  ifGiven(options['audit'], (a) => checkOptions('audit', a, AUDIT_KEYS, CONFIG));
  ifGiven(options['codec'], (c) => {
    if (typeof c !== 'object' || c === null || typeof (c as { forUser?: unknown }).forUser !== 'function')
      throw invalidArgument('codec', 'a CodecProvider', c, 'CONFIG');
  });
  ifGiven(options['logger'], (l) => {
    if (typeof l !== 'object' || l === null)
      throw invalidArgument('logger', 'a logger object (pino, console, ...)', l, 'CONFIG');
  });
}
