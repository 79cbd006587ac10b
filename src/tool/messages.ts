/**
 * Every string the model reads. Texts marked "spec" are the memory tool's reference strings
 * (memory_20250818) and must stay exact; the others are memvault's own, written to tell the model
 * what went wrong and what to do instead.
 */
import type { PiiType } from '../pii/types.js';

const MAX_ECHO = 500;

/** A user-supplied string echoed back, cut so that a megabyte of old_str does not come back whole. */
export function echo(text: string): string {
  if (text.length <= MAX_ECHO) return text;
  const cut = Array.from(text.slice(0, MAX_ECHO + 1))
    .slice(0, MAX_ECHO)
    .join('');
  return `${cut}… (${text.length - cut.length} more characters)`;
}

export const messages = {
  // validation (memvault)
  unreadableInput: 'Error: The tool input could not be read as a memory command object.',
  nulInText: (command: string, field: string) =>
    `Error: \`${field}\` of ${command} contains a NUL character (U+0000). Memory files hold text, and a file with a NUL in it could no longer be viewed or edited. Nothing was written; remove the NUL characters and try again.`,
  // preconditions of a host's conditional write (memvault; vault.run's options, PUT/DELETE /v1/files)
  versionChanged: (path: string) =>
    `Error: The file ${path} is not the version this change was based on (it changed, or is gone). Nothing was changed; read it again and retry.`,
  versionExists: (path: string) =>
    `Error: The file ${path} already exists, and this write was to create it only. Nothing was changed.`,
  memoryPaused: () =>
    'Error: The person this memory is about has paused it: writes to memory are refused until they resume it. Reading (view) still works. Nothing was changed; do not retry this write.',
  aborted: () => 'Error: The command was cancelled before it changed anything. Nothing was changed.',
  preconditionUnsupported: (command: string) =>
    `Error: A write condition applies to create and delete (ifNoneMatch to create only), not to ${command}. Nothing was changed.`,
  // view (spec)
  dirHeader: (path: string) =>
    `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:`,
  fileHeader: (path: string) => `Here's the content of ${path} with line numbers:`,
  viewMissing: (path: string) => `The path ${path} does not exist. Please provide a valid path.`,
  tooManyLines: (path: string) => `File ${path} exceeds maximum line limit of 999,999 lines.`,
  // view (memvault)
  viewTruncated: (shownFrom: number, shownTo: number, total: number, limit: number) =>
    `[Showing lines ${shownFrom}-${shownTo} of ${total}: output is capped at ${limit.toLocaleString('en-US')} characters. ` +
    `To read on, call view with view_range [${shownTo + 1}, -1] (or a smaller range).]`,
  lineTruncated: (line: number, limit: number) =>
    `[Line ${line} is longer than ${limit.toLocaleString('en-US')} characters and was cut; the rest of that line cannot be shown by view.]`,
  listingTruncated: (hidden: number, limit: number) =>
    `[${hidden} more entries not shown: the listing is capped at ${limit.toLocaleString('en-US')} characters. View a subdirectory to see them.]`,
  invalidViewRange: (range: string, lines: number) =>
    lines === 0
      ? `Error: Invalid \`view_range\` parameter: ${range}. The file is empty, so no line range can be shown; view it without view_range.`
      : `Error: Invalid \`view_range\` parameter: ${range}. It should be [start, end] with 1 <= start <= end <= ${lines}, or end = -1 for the end of the file: the file has lines [1, ${lines}].`,
  viewRangeOnDirectory: (path: string) => `Error: view_range cannot be used with a directory: ${path} is a directory.`,
  binaryFile: (path: string) =>
    `Error: ${path} holds binary data that is not valid UTF-8 text and not a supported image (.png, .jpg, .jpeg, .gif, .webp), so it cannot be shown.`,
  imageMismatch: (path: string) =>
    `Error: ${path} has an image file extension but its content is not a valid image of that type.`,
  imageTooLarge: (path: string, limit: number) =>
    `Error: The image ${path} is larger than ${Math.floor(limit / (1024 * 1024))} MB and cannot be shown.`,
  imageCaption: (path: string) => `Here's the image at ${path}:`,

  // create
  created: (path: string) => `File created successfully at: ${path}`, // spec
  alreadyExists: (path: string) => `Error: File ${path} already exists`, // spec (createMode 'fail')
  createOnDirectory: (path: string) => `Error: ${path} is a directory. create needs the path of a file.`,
  ancestorIsFile: (path: string, ancestor: string) =>
    `Error: Cannot use ${path}: ${ancestor} is a file, not a directory.`,
  rootIsDirectory: (command: string) =>
    `Error: /memories is the memory directory itself; ${command} needs the path of a file below it.`,

  // str_replace (spec)
  edited: (snippet: string) =>
    `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet}`,
  editMissing: (path: string) => `Error: The path ${path} does not exist. Please provide a valid path.`,
  noMatch: (oldStr: string, path: string) =>
    `No replacement was performed, old_str \`${echo(oldStr)}\` did not appear verbatim in ${path}.`,
  // The spec lists every line; memvault lists the first ones and counts the rest ("and N more"),
  // so that a common old_str in a 20,000-line file is a short answer, not 129 KB of numbers.
  manyMatches: (oldStr: string, lines: number[], moreLines = 0) =>
    `No replacement was performed. Multiple occurrences of old_str \`${echo(oldStr)}\` in lines: ${lines.join(', ')}${moreLines > 0 ? ` and ${moreLines.toLocaleString('en-US')} more` : ''}. Please ensure it is unique`,
  emptyOldStr: () => 'Error: old_str must not be empty: give the exact text to replace.',
  // str_replace (memvault): the snippet of a long new_str is capped as view is
  snippetTruncated: (nextLine: number, lastLine: number, limit: number) =>
    `[The snippet is capped at ${limit.toLocaleString('en-US')} characters. To see the rest of the edit, call view with view_range [${nextLine}, ${lastLine}].]`,

  // insert (spec)
  inserted: (path: string) => `The file ${path} has been edited.`,
  insertMissing: (path: string) => `Error: The path ${path} does not exist`,
  invalidInsertLine: (line: string, lines: number) =>
    `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lines}]`,

  // delete (spec)
  deleted: (path: string) => `Successfully deleted ${path}`,
  deleteMissing: (path: string) => `Error: The path ${path} does not exist`,
  deletePartial: (path: string, failed: number, total: number) =>
    `Error: ${failed} of ${total} files in ${path} could not be deleted; the rest were. Run delete again to finish.`,
  deleteRoot: () => 'Error: Cannot delete the /memories directory itself',

  // rename (spec)
  renamed: (from: string, to: string) => `Successfully renamed ${from} to ${to}`,
  renameMissing: (path: string) => `Error: The path ${path} does not exist`,
  destinationExists: (path: string) => `Error: The destination ${path} already exists`,
  renameRoot: () => 'Error: Cannot rename the /memories directory itself',
  renameIntoItself: (from: string, to: string) => `Error: Cannot move ${from} into itself (${to} is inside it).`,
  // directory rename and delete against each other (memvault)
  treeBusy: (path: string) =>
    `Error: Cannot change ${path} now: another rename or delete of it is in progress. Try again.`,
  treeBusyRename: (path: string, from: string, to: string) =>
    `Error: Cannot change ${path} now: a rename of ${from} to ${to} is in progress or stopped part-way. Run that rename again to finish it, then try again.`,
  treeBusyDelete: (path: string, from: string) =>
    `Error: Cannot change ${path} now: a delete of ${from} is in progress or stopped part-way. Run that delete again to finish it, then try again.`,

  // shared (memvault)
  notAFile: (path: string) => `Error: ${path} is a directory, not a file.`,
  conflict: (path: string) =>
    `Error: ${path} was changed by other writers at the same time too often; this edit was not applied. View the file and try again.`,
  fileTooLarge: (path: string, bytes: number, limit: number) =>
    `Error: The edit would make ${path} ${bytes.toLocaleString('en-US')} bytes, over the limit of ${limit.toLocaleString('en-US')} bytes per file. Nothing was written; keep the file smaller (split it, or remove old content).`,
  // Refused from the input alone, before any work (the path is not even checked yet, so it is not named).
  inputTooLarge: (command: string, field: string, bytes: number, limit: number) =>
    `Error: \`${field}\` is ${bytes.toLocaleString('en-US')} bytes, over the limit of ${limit.toLocaleString('en-US')} bytes per file, so this ${command} cannot be stored. Nothing was written; keep each file under ${limit.toLocaleString('en-US')} bytes (split the content across several files).`,
  oldStrTooLarge: (bytes: number, limit: number) =>
    `Error: \`old_str\` is ${bytes.toLocaleString('en-US')} bytes, longer than any file can be (the limit is ${limit.toLocaleString('en-US')} bytes per file), so it cannot occur in the file. Nothing was changed; give the exact, shorter text to replace.`,
  tooManyLinesWrite: (path: string) =>
    `Error: The edit would make ${path} longer than 999,999 lines. Nothing was written.`,

  // PII redactor (memvault): the kind of data is named, never the data itself.
  piiRejected: (types: readonly PiiType[]) =>
    `Error: Nothing was saved: the text contains ${describePiiTypes(types)}, which may not be stored in memory. ` +
    'Remove it (or replace it with a short description) and try again.',
  piiPathRejected: (types: readonly PiiType[]) =>
    `Error: Nothing was saved: the path contains ${describePiiTypes(types)}, which may not be stored in memory, not even in a file or directory name. ` +
    'Choose a name without it (e.g. a short description) and try again.',
  piiPathTooLong: () =>
    'Error: Nothing was saved: the path contains personal data or a secret, and with it replaced by a placeholder the name would be too long. Choose a shorter name without it and try again.',
} as const;

/** How the PII redactor's errors name a kind of data. */
export const PII_DESCRIPTIONS: Readonly<Record<PiiType, string>> = {
  EMAIL: 'an e-mail address',
  PHONE: 'a phone number',
  CREDIT_CARD: 'a payment card number',
  IBAN: 'a bank account number (IBAN)',
  US_SSN: 'a US social security number',
  IP_ADDRESS: 'an IP address',
  SECRET: 'a secret (password, API key, token or private key)',
};

/** "an e-mail address and a phone number" */
export function describePiiTypes(types: readonly PiiType[]): string {
  const names = types.map((t) => PII_DESCRIPTIONS[t]);
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] ?? ''}`;
}
