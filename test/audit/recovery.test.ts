// Crash recovery of the active file, at open and before every shared-mode append: a torn last line is
// kept only if it is the very record the writer would accept next (hash, MAC, seq, prevHash), else
// cut and noted (recovered.discardedBytes); a seal left unrenamed has its rotation finished first.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readHead } from '../../src/audit/chain-head.js';
import { recordHash } from '../../src/audit/chain.js';
import { encodeRecord } from '../../src/audit/line.js';
import { listSealedSegments, sealedSegmentPath } from '../../src/audit/segments.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { readRecords, tempDir } from './helpers.js';

const KEY = new Uint8Array(32).fill(3);

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function auditFile(): string {
  const temp = tempDir();
  cleanup = temp.cleanup;
  return join(temp.dir, 'audit.jsonl');
}

async function verifyFile(file: string) {
  return verifyChains(await collectFileChains([file]), { macKey: KEY });
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** A file holding start + one command record, closed. */
async function writtenFile(): Promise<string> {
  const file = auditFile();
  const writer = await AuditWriter.open({ file, macKey: KEY, instanceId: 'n1' });
  writer.append({ type: 'command', command: 'view', outcome: 'ok' });
  await writer.close();
  return file;
}

/** The record after the file's head, as a writer holding `key` would encode it. */
function nextRecord(file: string, key: Uint8Array, fields: Record<string, unknown> = {}) {
  const { last } = readHead(file);
  return encodeRecord(
    { v: 2, seq: last!.seq + 1, time: last!.time, type: 'erase', instance: 'n1', prevHash: last!.hash, ...fields },
    key,
  );
}

describe('recovery at open: a torn last line', () => {
  it('keeps a whole next record whose newline is missing', async () => {
    const file = await writtenFile();
    const genuine = nextRecord(file, KEY);
    appendFileSync(file, genuine.line.slice(0, -1));
    const again = await AuditWriter.open({ file, macKey: KEY, instanceId: 'n1' });
    await again.close();
    const records = readRecords(file);
    expect(records.find((r) => r.seq === genuine.record.seq)).toMatchObject({
      type: 'erase',
      hash: genuine.record.hash,
    });
    expect(records.at(-1)).toMatchObject({ type: 'start', seq: genuine.record.seq + 1 });
    expect(records.at(-1)?.recovered).toBeUndefined();
    expect((await verifyFile(file)).failures).toEqual([]);
  });

  it('cuts a record whose hash is right but whose MAC is not (forged without the key)', async () => {
    const file = await writtenFile();
    const forged = nextRecord(file, new Uint8Array(32).fill(7));
    const torn = forged.line.slice(0, -1);
    appendFileSync(file, torn);
    const again = await AuditWriter.open({ file, macKey: KEY, instanceId: 'n1' });
    again.append({ type: 'command', command: 'create', outcome: 'ok' });
    await again.close();
    expect(readRecords(file).some((r) => r.hash === forged.record.hash)).toBe(false);
    expect(readRecords(file).find((r) => r.type === 'start' && r.seq === forged.record.seq)).toMatchObject({
      recovered: { discardedBytes: Buffer.byteLength(torn) },
    });
    expect((await verifyFile(file)).failures).toEqual([]);
  });

  it('cuts a genuine record replayed out of place (MAC right, seq and prevHash wrong)', async () => {
    const file = await writtenFile();
    const replayed = lines(file)[1]!;
    appendFileSync(file, replayed);
    const again = await AuditWriter.open({ file, macKey: KEY, instanceId: 'n1' });
    await again.close();
    expect(readRecords(file).at(-1)).toMatchObject({
      type: 'start',
      recovered: { discardedBytes: Buffer.byteLength(replayed) },
    });
    expect((await verifyFile(file)).failures).toEqual([]);
  });

  it('cuts a record that links but carries a hash of other content', async () => {
    const file = await writtenFile();
    const record = { ...nextRecord(file, KEY).record, counts: { objects: 1000 } } as Record<string, unknown>;
    expect(recordHash(record)).not.toBe(record['hash']);
    appendFileSync(file, JSON.stringify(record));
    const again = await AuditWriter.open({ file, macKey: KEY, instanceId: 'n1' });
    await again.close();
    expect(readRecords(file).at(-1)?.recovered?.discardedBytes).toBeGreaterThan(0);
    expect((await verifyFile(file)).failures).toEqual([]);
  });
});

describe('shared mode: what a process that died mid-append left', () => {
  it('a live writer cuts another process’s torn line and notes it in its next record', async () => {
    const file = auditFile();
    const a = await AuditWriter.open({ file, shared: true, macKey: KEY, instanceId: 'i1' });
    a.append({ type: 'command', command: 'view', outcome: 'ok' });
    // Another process dies in the middle of its write(2): half a record, no newline.
    const torn = '{"command":"view","instance":"i1","outcome":"ok","prevH';
    appendFileSync(file, torn);
    const next = a.append({ type: 'command', command: 'create', outcome: 'ok' });
    a.append({ type: 'command', command: 'view', outcome: 'ok' });
    await a.close();
    expect(next.recovered).toEqual({ discardedBytes: Buffer.byteLength(torn) });
    expect(lines(file).filter((l) => l.includes('prevH{'))).toEqual([]);
    expect(readRecords(file).at(-1)?.recovered).toBeUndefined();
    expect((await verifyFile(file)).failures).toEqual([]);
  });

  it('a live writer completes another process’s whole record that lacks only its newline', async () => {
    const file = auditFile();
    const a = await AuditWriter.open({ file, shared: true, macKey: KEY, instanceId: 'i1' });
    const genuine = nextRecord(file, KEY, { instance: 'i1' });
    appendFileSync(file, genuine.line.slice(0, -1));
    const next = a.append({ type: 'command', command: 'create', outcome: 'ok' });
    await a.close();
    expect(next).toMatchObject({ seq: genuine.record.seq + 1, prevHash: genuine.record.hash });
    expect(next.recovered).toBeUndefined();
    expect((await verifyFile(file)).failures).toEqual([]);
  });

  it('a live writer finishes the rotation of a seal that was never renamed before appending', async () => {
    const file = auditFile();
    const a = await AuditWriter.open({ file, shared: true, macKey: KEY, instanceId: 'i1' });
    a.append({ type: 'command', command: 'view', outcome: 'ok' });
    // Another process wrote a seal under the lock and died before rename(2).
    const { segment } = readHead(file);
    const seal = nextRecord(file, KEY, {
      type: 'seal',
      instance: 'i1',
      segment: { index: 1, firstSeq: segment.firstSeq, records: segment.records },
    });
    appendFileSync(file, seal.line);
    const next = a.append({ type: 'command', command: 'create', outcome: 'ok' });
    await a.close();
    expect(listSealedSegments(file).map((s) => s.index)).toEqual([1]);
    expect(readRecords(sealedSegmentPath(file, 1)).at(-1)).toMatchObject({ type: 'seal', hash: seal.record.hash });
    expect(readRecords(file)[0]).toMatchObject({ seq: next.seq, prevHash: seal.record.hash });
    expect(existsSync(file)).toBe(true);
    expect((await verifyFile(file)).failures).toEqual([]);
  });
});
