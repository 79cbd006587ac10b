/**
 * The arguments of every Vault method, checked at the public entry before anything is read or
 * changed (`restore(user, { asOf: new Date(NaN) })` once deleted every file).
 * The rules are the CLI's (src/cli/commands/user.ts, keys.ts, expire.ts), through the one set of
 * checkers in src/util/validate.ts; an invalid value is INVALID_INPUT (or the checker's own code:
 * INVALID_USER, INVALID_PATH, CONFIG for TTL settings), never a default that changes data.
 */
import { validateUserId } from '../crypto/codec.js';
import { checkTouchInterval, resolveTtl, type TtlSettings } from '../expiry/config.js';
import { canonicalizePath } from '../pipeline/path-guard.js';
import {
  checkActor,
  checkBoolean,
  checkDate,
  checkFunction,
  checkNumber,
  checkOptions,
  checkString,
  ifGiven,
  invalidArgument,
} from '../util/validate.js';
import { WRITERS, type Precondition, type Writer } from '../pipeline/context.js';
import { MEMORY_ROOT } from '../vault/paths.js';

type Options = Record<string, unknown>;

const LIFECYCLE_KEYS = ['actor'] as const;
const PROGRESS_KEYS = [...LIFECYCLE_KEYS, 'onProgress'] as const;
const REKEY_KEYS = [...PROGRESS_KEYS, 'settleMs', 'wait', 'continueOnly', 'now', 'sleep'] as const;
const EXPIRE_KEYS = [...PROGRESS_KEYS, 'ttl', 'dryRun', 'asOf', 'graceMs', 'deleter'] as const;
const RESTORE_KEYS = [...LIFECYCLE_KEYS, 'path', 'asOf', 'dryRun'] as const;
const ROTATE_KEYS = [...PROGRESS_KEYS, 'to'] as const;
const KEY_SOURCE_KEYS = ['masterKey', 'masterKeyFile', 'kms'] as const;
const TTL_KEYS = ['ttlDays', 'classes', 'defaultClass'] as const;

/** An options object of `method` with these keys; `actor` and `onProgress` checked when present. */
function lifecycleOptions(method: string, value: unknown, keys: readonly string[], required = false): Options {
  const options = checkOptions(`${method} options`, value, keys, { required });
  ifGiven(options['actor'], (actor) => checkActor(`${method}: actor`, actor));
  ifGiven(options['onProgress'], (f) => checkFunction(`${method}: onProgress`, f));
  return options;
}

/** A path below /memories in its canonical spelling (the path guard's rules, as for the model's commands). */
export function checkMemoryPath(method: string, path: unknown): string {
  if (typeof path !== 'string') throw invalidArgument(`${method}: path`, 'a path below /memories', path);
  return canonicalizePath(path);
}

export function checkUser(userId: unknown): string {
  return validateUserId(userId);
}

export const checkForgetArgs = (userId: unknown, options: unknown): void => {
  checkUser(userId);
  lifecycleOptions('forgetUser', options, PROGRESS_KEYS);
};

export const checkExportArgs = (userId: unknown, options: unknown): void => {
  checkUser(userId);
  lifecycleOptions('exportUser', options, PROGRESS_KEYS);
};

export const checkVerifyKeysArgs = (options: unknown): void =>
  void lifecycleOptions('verifyKeys', options, ['onProgress']);

/**
 * rotateKeys: `to` is a key provider or exactly one key source. An empty `{}` would fall back to
 * the environment's key, i.e. "rotate" to whatever happens to be configured: refused.
 */
export function checkRotateArgs(options: unknown): void {
  const given = lifecycleOptions('rotateKeys', options, ROTATE_KEYS, true);
  const to = given['to'];
  if (typeof to === 'object' && to !== null && typeof (to as { wrap?: unknown }).wrap === 'function') return;
  const source = checkOptions('rotateKeys: to', to, KEY_SOURCE_KEYS, { required: true });
  const count = KEY_SOURCE_KEYS.filter((k) => source[k] !== undefined).length;
  if (count !== 1)
    throw invalidArgument('rotateKeys: to', 'a key provider or exactly one of masterKey, masterKeyFile and kms', to);
}

function checkRekeyOptions(method: string, options: unknown): void {
  const given = lifecycleOptions(method, options, REKEY_KEYS);
  ifGiven(given['settleMs'], (ms) => checkNumber(`${method}: settleMs`, ms, { integer: true, min: 0 }));
  ifGiven(given['wait'], (b) => checkBoolean(`${method}: wait`, b));
  ifGiven(given['continueOnly'], (b) => checkBoolean(`${method}: continueOnly`, b));
  ifGiven(given['now'], (f) => checkFunction(`${method}: now`, f));
  ifGiven(given['sleep'], (f) => checkFunction(`${method}: sleep`, f));
}

export const checkRekeyUserArgs = (userId: unknown, options: unknown): void => {
  checkUser(userId);
  checkRekeyOptions('rekeyUser', options);
};

export const checkRekeyAllArgs = (options: unknown): void => checkRekeyOptions('rekeyAll', options);

/** TTL settings as `expire({ ttl })` and `createVault({ expiry })` take them (resolveTtl's rules). */
export function checkTtlSettings(name: string, value: unknown, extraKeys: readonly string[] = []): void {
  const ttl = checkOptions(name, value, [...TTL_KEYS, ...extraKeys], { required: true, code: 'CONFIG' });
  // A plain object of class -> days (its names and numbers are resolveTtl's to check).
  ifGiven(ttl['classes'], (classes) =>
    checkOptions(
      `${name}.classes`,
      classes,
      typeof classes === 'object' && classes !== null ? Object.keys(classes) : [],
      { code: 'CONFIG' },
    ),
  );
  resolveTtl(ttl as unknown as TtlSettings);
}

export function checkExpireArgs(options: unknown): void {
  const given = lifecycleOptions('expire', options, EXPIRE_KEYS);
  ifGiven(given['ttl'], (ttl) => checkTtlSettings('expire: ttl', ttl));
  ifGiven(given['dryRun'], (b) => checkBoolean('expire: dryRun', b));
  ifGiven(given['asOf'], (d) => checkDate('expire: asOf', d));
  ifGiven(given['graceMs'], (ms) => checkNumber('expire: graceMs', ms, { min: 0 }));
  ifGiven(given['deleter'], (deleter) => {
    const fn =
      typeof deleter === 'object' && deleter !== null
        ? (deleter as { deleteUnchanged?: unknown }).deleteUnchanged
        : undefined;
    if (typeof fn !== 'function') throw invalidArgument('expire: deleter', 'a ConditionalDeleter', deleter);
  });
}

/** history(userId, path, options): the canonical path. */
export function checkHistoryArgs(userId: unknown, path: unknown, options: unknown): string {
  checkUser(userId);
  const canonical = checkMemoryPath('history', path);
  lifecycleOptions('history', options, LIFECYCLE_KEYS);
  return canonical;
}

/** restore(userId, options): `asOf` is required and a real instant; the canonical path (default: the whole memory). */
export function checkRestoreArgs(userId: unknown, options: unknown): { path: string; asOf: Date; dryRun: boolean } {
  checkUser(userId);
  const given = lifecycleOptions('restore', options, RESTORE_KEYS, true);
  const asOf = checkDate('restore: asOf', given['asOf']);
  const path = given['path'] === undefined ? '/memories' : checkMemoryPath('restore', given['path']);
  const dryRun = given['dryRun'] === undefined ? false : checkBoolean('restore: dryRun', given['dryRun']);
  return { path, asOf, dryRun };
}

/** dropVersion(userId, path, seq, options): the canonical path; seq a version number (a whole number >= 1, as the CLI's --seq). */
export function checkDropVersionArgs(userId: unknown, path: unknown, seq: unknown, options: unknown): string {
  checkUser(userId);
  const canonical = checkMemoryPath('dropVersion', path);
  checkNumber('dropVersion: seq', seq, { integer: true, min: 1 });
  lifecycleOptions('dropVersion', options, LIFECYCLE_KEYS);
  return canonical;
}

/** readVersion(userId, path, seq, options): as dropVersion's, and the path a file (not /memories itself). */
export function checkReadVersionArgs(userId: unknown, path: unknown, seq: unknown, options: unknown): string {
  checkUser(userId);
  const canonical = checkMemoryPath('readVersion', path);
  if (canonical === MEMORY_ROOT) throw invalidArgument('readVersion: path', 'a file below /memories', path);
  checkNumber('readVersion: seq', seq, { integer: true, min: 1 });
  lifecycleOptions('readVersion', options, LIFECYCLE_KEYS);
  return canonical;
}

/** memoryPaused(userId, options). */
export function checkMemoryPausedArgs(userId: unknown, options: unknown): void {
  checkUser(userId);
  lifecycleOptions('memoryPaused', options, LIFECYCLE_KEYS);
}

/** setMemoryPaused(userId, paused, options): paused a boolean, never a default. */
export function checkSetMemoryPausedArgs(userId: unknown, paused: unknown, options: unknown): void {
  checkUser(userId);
  checkBoolean('setMemoryPaused: paused', paused);
  lifecycleOptions('setMemoryPaused', options, LIFECYCLE_KEYS);
}

const RUN_KEYS = ['precondition', 'actor', 'writer', 'signal'] as const;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface CheckedRunOptions {
  precondition?: Precondition;
  actor?: string;
  writer?: Writer;
  signal?: AbortSignal;
}

/** run(userId, input, options): the write condition, the actor, the writer and the signal, checked; unknown keys refused. */
export function checkRunOptions(options: unknown): CheckedRunOptions {
  const given = checkOptions('run options', options, RUN_KEYS);
  const out: CheckedRunOptions = {};
  ifGiven(given['actor'], (actor) => (out.actor = checkActor('run: actor', actor)));
  ifGiven(given['writer'], (writer) => {
    if (!WRITERS.includes(writer as Writer))
      throw invalidArgument('run: writer', "'model', 'person' or 'host'", writer);
    out.writer = writer as Writer;
  });
  ifGiven(given['signal'], (signal) => {
    if (!(signal instanceof AbortSignal)) throw invalidArgument('run: signal', 'an AbortSignal', signal);
    out.signal = signal;
  });
  ifGiven(given['precondition'], (value) => {
    const condition = checkOptions('run: precondition', value, ['ifMatch', 'ifNoneMatch'], { required: true });
    const { ifMatch, ifNoneMatch } = condition;
    if ((ifMatch === undefined) === (ifNoneMatch === undefined))
      throw invalidArgument('run: precondition', 'exactly one of ifMatch and ifNoneMatch', value);
    out.precondition =
      ifMatch !== undefined
        ? { ifMatch: checkString('run: precondition.ifMatch', ifMatch, SHA256_HEX, 'a hex SHA-256 (64 of 0-9 a-f)') }
        : { ifNoneMatch: checkString('run: precondition.ifNoneMatch', ifNoneMatch, /^\*$/, "'*'") as '*' };
  });
  return out;
}

/** tool(userId, extraProps): extraProps, when given, is an object (its members are the SDK's). */
export function checkExtraProps(extraProps: unknown): void {
  if (extraProps !== undefined && (typeof extraProps !== 'object' || extraProps === null || Array.isArray(extraProps)))
    throw invalidArgument('tool: extraProps', 'an object', extraProps);
}

/** The expiry option's touch interval against its TTLs (the vault checks the same at start-up). */
export function checkExpiryTouch(ttl: TtlSettings, touchIntervalMs: unknown): void {
  if (touchIntervalMs !== undefined) checkNumber('expiry.touchIntervalMs', touchIntervalMs, { min: 0, code: 'CONFIG' });
  checkTouchInterval(resolveTtl(ttl), touchIntervalMs as number | undefined);
}
