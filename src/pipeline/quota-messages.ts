import { MemvaultError } from '../errors.js';
import type { QuotaDecision } from './decisions.js';

/** What the model reads when a quota refuses or caps, and the error that carries a refusal. */
export class QuotaExceededError extends MemvaultError {
  readonly decision: QuotaDecision;
  constructor(message: string, decision: QuotaDecision) {
    super('QUOTA_EXCEEDED', message);
    this.name = 'QuotaExceededError';
    this.decision = decision;
  }
}

const n = (value: number) => value.toLocaleString('en-US');

export const quotaMessages = {
  fileBytes: (path: string, newBytes: number, oldBytes: number | null, limit: number) =>
    `Error: Quota exceeded (bytes per file): ${path} would be ${n(newBytes)} bytes, over the limit of ${n(limit)} bytes per file` +
    (oldBytes === null
      ? ''
      : `; it holds ${n(oldBytes)} bytes now, so ${n(Math.max(0, limit - oldBytes))} bytes are left`) +
    `. Nothing was written. Keep each file under ${n(limit)} bytes: split the content across several files, or leave out old content.`,
  userBytes: (command: string, delta: number, used: number, limit: number) =>
    `Error: Quota exceeded (bytes per user): this ${command} needs ${n(delta)} more bytes, but the memory directory holds ${n(used)} of ${n(limit)} bytes ` +
    `(${n(Math.max(0, limit - used))} bytes left). Nothing was written. Free space first: delete or shorten files you no longer need ` +
    `(view /memories shows their sizes), then try again.`,
  userFiles: (path: string, files: number, limit: number) =>
    `Error: Quota exceeded (files per user): creating ${path} would make ${n(files + 1)} files, over the limit of ${n(limit)} files ` +
    `(there are ${n(files)}, ${n(Math.max(0, limit - files))} left). Nothing was written. Delete or merge files you no longer need, ` +
    `or add this to an existing file, then try again.`,
  historyBytes: (command: string, newBytes: number, counted: number, used: number, limit: number) =>
    `Error: Quota exceeded (file history per user): this ${command} would keep a version of ${n(newBytes)} bytes` +
    (counted > newBytes ? ` (counted as ${n(counted)}: every kept version counts at least that)` : '') +
    `, but the newest versions of the ` +
    `user's files already hold ${n(used)} of the ${n(limit)} bytes the history may keep, and none of them may be dropped. Nothing was written. ` +
    `Delete files you no longer need, then try again.`,
  historyBytesForRename: (counted: number, used: number, limit: number) =>
    `Error: Quota exceeded (file history per user): this rename would keep two more versions (counted as ${n(counted)} bytes), but the newest versions of the ` +
    `user's files already hold ${n(used)} of the ${n(limit)} bytes the history may keep, and none of them may be dropped. Nothing was changed. ` +
    `Edit the file where it is instead of moving it; room comes back as old versions pass the history's retention.`,
  historyVersions: (command: string, versions: number, limit: number, adding = 1) =>
    `Error: Quota exceeded (file history per user): this ${command} would keep ${adding === 1 ? 'one more version' : `${n(adding)} more versions`}, but the user's history already keeps ${n(versions)} ` +
    `of the ${n(limit)} versions it may hold, and none of them may be dropped: each is the newest version of a file, or the record that a ` +
    `deleted file ended. Nothing was written. Edit or reuse the files you have instead of creating new ones; room comes back as old versions ` +
    `pass the history's retention.`,
  viewCapped: (cap: number, lastLine: number | null) =>
    lastLine === null
      ? `[Output capped at ${n(cap)} characters. View a subdirectory, or a file with view_range, to see the rest.]`
      : `[Output capped at ${n(cap)} characters (line numbers included), after line ${lastLine}. To read on, call view with view_range [${lastLine + 1}, -1] (or a smaller range).]`,
} as const;

/** Cuts a view's output that is over the hard cap at a line boundary, with a note on how to page. */
export function capViewOutput(content: string, cap: number): string {
  if (content.length <= cap) return content;
  // Leave room for the note; never cut inside a line.
  const room = cap - 200;
  const cut = content.lastIndexOf('\n', room);
  const kept = content.slice(0, cut > 0 ? cut : room);
  const lastLine = /\n\s*(\d+)\t[^\n]*$/.exec(kept);
  return `${kept}\n${quotaMessages.viewCapped(cap, lastLine ? Number(lastLine[1]) : null)}`;
}
