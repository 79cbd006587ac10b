/**
 * The one set of argument checkers for the public API and the CLI: a value
 * that means nothing (an invalid Date, NaN, a misspelt option) is a typed error before anything is
 * read or changed, never a default that changes data. Each checker names the argument and what it
 * must be; it shows numbers and types, never a string's content (a path or an id is user data).
 */
import { MemvaultError, type ErrorCode } from '../errors.js';

/** How a refused value is described: numbers and types only. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : 'a Date';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length === 0 ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}

/** The error of a refused argument: INVALID_INPUT by default (CONFIG for start-up options). */
export function invalidArgument(
  name: string,
  expected: string,
  value: unknown,
  code: ErrorCode = 'INVALID_INPUT',
): MemvaultError {
  return new MemvaultError(
    code,
    `memvault: ${name} must be ${expected} (got ${describeValue(value)}); nothing was changed`,
  );
}

export interface CheckOptions {
  /** The error code (default INVALID_INPUT; createVault's options use CONFIG). */
  code?: ErrorCode;
}

/** A Date that is a real instant (not `new Date(NaN)`, not a string or a number). */
export function checkDate(name: string, value: unknown, options: CheckOptions = {}): Date {
  if (!(value instanceof Date) || !Number.isFinite(value.getTime()))
    throw invalidArgument(name, 'a valid Date', value, options.code);
  return value;
}

export interface NumberRange extends CheckOptions {
  min?: number;
  max?: number;
  /** A whole number (a safe integer). */
  integer?: boolean;
}

function rangeText(range: NumberRange): string {
  const kind = range.integer ? 'a whole number' : 'a finite number';
  if (range.min !== undefined && range.max !== undefined) return `${kind} from ${range.min} to ${range.max}`;
  if (range.min !== undefined) return `${kind} >= ${range.min}`;
  if (range.max !== undefined) return `${kind} <= ${range.max}`;
  return kind;
}

/** A finite number (a safe integer when `integer`), within [min, max]. */
export function checkNumber(name: string, value: unknown, range: NumberRange = {}): number {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!range.integer || Number.isSafeInteger(value)) &&
    (range.min === undefined || value >= range.min) &&
    (range.max === undefined || value <= range.max);
  if (!ok) throw invalidArgument(name, rangeText(range), value, range.code);
  return value;
}

export function checkBoolean(name: string, value: unknown, options: CheckOptions = {}): boolean {
  if (typeof value !== 'boolean') throw invalidArgument(name, 'true or false', value, options.code);
  return value;
}

export function checkFunction<T>(name: string, value: T, options: CheckOptions = {}): T {
  if (typeof value !== 'function') throw invalidArgument(name, 'a function', value, options.code);
  return value;
}

export function checkOneOf<T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
  options: CheckOptions = {},
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw invalidArgument(name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value, options.code);
  return value as T;
}

/** A string matching `pattern` (described by `expected`). */
export function checkString(
  name: string,
  value: unknown,
  pattern: RegExp,
  expected: string,
  options: CheckOptions = {},
): string {
  if (typeof value !== 'string' || !pattern.test(value)) throw invalidArgument(name, expected, value, options.code);
  return value;
}

/** Operator or ticket ids (the audit record's actor): the pattern audit records keep. */
export const ACTOR_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function checkActor(name: string, value: unknown, options: CheckOptions = {}): string {
  return checkString(
    name,
    value,
    ACTOR_PATTERN,
    '1-128 characters of A-Z a-z 0-9 . _ : - (an operator or ticket id, no e-mail address)',
    options,
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * An options object: a plain object (or undefined when `required` is not set) whose every key is
 * one of `allowed`: a misspelt option is an error like the CLI's unknown flag, never ignored.
 */
export function checkOptions(
  name: string,
  value: unknown,
  allowed: readonly string[],
  options: CheckOptions & { required?: boolean } = {},
): Record<string, unknown> {
  if (value === undefined && !options.required) return {};
  if (!isPlainObject(value)) throw invalidArgument(name, 'an options object', value, options.code);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      throw new MemvaultError(
        options.code ?? 'INVALID_INPUT',
        `memvault: ${name} has an unknown option '${key.slice(0, 64)}' (known: ${allowed.join(', ')}); nothing was changed`,
      );
  }
  return value;
}

/** Runs `check` on a member that is present (an explicit undefined counts as absent). */
export function ifGiven<T>(value: T | undefined, check: (value: T) => unknown): void {
  if (value !== undefined) check(value);
}
