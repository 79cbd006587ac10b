/**
 * The one place that decides whether a file is expired. The vault and the sweeper both use it, and
 * a dry run uses exactly the sweeper's decision, so a dry run at `--as-of D` names exactly the files
 * a real run at `--as-of D` deletes.
 *
 * Two instants per file, from its LastModified (last write or touch) and its class's TTL:
 * - `hiddenAt` = LastModified + TTL: from then on the vault treats the file as absent (reads return
 *   not found, listings skip it, and a read does not touch it). So a read can never resurrect a
 *   file the sweeper has decided to delete.
 * - `deletableAt` = hiddenAt + grace: the sweeper deletes it from then on. The grace (default one
 *   hour) covers clock skew between the vault's machines and the sweeper's, and a touch that was
 *   sent just before hiddenAt and is still in flight: by the time the sweeper may delete a file, no
 *   touch of its listed version can still be on its way.
 */
import { DAY_MS } from './config.js';

export function hiddenAt(lastModified: Date, ttlDays: number): number {
  return lastModified.getTime() + ttlDays * DAY_MS;
}

/** The vault's view: is this file gone for the user at `now`? */
export function isHidden(lastModified: Date, ttlDays: number, now: Date): boolean {
  return now.getTime() >= hiddenAt(lastModified, ttlDays);
}

/** The latest LastModified that isHidden at `now` (hidden exactly when LastModified <= it): a listing's filter in one figure. */
export function newestHidden(ttlDays: number, now: Date): Date {
  return new Date(now.getTime() - ttlDays * DAY_MS);
}

/** The sweeper's decision (dry run and real run alike). */
export function isDeletable(lastModified: Date, ttlDays: number, asOf: Date, graceMs: number): boolean {
  return asOf.getTime() >= hiddenAt(lastModified, ttlDays) + graceMs;
}

/** Whole idle days at `asOf`, for reports. */
export function idleDays(lastModified: Date, asOf: Date): number {
  return Math.max(0, Math.floor((asOf.getTime() - lastModified.getTime()) / DAY_MS));
}
