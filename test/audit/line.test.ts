// The bytes on disk are the bytes hashed: every line the writer leaves (one process, async,
// shared file, format 1 and 2, checkpoints) is the canonical JSON the hash covers, byte for byte,
// followed by its hash and MAC; a segment is sealed by the exact byte count of its lines.
// (The old writer hashed the canonical form and wrote pino's or JSON.stringify's serialisation,
// in another key order, and guessed each line's length as canonical + 75.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditMac, canonicalJson, hashCanonical, recordHash } from '../../src/audit/chain.js';
import { encodeCheckpoint, encodeRecord } from '../../src/audit/line.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import type { AuditWriterOptions } from '../../src/audit/writer.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function dir(): string {
  const temp = tempDir();
  cleanup = temp.cleanup;
  return temp.dir;
}

const MAC_KEY = new Uint8Array(32).fill(9);

/** Lines of every segment of FILE, oldest first, each with its newline. */
function segmentLines(file: string): string[][] {
  return [...listSealedSegments(file).map((s) => s.file), ...(existsSync(file) ? [file] : [])].map((path) =>
    readFileSync(path, 'utf8')
      .split(/(?<=\n)/)
      .filter((line) => line.length > 0),
  );
}

/** The line is `{canonical without hash and mac}` with `,"hash":…` (and `,"mac":…`) spliced in before its last brace. */
function expectLineIsHashedBytes(line: string, macKey?: Uint8Array): void {
  expect(line.endsWith('}\n')).toBe(true);
  const parsed = JSON.parse(line) as Record<string, unknown>;
  const { hash, mac, ...unhashed } = parsed;
  const canonical = canonicalJson(unhashed);
  const trailer = `,"hash":"${String(hash)}"${mac === undefined ? '' : `,"mac":"${String(mac)}"`}}\n`;
  expect(line).toBe(`${canonical.slice(0, -1)}${trailer}`);
  expect(hashCanonical(canonical)).toBe(hash);
  if (macKey) expect(mac).toBe(auditMac(macKey, 'record', String(hash)));
  else expect(mac).toBeUndefined();
}

// Paths with characters whose escaping differs between serialisers, and multibyte UTF-8.
const PATHS = [
  '/memories/plain.md',
  '/memories/ünïcødé/日本語.md',
  '/memories/quote"back\\slash.md',
  '/memories/emoji-😀.md',
  '/memories/tab\there.md',
];

async function writeSome(options: AuditWriterOptions, count: number): Promise<void> {
  const writer = await AuditWriter.open(options);
  for (let i = 0; i < count; i++) {
    writer.append({
      type: 'command',
      command: 'view',
      path: PATHS[i % PATHS.length]!,
      outcome: 'ok',
      uid: 'u_1',
      counts: { objects: i },
    });
  }
  await writer.close();
}

describe('the line written is the canonical text that was hashed', () => {
  const modes: Array<[string, (file: string) => AuditWriterOptions]> = [
    ['sync, format 1', (file) => ({ file })],
    ['sync, format 2 (MAC)', (file) => ({ file, macKey: MAC_KEY })],
    ['async, format 2', (file) => ({ file, sync: false, macKey: MAC_KEY })],
    ['shared file, format 2', (file) => ({ file, shared: true, macKey: MAC_KEY })],
    ['sync with fsync, format 1', (file) => ({ file, fsync: true })],
  ];
  it.each(modes)('%s', async (_name, options) => {
    const file = join(dir(), 'audit.jsonl');
    const opts = options(file);
    await writeSome(opts, 12);
    const lines = segmentLines(file).flat();
    expect(lines.length).toBeGreaterThanOrEqual(13);
    for (const line of lines) expectLineIsHashedBytes(line, opts.macKey);
    const report = await verifyChains(await collectFileChains([file]), opts.macKey ? { macKey: opts.macKey } : {});
    expect(report.failures).toEqual([]);
  });

  it('append returns the record exactly as the line holds it', async () => {
    const file = join(dir(), 'audit.jsonl');
    const writer = await AuditWriter.open({ file, macKey: MAC_KEY });
    const returned = writer.append({ type: 'command', command: 'create', path: PATHS[1]!, outcome: 'ok', uid: 'u_2' });
    await writer.close();
    const line = segmentLines(file).flat()[1]!;
    expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(returned)));
    expect(recordHash(returned as unknown as Record<string, unknown>)).toBe(returned.hash);
  });
});

describe('segments are sealed by the exact bytes of their lines', () => {
  for (const [name, extra] of [
    ['one process', {}],
    ['one process, format 2', { macKey: MAC_KEY }],
    ['shared file, format 2', { shared: true, macKey: MAC_KEY }],
  ] as Array<[string, Partial<AuditWriterOptions>]>) {
    it(`${name}: the record that reaches the bound is followed by the seal, and no earlier one`, async () => {
      const file = join(dir(), 'audit.jsonl');
      const maxSegmentBytes = 1777;
      await writeSome({ file, maxSegmentBytes, ...extra }, 60);
      const segments = segmentLines(file);
      const sealed = segments.slice(0, listSealedSegments(file).length);
      expect(sealed.length).toBeGreaterThanOrEqual(3);
      for (const lines of sealed) {
        expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'seal' });
        const before = lines.slice(0, -1).map((line) => Buffer.byteLength(line));
        const total = before.reduce((a, b) => a + b, 0);
        // Full once the last record went in, not full one record earlier.
        expect(total).toBeGreaterThanOrEqual(maxSegmentBytes);
        expect(total - before.at(-1)!).toBeLessThan(maxSegmentBytes);
      }
    });
  }
});

describe('encodeRecord and encodeCheckpoint', () => {
  it('give the line, its byte length and the record; the parsed line hashes to the record hash', () => {
    const unhashed = {
      v: 2 as const,
      seq: 7,
      time: '2026-01-01T00:00:00.000Z',
      type: 'command' as const,
      instance: 'node-a',
      path: PATHS[3]!,
      prevHash: '0'.repeat(64),
    };
    const { record, line, bytes } = encodeRecord(unhashed, MAC_KEY);
    expect(bytes).toBe(Buffer.byteLength(line));
    expect(bytes).toBeGreaterThan(line.length); // the emoji is 4 bytes, 2 UTF-16 units
    expect(JSON.parse(line)).toEqual(record);
    expect(recordHash(JSON.parse(line) as Record<string, unknown>)).toBe(record.hash);
    expectLineIsHashedBytes(line, MAC_KEY);
    const plain = encodeRecord({ ...unhashed, v: 1 }, undefined);
    expect(plain.record.mac).toBeUndefined();
    expectLineIsHashedBytes(plain.line);
  });

  it('a checkpoint line carries the head and a MAC over its canonical JSON', () => {
    const head = { instance: 'node-a', seq: 3, hash: 'a'.repeat(64), time: '2026-01-01T00:00:00.000Z' };
    const line = encodeCheckpoint(2, head, MAC_KEY);
    expect(line.endsWith('}\n')).toBe(true);
    expect(JSON.parse(line)).toEqual({
      v: 2,
      type: 'checkpoint',
      ...head,
      mac: auditMac(MAC_KEY, 'checkpoint', canonicalJson(head)),
    });
    expect(JSON.parse(encodeCheckpoint(1, head, undefined))).toEqual({ v: 1, type: 'checkpoint', ...head });
  });
});
