// A rotation that cannot complete fails closed: the writer throws AuditWriteError and stops (not
// writable), so no record is ever written after a seal in the same file; a restart finishes it.
import { mkdirSync, rmSync } from 'node:fs';
import type * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listSealedSegments, sealedSegmentPath } from '../../src/audit/segments.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { AuditWriteError, AuditWriter } from '../../src/audit/writer.js';
import { readRecords, tempDir } from './helpers.js';

// rename(2) failing for a reason no pre-check can see (EIO, EACCES on a changed mount).
const renames = vi.hoisted(() => ({ fail: false }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      if (renames.fail) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      real.renameSync(from, to);
    },
  };
});

let cleanup: (() => void) | undefined;
afterEach(() => {
  renames.fail = false;
  cleanup?.();
});

function auditFile(): string {
  const temp = tempDir();
  cleanup = temp.cleanup;
  return join(temp.dir, 'audit.jsonl');
}

const verifyFile = async (file: string) => (await verifyChains(await collectFileChains([file]))).failures;

/** Appends until one throws (a rotation is due after a few records of 600 bytes); returns the error. */
function appendUntilThrown(writer: AuditWriter): unknown {
  for (let i = 0; i < 10; i++) {
    try {
      writer.append({ type: 'command', command: 'view', outcome: 'ok' });
    } catch (error) {
      return error;
    }
  }
  return undefined;
}

describe('a rotation that cannot complete', () => {
  it('stops the writer before writing a seal when the sealed segment’s name is taken', async () => {
    const file = auditFile();
    const writer = await AuditWriter.open({ file, maxSegmentBytes: 600, instanceId: 'n1' });
    mkdirSync(join(sealedSegmentPath(file, 1), 'x'), { recursive: true });
    expect(appendUntilThrown(writer)).toBeInstanceOf(AuditWriteError);
    expect(writer.writable).toBe(false);
    expect(() => writer.append({ type: 'command', command: 'view', outcome: 'ok' })).toThrow(AuditWriteError);
    await writer.close();
    expect(readRecords(file).map((r) => r.type)).not.toContain('seal');
    rmSync(sealedSegmentPath(file, 1), { recursive: true });
    expect(await verifyFile(file)).toEqual([]);
  });

  it('stops the writer when rename(2) fails after the seal; a restart finishes the rotation', async () => {
    const file = auditFile();
    const writer = await AuditWriter.open({ file, maxSegmentBytes: 600, instanceId: 'n1' });
    renames.fail = true;
    expect(appendUntilThrown(writer)).toBeInstanceOf(AuditWriteError);
    expect(writer.writable).toBe(false);
    expect(() => writer.append({ type: 'command', command: 'view', outcome: 'ok' })).toThrow(AuditWriteError);
    await writer.close();
    expect(readRecords(file).at(-1)?.type).toBe('seal');
    expect(await verifyFile(file)).toEqual([]);

    renames.fail = false;
    const again = await AuditWriter.open({ file, maxSegmentBytes: 600, instanceId: 'n1' });
    await again.close();
    expect(listSealedSegments(file).map((s) => s.index)).toEqual([1]);
    expect(await verifyFile(file)).toEqual([]);
  });

  it('close() that cannot seal reports it, and still closes the file', async () => {
    const file = auditFile();
    const writer = await AuditWriter.open({ file, sealOnClose: true, instanceId: 'n1' });
    writer.append({ type: 'command', command: 'view', outcome: 'ok' });
    mkdirSync(join(sealedSegmentPath(file, 1), 'x'), { recursive: true });
    await expect(writer.close()).rejects.toBeInstanceOf(AuditWriteError);
    expect(writer.writable).toBe(false);
    rmSync(sealedSegmentPath(file, 1), { recursive: true });
    expect(await verifyFile(file)).toEqual([]);
  });
});
