/**
 * The path segments a PII scan found nothing in, remembered so that the names most commands repeat
 * are not scanned again (src/pipeline/pii-redactor.ts keeps one memo per redactor, each user's
 * segments apart; redactPathValues in edit.ts reads and fills it).
 */
import { LruMap } from '../util/lru.js';

/** Path segments the scan found nothing in, under one set of options (redactPathValues skips their scan). */
export interface CleanSegments {
  has(segment: string): boolean;
  add(segment: string): void;
}

/**
 * At most `limit` clean segments, the least recently seen forgotten first. A scan depends on the
 * segment and the options only, so a segment once found clean stays clean for one middleware's
 * options: most commands name the same few directories and files, and their scan (about 2 µs a
 * segment) is then skipped. Segments with findings are never kept (their tag is per user).
 */
export function cleanSegmentsMemo(limit: number): CleanSegments {
  const seen = new LruMap<string, true>(limit);
  return { has: (segment) => seen.get(segment) === true, add: (segment) => seen.set(segment, true) };
}

/**
 * One user's view of a shared memo: their segments apart from everyone else's, so that whether a
 * name is remembered (a scan skipped, a command a few µs faster) never depends on another user's
 * names. `scope` must not contain NUL (user ids cannot).
 */
export function scopedSegments(memo: CleanSegments, scope: string): CleanSegments {
  const prefix = `${scope}\u0000`;
  return { has: (segment) => memo.has(prefix + segment), add: (segment) => memo.add(prefix + segment) };
}
