import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { listAll, type ObjectStore } from '../store/port.js';
import { parseRecordLine } from './parse.js';
import {
  bodyLines,
  fileLines,
  listSealedSegments,
  readFirstLine,
  sealedIndexOf,
  type NumberedLine,
} from './segments.js';
import { AUDIT_KEY_PREFIX, parseSegmentKey } from './uploader.js';

/**
 * Where verify and export read records from: local segment files or segments in an object store,
 * grouped into one ordered chain per instance. Nothing here holds more than one line per segment
 * in memory (store segments are fetched one at a time, bounded by the writer's segment size).
 */
export interface SegmentSource {
  /** File path or object key, for reports. */
  name: string;
  /** A sealed segment must end with its seal record; the active file need not. */
  sealed: boolean;
  /** The segment number from a sealed file's name. */
  index?: number;
  /** The first seq named by a store key; the segment's first record must carry it. */
  keyFirstSeq?: number;
  firstSeq: number;
  size: number;
  /** A plain function (no `this`): sources are copied field by field. */
  lines: () => AsyncIterable<NumberedLine>;
}

export interface InstanceChain {
  instance: string;
  /** In chain order (by first seq). */
  segments: SegmentSource[];
}

/** A source that could not even be attributed to an instance (its first line is not a record). */
export interface UnreadableSource {
  name: string;
  line: number;
  reason: string;
}

/** A second copy of a segment (same instance, same first seq, same bytes): read once, reported. */
export interface DuplicateSource {
  name: string;
  duplicateOf: string;
}

export interface CollectedChains {
  chains: InstanceChain[];
  unreadable: UnreadableSource[];
  /** Identical copies left out of the chains (a segment given twice, a copy in another directory). */
  duplicates: DuplicateSource[];
  totalBytes: number;
}

interface Candidate {
  name: string;
  sealed: boolean;
  index?: number;
  keyFirstSeq?: number;
  instanceFromKey?: string;
  size: number;
  /** A plain function (no `this`): sources are copied field by field. */
  lines: () => AsyncIterable<NumberedLine>;
  /** Local files are attributed by their first record; store keys name instance and first seq. */
  firstLine?(): Promise<string | undefined>;
}

/**
 * Expands the arguments: an active file brings its sealed siblings (so a deleted middle segment
 * shows up as a gap), a sealed file stands for itself, a directory for every audit file in it.
 */
const UPLOAD_STATE_SUFFIXES = ['.upload-state.json', '.upload-state.json.tmp'];

export function expandAuditFiles(paths: readonly string[]): string[] {
  const files = new Set<string>();
  const addActive = (path: string) => {
    if (isFile(path)) files.add(resolve(path));
    for (const segment of listSealedSegments(path)) files.add(resolve(segment.file));
  };
  for (const path of paths) {
    // The writer's upload progress file sits beside the segments; a shell glob (audit.jsonl*) picks it up.
    if (UPLOAD_STATE_SUFFIXES.some((suffix) => path.endsWith(suffix))) continue;
    const stat = statOrUndefined(path);
    if (stat?.isDirectory()) {
      for (const name of readdirSync(path)) {
        if (name.endsWith('.jsonl')) files.add(resolve(join(path, name)));
      }
    } else if (sealedIndexOf(pathBase(path)) !== undefined) {
      if (stat) files.add(resolve(path));
    } else {
      addActive(path);
    }
  }
  return [...files].sort();
}

export async function collectFileChains(paths: readonly string[]): Promise<CollectedChains> {
  const candidates: Candidate[] = expandAuditFiles(paths).map((file) => {
    const index = sealedIndexOf(pathBase(file));
    return {
      name: file,
      sealed: index !== undefined,
      ...(index !== undefined ? { index } : {}),
      size: statSync(file).size,
      lines: () => fileLines(file),
      firstLine: () => readFirstLine(file),
    };
  });
  return group(candidates);
}

export async function collectStoreChains(store: ObjectStore, prefix = ''): Promise<CollectedChains> {
  const candidates: Candidate[] = [];
  for await (const object of listAll(store, prefix + AUDIT_KEY_PREFIX)) {
    const parsed = parseSegmentKey(object.key, prefix);
    if (!parsed) continue;
    candidates.push({
      name: object.key,
      sealed: true,
      keyFirstSeq: parsed.firstSeq,
      instanceFromKey: parsed.instanceId,
      size: object.size,
      // Fetched when its turn comes, so one segment at a time is in memory.
      lines: async function* () {
        const stored = await store.get(object.key);
        yield* bodyLines(stored?.body ?? new Uint8Array());
      },
    });
  }
  return group(candidates);
}

async function group(candidates: Candidate[]): Promise<CollectedChains> {
  const byInstance = new Map<string, SegmentSource[]>();
  const unreadable: UnreadableSource[] = [];
  let totalBytes = 0;
  for (const candidate of candidates) {
    totalBytes += candidate.size;
    if (candidate.instanceFromKey !== undefined && candidate.keyFirstSeq !== undefined) {
      addSegment(byInstance, candidate.instanceFromKey, candidate, candidate.keyFirstSeq);
      continue;
    }
    const firstLine = await candidate.firstLine?.();
    if (firstLine === undefined) {
      // An empty active file (just rotated) holds no records; an empty sealed segment is damage.
      if (candidate.sealed) unreadable.push({ name: candidate.name, line: 1, reason: 'sealed segment is empty' });
      continue;
    }
    const parsed = parseRecordLine(firstLine);
    if (!parsed.ok) {
      unreadable.push({ name: candidate.name, line: 1, reason: parsed.reason });
      continue;
    }
    addSegment(byInstance, parsed.record.instance, candidate, parsed.record.seq);
  }
  const duplicates: DuplicateSource[] = [];
  const chains: InstanceChain[] = [];
  for (const [instance, segments] of [...byInstance.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // Active file last among equals: it continues after the sealed segments.
    segments.sort((a, b) => a.firstSeq - b.firstSeq || Number(b.sealed) - Number(a.sealed));
    chains.push({ instance, segments: await withoutDuplicates(segments, duplicates) });
  }
  return { chains, unreadable, duplicates, totalBytes };
}

/**
 * Drops byte-identical copies among segments that start at the same seq (each is read once more,
 * streaming, only when first seqs collide). Copies that differ are kept: verify reports them.
 */
async function withoutDuplicates(segments: SegmentSource[], duplicates: DuplicateSource[]): Promise<SegmentSource[]> {
  const kept: SegmentSource[] = [];
  const digests = new Map<SegmentSource, string>();
  const digestOf = async (segment: SegmentSource): Promise<string> => {
    let digest = digests.get(segment);
    if (digest === undefined) {
      const hash = createHash('sha256');
      for await (const { line } of segment.lines()) hash.update(line).update('\n');
      digest = hash.digest('hex');
      digests.set(segment, digest);
    }
    return digest;
  };
  for (const segment of segments) {
    let original: SegmentSource | undefined;
    for (let i = kept.length - 1; i >= 0 && kept[i]!.firstSeq === segment.firstSeq; i--) {
      if (kept[i]!.size === segment.size && (await digestOf(kept[i]!)) === (await digestOf(segment))) {
        original = kept[i];
        break;
      }
    }
    if (original) duplicates.push({ name: segment.name, duplicateOf: original.name });
    else kept.push(segment);
  }
  return kept;
}

/**
 * A store key names its instance and first seq; a segment filed under another instance's key is
 * grouped by its key, so verify reports the mismatch on the record instead of silently regrouping it.
 */
function addSegment(
  byInstance: Map<string, SegmentSource[]>,
  instance: string,
  candidate: Candidate,
  firstSeq: number,
): void {
  const segments = byInstance.get(instance) ?? [];
  segments.push({
    name: candidate.name,
    sealed: candidate.sealed,
    ...(candidate.index !== undefined ? { index: candidate.index } : {}),
    ...(candidate.keyFirstSeq !== undefined ? { keyFirstSeq: candidate.keyFirstSeq } : {}),
    firstSeq,
    size: candidate.size,
    lines: candidate.lines,
  });
  byInstance.set(instance, segments);
}

function pathBase(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function isFile(path: string): boolean {
  return statOrUndefined(path)?.isFile() ?? false;
}
