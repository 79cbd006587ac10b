/**
 * Idle-expiry configuration, shared by the vault (touch on read, hiding expired files, the TTL-class
 * tag on writes) and the sweeper (`memvault expire`). One TTL per class: the default class gets
 * `ttlDays`; other classes (per tenant, per user tier) are named in `classes`. The class name is the
 * value of the `memvault-ttl-class` tag that every write carries, so that one S3 lifecycle rule per
 * class (infra/lib/memvault-storage.ts) expires the class's files.
 */
import { ENV } from '../config/env.js';
import { MemvaultError } from '../errors.js';

/** The object tag whose value names a file's TTL class (the infra's lifecycle rules filter on it). */
export const TTL_CLASS_TAG_KEY = 'memvault-ttl-class';
export const DEFAULT_TTL_CLASS = 'default';
export const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A file is touched on read when its last touch is at least this old: one day, or half the shortest
 * TTL when that is shorter (a one-day TTL is touched every 12 hours; see defaultTouchIntervalMs).
 */
export const DEFAULT_TOUCH_INTERVAL_MS = DAY_MS;
/**
 * The sweeper deletes a file only this long after the vault stopped serving it (see decide.ts): the
 * margin absorbs clock skew between machines and a touch still in flight at the expiry instant.
 */
export const DEFAULT_SWEEP_GRACE_MS = 60 * 60 * 1000;

/**
 * Same alphabet as the infra construct (S3 tag values minus spaces and '/'), so that a class name
 * is a valid tag value, a lifecycle rule id suffix and one key segment.
 */
const CLASS_NAME = /^[A-Za-z0-9_.:+=@-]{1,64}$/;

export interface TtlSettings {
  /** Idle days after which a file of the default class expires (an integer, as lifecycle rules take). */
  ttlDays: number;
  /** Further classes: name -> idle days, e.g. { pro: 365 }. May list the default class (with ttlDays). */
  classes?: Readonly<Record<string, number>>;
  /** Tag value of files no other class applies to. Default 'default' (the infra's defaultTtlClass). */
  defaultClass?: string;
}

/** `createVault({ expiry })`: what the vault does about idle files. */
export interface ExpiryOptions extends TtlSettings {
  /**
   * The TTL class of a user (undefined: the default class). Called once per command, so keep it
   * cheap. When given, the vault records a user's non-default class once in a marker object
   * (`u/{uid}/c/{class}`) that the sweeper reads from its listing.
   */
  classOf?: (userId: string) => string | undefined | Promise<string | undefined>;
  /**
   * Touch (copy in place) a file on read when its last touch is at least this old. Default: 1 day,
   * or half the shortest TTL when that is shorter. Must be shorter than the shortest TTL.
   */
  touchIntervalMs?: number;
  /** Clock for tests; the store's LastModified is compared against it. */
  now?: () => Date;
  /** Called when a best-effort touch fails (the read itself has succeeded). */
  onTouchError?: (error: unknown) => void;
}

export interface ResolvedTtl {
  ttlDays: number;
  defaultClass: string;
  /** Every class including the default one, name -> days. */
  classes: Readonly<Record<string, number>>;
}

function invalid(message: string): MemvaultError {
  return new MemvaultError('CONFIG', `expiry: ${message}`);
}

function checkDays(name: string, days: unknown): number {
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 100_000) {
    // S3 lifecycle expiration takes whole days >= 1; the sweeper uses the same numbers.
    throw invalid(`${name} must be a whole number of days >= 1 (got ${String(days)})`);
  }
  return days;
}

export function isValidClassName(name: string): boolean {
  return CLASS_NAME.test(name);
}

export function resolveTtl(settings: TtlSettings): ResolvedTtl {
  const ttlDays = checkDays('ttlDays', settings.ttlDays);
  const defaultClass = settings.defaultClass ?? DEFAULT_TTL_CLASS;
  if (!isValidClassName(defaultClass))
    throw invalid('defaultClass must be 1-64 characters of A-Z a-z 0-9 _ . : + = @ -');
  const classes: Record<string, number> = {};
  for (const [name, days] of Object.entries(settings.classes ?? {})) {
    if (!isValidClassName(name))
      throw invalid(`TTL class name '${name}' must be 1-64 characters of A-Z a-z 0-9 _ . : + = @ -`);
    classes[name] = checkDays(`classes.${name}`, days);
  }
  // The default class always has ttlDays: an explicit ttlDays (e.g. `--ttl-days`) overrides it.
  classes[defaultClass] = ttlDays;
  return { ttlDays, defaultClass, classes };
}

/** TTL in days of a class; undefined for a class this configuration does not know. */
export function ttlDaysOf(ttl: ResolvedTtl, className: string | undefined): number | undefined {
  if (className === undefined || className === ttl.defaultClass) return ttl.ttlDays;
  return Object.hasOwn(ttl.classes, className) ? ttl.classes[className] : undefined;
}

/**
 * A stored user's class from the class markers found under their prefix: none, the default class;
 * several (a class change writes the new marker before it removes the old one), the one with the
 * longest TTL, so that nothing is treated as expired early. Undefined when one of them is a class
 * this configuration does not know. The sweeper and a host-side rewrite (re-keying) decide alike.
 */
export function classOfMarkers(
  ttl: ResolvedTtl,
  classes: string[],
): { className: string; ttlDays: number } | undefined {
  if (classes.length === 0) return { className: ttl.defaultClass, ttlDays: ttl.ttlDays };
  let longest: { className: string; ttlDays: number } | undefined;
  for (const className of classes) {
    const days = ttlDaysOf(ttl, className);
    if (days === undefined) return undefined;
    if (longest === undefined || days > longest.ttlDays) longest = { className, ttlDays: days };
  }
  return longest;
}

function shortestTtlMs(ttl: ResolvedTtl): number {
  return Math.min(...Object.values(ttl.classes)) * DAY_MS;
}

/**
 * The touch interval when none is given: a day, or half the shortest TTL. Half, so that a file read
 * at least once per half-TTL is always touched in time, and a one-day TTL works without a setting.
 */
export function defaultTouchIntervalMs(ttl: ResolvedTtl): number {
  return Math.min(DEFAULT_TOUCH_INTERVAL_MS, shortestTtlMs(ttl) / 2);
}

export function checkTouchInterval(ttl: ResolvedTtl, touchIntervalMs: number | undefined): number {
  if (touchIntervalMs === undefined) return defaultTouchIntervalMs(ttl);
  if (typeof touchIntervalMs !== 'number' || !Number.isFinite(touchIntervalMs) || touchIntervalMs <= 0)
    throw invalid('touchIntervalMs must be positive');
  const shortest = shortestTtlMs(ttl);
  // A file read once per interval must be touched before its TTL runs out, or reading would not keep it.
  if (touchIntervalMs >= shortest)
    throw invalid(
      `touchIntervalMs must be shorter than the shortest TTL (${shortest / 3_600_000} hours; set ${ENV.touchIntervalHours.name} or expiry.touchIntervalMs lower, or leave it unset)`,
    );
  return touchIntervalMs;
}
