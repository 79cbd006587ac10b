import type { CreateCommand, InsertCommand, StrReplaceCommand } from '../types.js';
import { messages } from '../messages.js';
import { decodeText, encodeText, lineOfOffset, MAX_LINES, numbered, parseText, renderText, textToLines } from '../text.js';
import { PreconditionFailedError } from '../../store/port.js';
import { ancestorsOf, MEMORY_ROOT } from '../../vault/paths.js';
import type { FileVersion } from '../../vault/user-files.js';
import { fail, retryOnConflict, type CommandEnv } from './env.js';

/** Bytes of the new content, refused (nothing written) when over the per-file cap or the line limit. */
function checkedBytes(path: string, text: string, env: CommandEnv): Uint8Array {
  const data = encodeText(text);
  if (data.byteLength > env.limits.maxFileBytes) fail('TOO_LARGE', messages.fileTooLarge(path, data.byteLength, env.limits.maxFileBytes));
  if (parseText(text).lines.length > MAX_LINES) fail('TOO_LARGE', messages.tooManyLinesWrite(path));
  return data;
}

/** A path a file may be written at: not a directory, and no ancestor is a file. */
export async function assertWritablePath(path: string, env: CommandEnv): Promise<void> {
  if (path === MEMORY_ROOT) fail('NOT_A_FILE', messages.rootIsDirectory('create'));
  // One LIST and one HEAD per ancestor, in parallel: the price of S3 having no directories.
  const [isDirectory, ancestorKinds] = await Promise.all([
    env.files.isDirectory(path),
    Promise.all(ancestorsOf(path).map(async (a) => ({ a, file: (await env.files.stat(a)) !== null }))),
  ]);
  if (isDirectory) fail('NOT_A_FILE', messages.createOnDirectory(path));
  const fileAncestor = ancestorKinds.find((x) => x.file);
  if (fileAncestor) fail('NOT_A_DIRECTORY', messages.ancestorIsFile(path, fileAncestor.a));
}

export async function create(command: CreateCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (path === MEMORY_ROOT) fail('NOT_A_FILE', messages.rootIsDirectory('create'));
  const data = checkedBytes(path, command.file_text, env);
  // Creating a file may create directories, so it takes the user's tree lock like rename/delete.
  return env.locks.withTree(env.files.uid, async () => {
    await assertWritablePath(path, env);
    if (env.createMode === 'fail') {
      try {
        await env.files.write(path, data, { ifNoneMatch: true });
      } catch (error) {
        if (error instanceof PreconditionFailedError) fail('ALREADY_EXISTS', messages.alreadyExists(path));
        throw error;
      }
    } else {
      await env.files.write(path, data);
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
async function readTextForEdit(path: string, env: CommandEnv, missing: (p: string) => string): Promise<{ file: FileVersion; text: string }> {
  if (path === MEMORY_ROOT) fail('NOT_A_FILE', missing(path));
  const file = await env.files.read(path);
  if (!file) fail('NOT_FOUND', missing(path));
  const text = decodeText(file.data);
  if (text === null) fail('UNSUPPORTED_CONTENT', messages.binaryFile(path));
  return { file, text };
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  // Overlapping matches count: "aa" occurs twice in "aaa", and replacing either would be a guess.
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/** What the file will hold after an edit: the edit as made, through the chain's write filter if there is one. */
function storedResult(path: string, before: string, after: string, env: CommandEnv): string {
  return env.writeFilter === undefined ? after : env.writeFilter.edited(path, before, after);
}

/**
 * old_str as it would read once stored, for when it does not occur verbatim: the model may quote a
 * value it wrote that was redacted on the way in. Undefined when there is no other form.
 */
function storedOldStr(oldStr: string, env: CommandEnv): string | undefined {
  const stored = env.writeFilter?.storedForm(oldStr);
  return stored === undefined || stored === oldStr ? undefined : stored;
}

function snippet(text: string, firstLine: number, lastLine: number): string {
  const { lines } = parseText(text);
  const from = Math.max(1, firstLine - 2);
  const to = Math.min(lines.length, lastLine + 2);
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    const line = lines[n - 1]!;
    out.push(numbered(line.endsWith('\r') ? line.slice(0, -1) : line, n));
  }
  return out.join('\n');
}

export async function strReplace(command: StrReplaceCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (command.old_str === '') fail('INVALID_INPUT', messages.emptyOldStr());
  const landed = new LandedWrite();
  return env.locks.withFile(env.files.uid, path, () =>
    retryOnConflict(env.limits.maxWriteAttempts, () => fail('CONFLICT', messages.conflict(path)), async () => {
      const { file, text } = await readTextForEdit(path, env, messages.editMissing);
      const done = landed.check(text);
      if (done !== undefined) return done;
      let oldStr = command.old_str;
      let newStr = command.new_str;
      let found = occurrences(text, oldStr);
      // The model sees CRLF files with plain line breaks; match its multi-line old_str against the
      // file's own endings, and write new_str with them, so the file keeps CRLF.
      if (found.length === 0 && parseText(text).eol === '\r\n' && oldStr.includes('\n')) {
        oldStr = oldStr.replace(/\r?\n/g, '\r\n');
        newStr = newStr.replace(/\r?\n/g, '\r\n');
        found = occurrences(text, oldStr);
      }
      const stored = found.length === 0 ? storedOldStr(oldStr, env) : undefined;
      if (stored !== undefined) {
        oldStr = stored;
        found = occurrences(text, oldStr);
      }
      if (found.length === 0) fail('NO_MATCH', messages.noMatch(command.old_str, path));
      if (found.length > 1) {
        const lines = [...new Set(found.map((i) => lineOfOffset(text, i)))];
        fail('AMBIGUOUS_MATCH', messages.manyMatches(command.old_str, lines));
      }
      const at = found[0]!;
      const updated = storedResult(path, text, text.slice(0, at) + newStr + text.slice(at + oldStr.length), env);
      const firstLine = lineOfOffset(updated, at);
      const lastLine = lineOfOffset(updated, at + Math.max(newStr.length - 1, 0));
      const result = messages.edited(snippet(updated, firstLine, lastLine));
      return landed.write(updated, result, () => env.files.write(path, checkedBytes(path, updated, env), { ifMatch: file.etag }));
    }),
  );
}

export async function insert(command: InsertCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  const landed = new LandedWrite();
  return env.locks.withFile(env.files.uid, path, () =>
    retryOnConflict(env.limits.maxWriteAttempts, () => fail('CONFLICT', messages.conflict(path)), async () => {
      const { file, text } = await readTextForEdit(path, env, messages.insertMissing);
      const done = landed.check(text);
      if (done !== undefined) return done;
      const parsed = parseText(text);
      const line = command.insert_line;
      if (!Number.isSafeInteger(line) || line < 0 || line > parsed.lines.length) {
        fail('INVALID_RANGE', messages.invalidInsertLine(String(line), parsed.lines.length));
      }
      const atEnd = line === parsed.lines.length;
      const inserted = textToLines(command.insert_text);
      parsed.lines.splice(line, 0, ...inserted);
      if (atEnd && /\n$/.test(command.insert_text)) parsed.finalNewline = true;
      const updated = storedResult(path, text, renderText(parsed), env);
      return landed.write(updated, messages.inserted(path), () => env.files.write(path, checkedBytes(path, updated, env), { ifMatch: file.etag }));
    }),
  );
}
