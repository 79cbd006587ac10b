import type { ViewCommand, ResultContent, ImageBlock } from '../types.js';
import { messages } from '../messages.js';
import { decodeText, formatSize, LINE_NUMBER_WIDTH, MAX_LINES, numbered, parseText } from '../text.js';
import { MEMORY_ROOT, pathSegments } from '../../vault/paths.js';
import type { ListedFile } from '../../vault/user-files.js';
import { fail, type CommandEnv } from './env.js';

type ImageType = ImageBlock['source']['media_type'];
const IMAGE_TYPES: Record<string, ImageType> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

function imageTypeOf(path: string): ImageType | undefined {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') ? IMAGE_TYPES[path.slice(dot + 1).toLowerCase()] : undefined;
}

function hasImageSignature(data: Uint8Array, type: ImageType): boolean {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => data[at + i] === b);
  switch (type) {
    case 'image/png':
      return starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'image/jpeg':
      return starts([0xff, 0xd8, 0xff]);
    case 'image/gif':
      return starts([0x47, 0x49, 0x46, 0x38]) && (data[4] === 0x37 || data[4] === 0x39) && data[5] === 0x61;
    case 'image/webp':
      return starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8);
  }
}

export async function view(command: ViewCommand, env: CommandEnv): Promise<ResultContent> {
  const { path } = command;
  // The root is always a directory; anything else is tried as a file first (1 GET), then as a
  // directory (1 LIST per 1,000 keys), so viewing a file costs one request.
  if (path !== MEMORY_ROOT) {
    const file = await env.files.read(path);
    if (file) return viewFile(command, file.data, env);
  }
  const entries: ListedFile[] = [];
  for await (const entry of env.files.listFiles(path)) entries.push(entry);
  if (entries.length === 0 && path !== MEMORY_ROOT) fail('NOT_FOUND', messages.viewMissing(path));
  if (command.view_range) fail('INVALID_RANGE', messages.viewRangeOnDirectory(path));
  return listDirectory(path, entries, env.limits.viewChars);
}

function viewFile(command: ViewCommand, data: Uint8Array, env: CommandEnv): ResultContent {
  const { path } = command;
  const imageType = imageTypeOf(path);
  if (imageType) {
    if (!hasImageSignature(data, imageType)) fail('UNSUPPORTED_CONTENT', messages.imageMismatch(path));
    if (data.byteLength > env.limits.maxImageBytes)
      fail('TOO_LARGE', messages.imageTooLarge(path, env.limits.maxImageBytes));
    return [
      { type: 'text', text: messages.imageCaption(path) },
      { type: 'image', source: { type: 'base64', media_type: imageType, data: Buffer.from(data).toString('base64') } },
    ];
  }
  const text = decodeText(data);
  if (text === null) fail('UNSUPPORTED_CONTENT', messages.binaryFile(path));
  const { lines } = parseText(text);
  if (lines.length > MAX_LINES) fail('TOO_LARGE', messages.tooManyLines(path));

  let start = 1;
  let end = lines.length;
  if (command.view_range) {
    const [from, to] = command.view_range;
    const valid = from >= 1 && from <= lines.length && (to === -1 || (to >= from && to <= lines.length));
    if (!valid) fail('INVALID_RANGE', messages.invalidViewRange(`[${from}, ${to}]`, lines.length));
    start = from;
    end = to === -1 ? lines.length : to;
  }

  const limit = env.limits.viewChars;
  const out: string[] = [messages.fileHeader(path)];
  let used = 0;
  let n = start;
  for (; n <= end; n++) {
    const line = lines[n - 1]!;
    // Display lines without their CR: the model reads clean text; edits keep the file's endings.
    const shown = line.endsWith('\r') ? line.slice(0, -1) : line;
    // The cap counts what the model reads: line number, tab, text and line break. Counting the
    // text alone would let 999,999 empty lines through as megabytes of line numbers.
    const cost = LINE_NUMBER_WIDTH + 1 + shown.length + 1;
    if (used + cost > limit) {
      if (n === start) {
        out.push(
          numbered(shown.slice(0, Math.max(0, limit - LINE_NUMBER_WIDTH - 2)), n),
          messages.lineTruncated(n, limit),
        );
        n += 1;
      }
      break;
    }
    used += cost;
    out.push(numbered(shown, n));
  }
  if (n <= end) out.push(messages.viewTruncated(start, n - 1, lines.length, limit));
  return out.join('\n');
}

interface TreeEntry {
  path: string;
  /** The path's segments below `dir`, split once: the sort compares them (n log n times). */
  segments: string[];
  size: number;
  isDirectory: boolean;
}

function isHiddenName(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * The listing rule: entries up to 2 levels below `dir`, depth-first, names sorted; names starting
 * with '.' and node_modules are left out with everything below them. A file shows its plaintext
 * size; a directory (and `dir` itself) the total plaintext size of all files below it, at any
 * depth, hidden ones included, since that is what it holds in storage.
 */
export function listDirectory(dir: string, files: ListedFile[], limit: number): string {
  const depthOfDir = pathSegments(dir).length;
  const entries = new Map<string, TreeEntry>();
  let total = 0;
  for (const file of files) {
    total += file.size;
    const rel = pathSegments(file.path).slice(depthOfDir);
    const visibleDepth = Math.min(rel.length, 2);
    for (let d = 1; d <= visibleDepth; d++) {
      if (isHiddenName(rel[d - 1]!)) break;
      const segments = rel.slice(0, d);
      const entryPath = `${dir === MEMORY_ROOT ? MEMORY_ROOT : dir}/${segments.join('/')}`;
      let entry = entries.get(entryPath);
      if (!entry) {
        entry = { path: entryPath, segments, size: 0, isDirectory: d < rel.length };
        entries.set(entryPath, entry);
      }
      entry.size += file.size;
    }
  }
  const sorted = [...entries.values()].sort((a, b) => {
    const sa = a.segments;
    const sb = b.segments;
    for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
      if (sa[i] !== sb[i]) return sa[i]! < sb[i]! ? -1 : 1;
    }
    return sa.length - sb.length;
  });
  const lines = [messages.dirHeader(dir), `${formatSize(total)}\t${dir}`];
  let used = lines[1]!.length;
  let shown = 0;
  for (const entry of sorted) {
    const line = `${formatSize(entry.size)}\t${entry.path}${entry.isDirectory ? '/' : ''}`;
    if (used + line.length + 1 > limit) break;
    used += line.length + 1;
    lines.push(line);
    shown += 1;
  }
  if (shown < sorted.length) lines.push(messages.listingTruncated(sorted.length - shown, limit));
  return lines.join('\n');
}
