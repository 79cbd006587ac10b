import type { CreateCommand, InsertCommand, StrReplaceCommand } from '../types.js';
import { messages } from '../messages.js';
import {
  decodeText,
  encodeText,
  eolOf,
  forEachOccurrence,
  LineCounter,
  LINE_NUMBER_WIDTH,
  lineCount,
  MAX_LINES,
  numbered,
  parseText,
  renderText,
  textToLines,
} from '../text.js';
import { PreconditionFailedError } from '../../vault/user-files.js';
import { MEMORY_ROOT } from '../../vault/paths.js';
import { NameConflictError } from '../../vault/names.js';
import type { FileVersion } from '../../vault/user-files.js';
import { fail, retryOnConflict, type CommandEnv, type StoredEdit } from './env.js';

/** Bytes of the new content, refused (nothing written) when over the per-file cap or the line limit. */
function checkedBytes(path: string, text: string, env: CommandEnv): Uint8Array {
  const data = encodeText(text);
  if (data.byteLength > env.limits.maxFileBytes)
    fail('TOO_LARGE', messages.fileTooLarge(path, data.byteLength, env.limits.maxFileBytes));
  if (text.length > MAX_LINES && lineCount(text) > MAX_LINES) fail('TOO_LARGE', messages.tooManyLinesWrite(path));
  return data;
}

export async function create(command: CreateCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (path === MEMORY_ROOT) fail('NOT_A_FILE', messages.rootIsDirectory('create'));
  const data = checkedBytes(path, command.file_text, env);
  // Creating a file may create directories, so it takes the user's tree lock like rename/delete.
  // No look before the write: a created name is checked after its PUT lands (src/vault/names.ts),
  // which alone keeps the invariant against rivals, so a directory at the path or a file above it
  // is found there too, and the write taken back before the error. One LIST and one HEAD per
  // ancestor fewer per create; a refused create costs the take-back instead.
  return env.locks.withTree(env.files.uid, async () => {
    try {
      await env.files.write(path, data, env.createMode === 'fail' ? { ifNoneMatch: true } : {});
    } catch (error) {
      if (env.createMode === 'fail' && error instanceof PreconditionFailedError)
        fail('ALREADY_EXISTS', messages.alreadyExists(path));
      if (error instanceof NameConflictError) {
        const { conflict } = error;
        if (conflict.kind === 'ancestor-is-file')
          fail('NOT_A_DIRECTORY', messages.ancestorIsFile(path, conflict.ancestor));
        fail('NOT_A_FILE', messages.createOnDirectory(path));
      }
      throw error;
    }
    return messages.created(path);
  });
}

/**
 * A conditional write whose answer was lost (a timeout or reset after the server applied it) is
 * retried by the SDK and then fails its condition against our own write. Before re-applying an
 * edit after a conflict, look whether the file now holds exactly what we wrote: then the edit has
 * landed, and applying it again would insert a line twice.
 */
class LandedWrite {
  private attempted: { text: string; result: string } | undefined;

  check(current: string): string | undefined {
    return this.attempted !== undefined && this.attempted.text === current ? this.attempted.result : undefined;
  }

  async write(text: string, result: string, put: () => Promise<unknown>): Promise<string> {
    this.attempted = { text, result };
    await put();
    return result;
  }
}

/** Read a text file to edit, or the spec's missing-file error (a directory counts as missing). */
async function readTextForEdit(
  path: string,
  env: CommandEnv,
  missing: (p: string) => string,
): Promise<{ file: FileVersion; text: string }> {
  if (path === MEMORY_ROOT) fail('NOT_A_FILE', missing(path));
  // The edit's own version write checks freshness (docs/versions.md): no LIST here.
  const file = await env.files.read(path, { freshness: 'write' });
  if (!file) fail('NOT_FOUND', missing(path));
  const text = decodeText(file.data);
  if (text === null) fail('UNSUPPORTED_CONTENT', messages.binaryFile(path));
  return { file, text };
}

/**
 * The one read-modify-write of a text file (str_replace and insert): under the file's lock, read it,
 * let `edit` compute the new text and the answer from the current text, write it on condition that
 * the file is still the version read, and on a lost condition start again from a fresh read (an edit
 * whose write landed although its answer was lost is recognised, not applied twice).
 */
function editTextFile(
  path: string,
  env: CommandEnv,
  missing: (p: string) => string,
  edit: (text: string) => Promise<EditOutcome> | EditOutcome,
): Promise<string> {
  const landed = new LandedWrite();
  let redactedStored = false;
  /** The version of the file that holds this edit: the write's, or the one found landed after a lost answer. */
  let written = '';
  return env.locks.withFile(env.files.uid, path, async () => {
    const result = await retryOnConflict(
      env.limits.maxWriteAttempts,
      () => fail('CONFLICT', messages.conflict(path)),
      async () => {
        const { file, text } = await readTextForEdit(path, env, missing);
        const done = landed.check(text);
        if (done !== undefined) {
          written = file.etag;
          return done;
        }
        const outcome = await edit(text);
        redactedStored = outcome.updated.redactedStored;
        return landed.write(outcome.updated.text, outcome.result, async () => {
          written = (await env.files.write(path, checkedBytes(path, outcome.updated.text, env), { ifMatch: file.etag }))
            .etag;
        });
      },
    );
    // The chain redacted text the file already held: its earlier versions hold that text too, and
    // an undo must not bring it back (docs/pii.md, "Redaction and file history"). Every version
    // older than the one holding this edit goes, whether or not that one could be kept.
    if (redactedStored) await env.files.dropVersionsBefore?.(path, written);
    return result;
  });
}

/** What an edit computed: the text to store (through the chain's write filter) and the answer. */
interface EditOutcome {
  updated: StoredEdit;
  result: string;
}

/** Lines listed in the "multiple occurrences" error; the rest are counted ("and N more"). */
const MAX_LISTED_LINES = 20;

type Matches = { count: 0 } | { count: 1; at: number } | { count: 'several'; lines: number[]; moreLines: number };

/**
 * Where `needle` occurs in `text`, in one linear pass (see forEachOccurrence). Overlapping matches
 * count: "aa" occurs twice in "aaa", and replacing either would be a guess. From the second match
 * on, the pass also notes the lines the matches start on, for the error: the first
 * MAX_LISTED_LINES of them, and how many more.
 */
async function findMatches(text: string, needle: string): Promise<Matches> {
  let count = 0;
  let first = -1;
  const counter = new LineCounter(text);
  const lines: number[] = [];
  let moreLines = 0;
  let lastLine = 0;
  const noteLine = (offset: number) => {
    const line = counter.lineOf(offset);
    if (line === lastLine) return;
    lastLine = line;
    if (lines.length < MAX_LISTED_LINES) lines.push(line);
    else moreLines += 1;
  };
  await forEachOccurrence(text, needle, (offset) => {
    count += 1;
    if (count === 1) {
      first = offset;
      return true;
    }
    if (count === 2) noteLine(first);
    noteLine(offset);
    return true;
  });
  if (count === 0) return { count: 0 };
  if (count === 1) return { count: 1, at: first };
  return { count: 'several', lines, moreLines };
}

/** What the file will hold after an edit: the edit as made, through the chain's write filter if there is one. */
function storedResult(path: string, before: string, after: string, env: CommandEnv): StoredEdit {
  return env.writeFilter === undefined
    ? { text: after, redactedStored: false }
    : env.writeFilter.edited(path, before, after);
}

/**
 * old_str as it would read once stored, for when it does not occur verbatim: the model may quote a
 * value it wrote that was redacted on the way in. Undefined when there is no other form.
 */
function storedOldStr(oldStr: string, env: CommandEnv): string | undefined {
  const stored = env.writeFilter?.storedForm(oldStr);
  return stored === undefined || stored === oldStr ? undefined : stored;
}

/**
 * Lines firstLine-2 .. lastLine+2 of the text, numbered; found by walking to them, not by splitting
 * the file. At most `limit` characters, counted as view counts them (number, tab, text, line
 * break): an edit of a long new_str shows its first lines and says how to view the rest.
 */
function snippet(text: string, firstLine: number, lastLine: number, limit: number): string {
  const from = Math.max(1, firstLine - 2);
  let start = 0;
  for (let n = 1; n < from; n++) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) return '';
    start = nl + 1;
  }
  const out: string[] = [];
  let used = 0;
  for (let n = from; n <= lastLine + 2 && start < text.length; n++) {
    const nl = text.indexOf('\n', start);
    const line = nl === -1 ? text.slice(start) : text.slice(start, nl);
    const shown = line.endsWith('\r') ? line.slice(0, -1) : line;
    const cost = LINE_NUMBER_WIDTH + 1 + shown.length + 1;
    if (used + cost > limit) {
      let next = n;
      if (out.length === 0) {
        // The first line alone is over the limit: its start, as view shows such a line.
        out.push(
          numbered(shown.slice(0, Math.max(0, limit - LINE_NUMBER_WIDTH - 2)), n),
          messages.lineTruncated(n, limit),
        );
        next = nl === -1 || nl + 1 >= text.length ? lastLine + 3 : n + 1;
      }
      if (next <= lastLine + 2) out.push(messages.snippetTruncated(next, Math.max(next, lastLine), limit));
      break;
    }
    used += cost;
    out.push(numbered(shown, n));
    if (nl === -1) break;
    start = nl + 1;
  }
  return out.join('\n');
}

export async function strReplace(command: StrReplaceCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (command.old_str === '') fail('INVALID_INPUT', messages.emptyOldStr());
  return editTextFile(path, env, messages.editMissing, async (text) => {
    let oldStr = command.old_str;
    let newStr = command.new_str;
    let found = await findMatches(text, oldStr);
    // The model sees CRLF files with plain line breaks; match its multi-line old_str against the
    // file's own endings, and write new_str with them whatever old_str was, so the file keeps CRLF.
    const crlf = eolOf(text) === '\r\n';
    if (crlf) newStr = newStr.replace(/\r?\n/g, '\r\n');
    if (found.count === 0 && oldStr.includes('\n') && crlf) {
      oldStr = oldStr.replace(/\r?\n/g, '\r\n');
      found = await findMatches(text, oldStr);
    }
    const stored = found.count === 0 ? storedOldStr(oldStr, env) : undefined;
    if (stored !== undefined) {
      oldStr = stored;
      found = await findMatches(text, oldStr);
    }
    if (found.count === 0) fail('NO_MATCH', messages.noMatch(command.old_str, path));
    if (found.count === 'several')
      fail('AMBIGUOUS_MATCH', messages.manyMatches(command.old_str, found.lines, found.moreLines));
    const at = found.at;
    const updated = storedResult(path, text, text.slice(0, at) + newStr + text.slice(at + oldStr.length), env);
    const lines = new LineCounter(updated.text);
    const firstLine = lines.lineOf(at);
    const lastLine = lines.lineOf(at + Math.max(newStr.length - 1, 0));
    return { updated, result: messages.edited(snippet(updated.text, firstLine, lastLine, env.limits.viewChars)) };
  });
}

export async function insert(command: InsertCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  return editTextFile(path, env, messages.insertMissing, (text) => {
    const parsed = parseText(text);
    const line = command.insert_line;
    if (!Number.isSafeInteger(line) || line < 0 || line > parsed.lines.length) {
      fail('INVALID_RANGE', messages.invalidInsertLine(String(line), parsed.lines.length));
    }
    const atEnd = line === parsed.lines.length;
    const inserted = textToLines(command.insert_text);
    // Not splice(line, 0, ...inserted): spreading a million lines into call arguments overflows the stack.
    parsed.lines = parsed.lines.slice(0, line).concat(inserted, parsed.lines.slice(line));
    if (atEnd && /\n$/.test(command.insert_text)) parsed.finalNewline = true;
    return { updated: storedResult(path, text, renderText(parsed), env), result: messages.inserted(path) };
  });
}
