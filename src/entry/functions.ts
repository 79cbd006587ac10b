/**
 * The package's plain functions that take options, wrapped with their argument checks:
 * `openStore({ craete: false })` created the directory it was asked not to, and
 * `verifyChains(chains, { mackey })` verified without the MAC and reported ok. src/index.ts exports
 * these; the unchecked originals stay internal.
 */
import { verifyChains as verifyChainsUnchecked, type VerifyOptions, type VerifyReport } from '../audit/index.js';
import type { CollectedChains } from '../audit/sources.js';
import { openStore as openStoreUnchecked, type OpenStoreOptions } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';
import { checkBoolean, checkOptions, ifGiven, invalidArgument } from '../util/validate.js';
import { piiRedactor as piiRedactorUnchecked, type PiiMiddlewareOptions } from '../pipeline/pii-redactor.js';
import { quota as quotaUnchecked, type QuotaMiddleware, type QuotaOptions } from '../pipeline/quota.js';
import type { Middleware } from '../pipeline/context.js';
import { checkPii, checkS3Options, QUOTA_KEYS } from './vault-options.js';

const CONFIG = { code: 'CONFIG' } as const;
const OPEN_STORE_KEYS = ['s3', 's3Options', 'env', 'create'] as const;

function checkOpenStoreArgs(name: string, url: unknown, value: unknown, keys: readonly string[]): void {
  if (typeof url !== 'string')
    throw invalidArgument(
      `${name}: url`,
      "a store URL ('file:///abs/dir', 's3://bucket/prefix', 'memory:')",
      url,
      'CONFIG',
    );
  const options = checkOptions(`${name} options`, value, keys, CONFIG);
  ifGiven(options['create'], (b) => checkBoolean(`${name}: create`, b, CONFIG));
  ifGiven(options['s3Options'], (o) => checkS3Options(`${name}: s3Options`, o));
  ifGiven(options['env'], (env) => {
    if (typeof env !== 'object' || env === null || Array.isArray(env))
      throw invalidArgument(`${name}: env`, 'an environment object', env, 'CONFIG');
  });
}

/** Opens a store from a URL (see store/open.ts); a misspelt or mistyped option is CONFIG, before anything is created. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ObjectStore> {
  checkOpenStoreArgs('openStore', url, options, OPEN_STORE_KEYS);
  return openStoreUnchecked(url, options);
}

/** Opens the store behind a URL without creating it (a file store's directory must exist already). */
export async function openExistingStore(
  url: string,
  options: Omit<OpenStoreOptions, 'create'> = {},
): Promise<ObjectStore> {
  checkOpenStoreArgs(
    'openExistingStore',
    url,
    options,
    OPEN_STORE_KEYS.filter((k) => k !== 'create'),
  );
  return openStoreUnchecked(url, { ...options, create: false });
}

/**
 * Verifies every chain (audit/verify.ts). Fail closed: options it cannot use (a misspelt `macKey`
 * would verify without MACs and report ok) are INVALID_INPUT, not ignored.
 */
export async function verifyChains(collected: CollectedChains, options: VerifyOptions = {}): Promise<VerifyReport> {
  if (
    typeof collected !== 'object' ||
    collected === null ||
    !Array.isArray(collected.chains) ||
    !Array.isArray(collected.unreadable)
  )
    throw invalidArgument('verifyChains: chains', 'what collectFileChains or collectStoreChains returned', collected);
  const given = checkOptions('verifyChains options', options, ['macKey', 'witnesses']);
  ifGiven(given['macKey'], (key) => {
    if (!(key instanceof Uint8Array) || key.length === 0)
      throw invalidArgument('verifyChains: macKey', 'the audit key (a Uint8Array)', key);
  });
  ifGiven(given['witnesses'], (w) => {
    if (!Array.isArray(w)) throw invalidArgument('verifyChains: witnesses', 'an array of chain witnesses', w);
  });
  return verifyChainsUnchecked(collected, options);
}

/** The quota middleware for a chain of the host's own (pipeline/quota.ts); a misspelt limit is CONFIG, not the default. */
export function quota(options: QuotaOptions = {}): QuotaMiddleware {
  checkOptions('quota options', options, QUOTA_KEYS, CONFIG);
  return quotaUnchecked(options);
}

/** The PII redactor middleware (pipeline/pii-redactor.ts); a misspelt type or policy is CONFIG, not the default. */
export function piiRedactor(options?: PiiMiddlewareOptions): Middleware {
  if (options !== undefined) checkPii(options);
  return piiRedactorUnchecked(options);
}
