/**
 * createVault's options, checked before anything is opened: a misspelt option (`histroy: false`)
 * or a value of the wrong kind is a CONFIG error naming it, like the CLI's unknown flag, never
 * silently ignored or replaced by a default. The members that have a resolver of their own (pii,
 * quota, audit, encryption's keys, history's numbers, expiry's TTLs) are checked by it too; here
 * is what no resolver looked at: the keys, the kinds, and the numbers that went unchecked.
 */
import { checkBoolean, checkFunction, checkNumber, checkOneOf, checkOptions, ifGiven, invalidArgument } from '../util/validate.js';
import { checkExpiryTouch, checkTtlSettings } from './arguments.js';
import type { TtlSettings } from '../expiry/config.js';

const CONFIG = { code: 'CONFIG' } as const;

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

const ENCRYPTION_KEYS = ['masterKey', 'masterKeyFile', 'kms', 'previous', 'cache', 'maxKeyBytes', 'createKeyFile', 'deploymentFingerprint'] as const;
const CACHE_KEYS = ['maxEntries', 'maxAgeMs', 'wipeGraceMs', 'now'] as const;
const LIMIT_KEYS = ['viewChars', 'maxFileBytes', 'maxImageBytes', 'maxWriteAttempts', 'resumeAfterMs'] as const;
const HISTORY_KEYS = ['retentionDays', 'maxVersions'] as const;
const EXPIRY_EXTRA_KEYS = ['classOf', 'touchIntervalMs', 'now', 'onTouchError'] as const;

function objectOrFalse(name: string, value: unknown): value is object {
  if (value === false) return false;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArgument(name, 'an options object or false', value, 'CONFIG');
  return true;
}

function checkMiddlewares(name: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidArgument(name, 'an array of middlewares', value, 'CONFIG');
  (value as unknown[]).forEach((m, i) => void checkFunction(`${name}[${i}]`, m, CONFIG));
}

function checkEncryption(value: unknown): void {
  if (!objectOrFalse('encryption', value)) return;
  const encryption = checkOptions('encryption', value, ENCRYPTION_KEYS, CONFIG);
  ifGiven(encryption['maxKeyBytes'], (n) => checkNumber('encryption.maxKeyBytes', n, { integer: true, min: 1, ...CONFIG }));
  ifGiven(encryption['createKeyFile'], (b) => checkBoolean('encryption.createKeyFile', b, CONFIG));
  ifGiven(encryption['previous'], (p) => {
    if (!Array.isArray(p)) throw invalidArgument('encryption.previous', 'an array of key sources', p, 'CONFIG');
  });
  ifGiven(encryption['cache'], (c) => {
    const cache = checkOptions('encryption.cache', c, CACHE_KEYS, CONFIG);
    ifGiven(cache['maxEntries'], (n) => checkNumber('encryption.cache.maxEntries', n, { integer: true, min: 1, ...CONFIG }));
    ifGiven(cache['maxAgeMs'], (n) => checkNumber('encryption.cache.maxAgeMs', n, { min: 0, ...CONFIG }));
    ifGiven(cache['wipeGraceMs'], (n) => checkNumber('encryption.cache.wipeGraceMs', n, { min: 0, ...CONFIG }));
    ifGiven(cache['now'], (f) => checkFunction('encryption.cache.now', f, CONFIG));
  });
}

function checkExpiry(value: unknown): void {
  checkTtlSettings('expiry', value, EXPIRY_EXTRA_KEYS);
  const expiry = value as Record<string, unknown>;
  for (const name of ['classOf', 'now', 'onTouchError'] as const) ifGiven(expiry[name], (f) => checkFunction(`expiry.${name}`, f, CONFIG));
  checkExpiryTouch(expiry as unknown as TtlSettings, expiry['touchIntervalMs']);
}

/** Throws CONFIG for the first option createVault cannot use as given. */
export function checkVaultOptions(value: unknown): void {
  const options = checkOptions('createVault options', value, VAULT_OPTION_KEYS, CONFIG);
  ifGiven(options['store'], (store) => {
    if (typeof store !== 'string' && (typeof store !== 'object' || store === null))
      throw invalidArgument('store', "a store URL ('file:///abs/dir', 's3://bucket/prefix', 'memory:') or an ObjectStore", store, 'CONFIG');
  });
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
      ifGiven(limits[key], (n) => checkNumber(`limits.${key}`, n, { integer: true, min: key === 'resumeAfterMs' ? 0 : 1, ...CONFIG }));
    }
  });
  ifGiven(options['expiry'], checkExpiry);
  ifGiven(options['encryption'], checkEncryption);
  for (const name of ['pii', 'quota'] as const) ifGiven(options[name], (o) => objectOrFalse(name, o));
  ifGiven(options['audit'], (a) => {
    if (typeof a !== 'object' || a === null || Array.isArray(a)) throw invalidArgument('audit', 'an options object', a, 'CONFIG');
  });
  ifGiven(options['codec'], (c) => {
    if (typeof c !== 'object' || c === null || typeof (c as { forUser?: unknown }).forUser !== 'function')
      throw invalidArgument('codec', 'a CodecProvider', c, 'CONFIG');
  });
  ifGiven(options['logger'], (l) => {
    if (typeof l !== 'object' || l === null) throw invalidArgument('logger', 'a logger object (pino, console, ...)', l, 'CONFIG');
  });
}
