/**
 * A LIST as one range scan of the key index: keys are UTF-8 bytes in a BLOB column, so the keys
 * that start with a prefix are those from the prefix up to (not including) the prefix's successor,
 * the shortest byte string greater than all of them.
 */
import { MemvaultError } from '../../errors.js';
import type { SummaryOptions } from '../port.js';

export interface ListBounds {
  /** `key > after` (a continuation) or `key >= prefix`. */
  exclusiveLower: boolean;
  /** Whether the range has an upper end (a prefix of only 0xFF bytes, or none, has not). */
  bounded: boolean;
  params: Buffer[];
}

export function prefixBounds(prefix: string, after: string | undefined): ListBounds {
  const low = Buffer.from(prefix, 'utf8');
  const afterBytes = after === undefined ? undefined : Buffer.from(after, 'utf8');
  const exclusiveLower = afterBytes !== undefined && Buffer.compare(afterBytes, low) >= 0;
  const lower = exclusiveLower ? afterBytes : low;
  const upper = successor(low);
  return { exclusiveLower, bounded: upper !== undefined, params: upper ? [lower, upper] : [lower] };
}

export function listStatement(bounds: ListBounds): string {
  const lower = bounds.exclusiveLower ? 'key > ?' : 'key >= ?';
  const upper = bounds.bounded ? ' AND key < ?' : '';
  // The key as TEXT: SQLite hands the stored UTF-8 bytes (valid: every key is checked on write) to Node as a
  // string, with no Uint8Array per row to copy and decode. Aliased, so that ORDER BY is the BLOB column's index.
  return `SELECT CAST(key AS TEXT) AS name, size, etag, modified FROM objects WHERE ${lower}${upper} ORDER BY key LIMIT ?`;
}

/**
 * `SUM` and `COUNT` over the same range, in SQLite, with a summary's filters (ObjectStore.summarize):
 * no row per object reaches JavaScript. The overhead comes off each size before the sum, never below
 * the floor (0, as a codec's plaintextSize clamps, or a kept version's least cost), so that the total
 * is what the listing's sizes add up to as its caller counts them.
 */
export function summaryStatement(
  prefix: string,
  options: SummaryOptions,
): { sql: string; params: Array<Buffer | number> } {
  const bounds = prefixBounds(prefix, undefined);
  const sizes = options.exceptSizes ?? [];
  const overhead = options.overhead ?? 0;
  const floor = options.floor ?? 0;
  const after = options.modifiedAfter === undefined ? undefined : timeOf(options.modifiedAfter);
  if (
    sizes.length > MAX_EXCEPTED_SIZES ||
    ![...sizes, overhead, floor].every((n) => Number.isSafeInteger(n) && n >= 0) ||
    (after !== undefined && !Number.isSafeInteger(after))
  )
    throw new MemvaultError('INVALID_INPUT', 'summary options are not valid');
  const where = [bounds.bounded ? 'key >= ? AND key < ?' : 'key >= ?'];
  if (after !== undefined) where.push('modified > ?');
  for (let i = 0; i < sizes.length; i++) where.push('size != ?');
  const sql = `SELECT count(*) AS objects, coalesce(sum(max(size - ?, ?)), 0) AS bytes FROM objects WHERE ${where.join(' AND ')}`;
  return { sql, params: [overhead, floor, ...bounds.params, ...(after !== undefined ? [after] : []), ...sizes] };
}

/** A Date's milliseconds, NaN for anything else (refused with the other options). */
const timeOf = (value: unknown): number => (value instanceof Date ? value.getTime() : Number.NaN);

/** The sizes a summary may leave out (markers): a handful, one statement shape each. */
const MAX_EXCEPTED_SIZES = 8;

/** The smallest byte string greater than every string that starts with `prefix`; none for '' or all-0xFF. */
function successor(prefix: Buffer): Buffer | undefined {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return undefined;
  const next = Buffer.from(prefix.subarray(0, end));
  next[end - 1]! += 1;
  return next;
}
