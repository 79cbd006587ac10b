import { appendFileSync, existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuditLogger } from '../../src/pipeline/audit-logger.js';
import { listSealedSegments, sealedSegmentPath } from '../../src/audit/segments.js';
import { collectFileChains, collectStoreChains } from '../../src/audit/sources.js';
import type { SegmentUploader } from '../../src/audit/uploader.js';
import { verifyChains } from '../../src/audit/verify.js';
import { AuditWriteError } from '../../src/audit/writer.js';
import { isMemvaultError } from '../../src/errors.js';
import { MemoryStore } from '../../src/store/memory.js';
import { readRecords, tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function auditFile(): string {
  const temp = tempDir();
  cleanup = temp.cleanup;
  return join(temp.dir, 'audit.jsonl');
}

async function verifyFile(file: string) {
  return verifyChains(await collectFileChains([file]));
}

function allRecords(file: string) {
  return [...listSealedSegments(file).map((s) => s.file), ...(existsSync(file) ? [file] : [])].flatMap(readRecords);
}

describe('audit writer', () => {
  it('continues the chain across restarts: same instance, next seq, previous hash', async () => {
    const file = auditFile();
    const first = await createAuditLogger({ file });
    first.append({ type: 'expire', counts: { objects: 3 } });
    const head = readRecords(file).at(-1);
    await first.close();

    const second = await createAuditLogger({ file });
    expect(second.instanceId).toBe(first.instanceId);
    const record = second.append({ type: 'erase', uid: 'u_1' });
    await second.close();

    const records = readRecords(file);
    const start = records.find((r) => r.seq === (head?.seq ?? 0) + 1);
    expect(start).toMatchObject({ type: 'start', prevHash: head?.hash });
    expect(record.seq).toBe((head?.seq ?? 0) + 2);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    const report = await verifyFile(file);
    expect(report.failures).toEqual([]);
    expect(report.totals).toMatchObject({ instances: 1, records: 4 });
  });

  it('rotates into sealed segments whose first record chains to the previous seal', async () => {
    const file = auditFile();
    const logger = await createAuditLogger({ file, maxSegmentBytes: 1500 });
    for (let i = 0; i < 30; i++) logger.append({ type: 'expire', counts: { objects: i } });
    await logger.close();
    const reopened = await createAuditLogger({ file, maxSegmentBytes: 1500 });
    for (let i = 0; i < 10; i++) reopened.append({ type: 'expire', counts: { objects: i } });
    await reopened.close();

    const segments = listSealedSegments(file);
    expect(segments.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < segments.length; i++) {
      const previous = readRecords(segments[i - 1]!.file);
      const seal = previous.at(-1);
      expect(seal).toMatchObject({
        type: 'seal',
        segment: { index: segments[i - 1]!.index, firstSeq: previous[0]!.seq, records: previous.length - 1 },
      });
      expect(readRecords(segments[i]!.file)[0]!.prevHash).toBe(seal!.hash);
    }
    const seqs = allRecords(file).map((r) => r.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect((await verifyFile(file)).ok).toBe(true);
  });

  it('keeps records in FILE itself across restarts unless sealing on close is asked for', async () => {
    const file = auditFile();
    for (let run = 0; run < 2; run++) {
      const logger = await createAuditLogger({ file });
      logger.append({ type: 'rotate' });
      await logger.close();
    }
    expect(listSealedSegments(file)).toEqual([]);
    expect(readRecords(file).map((r) => r.type)).toEqual(['start', 'rotate', 'start', 'rotate']);

    const sealing = await createAuditLogger({ file, sealOnClose: true });
    await sealing.close();
    expect(existsSync(file)).toBe(false);
    expect(readRecords(sealedSegmentPath(file, 1)).at(-1)?.type).toBe('seal');
  });

  it('cuts off a torn last line after a crash and says so in the start record', async () => {
    const file = auditFile();
    const logger = await createAuditLogger({ file });
    logger.append({ type: 'expire' });
    await logger.close();
    const torn = '{"v":1,"seq":3,"time":"2026-';
    appendFileSync(file, torn);

    const reopened = await createAuditLogger({ file });
    await reopened.close();
    const records = readRecords(file);
    expect(records.at(-1)).toMatchObject({
      type: 'start',
      seq: 3,
      recovered: { discardedBytes: Buffer.byteLength(torn) },
    });
    expect((await verifyFile(file)).ok).toBe(true);
  });

  it('finishes a rotation that stopped between the seal record and the rename', async () => {
    const file = auditFile();
    const logger = await createAuditLogger({ file, sealOnClose: true });
    logger.append({ type: 'expire' });
    await logger.close();
    // As if the process died right after writing the seal: the sealed file is still the active one.
    renameSync(sealedSegmentPath(file, 1), file);

    const reopened = await createAuditLogger({ file });
    reopened.append({ type: 'erase' });
    await reopened.close();
    expect(listSealedSegments(file).map((s) => s.index)).toEqual([1]);
    expect(readRecords(file)[0]).toMatchObject({ type: 'start', seq: 4 });
    expect((await verifyFile(file)).ok).toBe(true);
  });

  it('refuses to continue another instance’s file under a different instance id', async () => {
    const file = auditFile();
    const logger = await createAuditLogger({ file, instanceId: 'node-a' });
    await logger.close();
    await expect(createAuditLogger({ file, instanceId: 'node-b' })).rejects.toSatisfy((e) =>
      isMemvaultError(e, 'CONFIG'),
    );
    const same = await createAuditLogger({ file, instanceId: 'node-a' });
    expect(same.instanceId).toBe('node-a');
    await same.close();
  });

  it('writes every record in async mode once flushed or closed, and with fsync', async () => {
    const file = auditFile();
    const logger = await createAuditLogger({ file, sync: false, maxSegmentBytes: 2000 });
    for (let i = 0; i < 50; i++) logger.append({ type: 'expire', counts: { objects: i } });
    await logger.flush();
    expect(allRecords(file)).toHaveLength(51 + listSealedSegments(file).length);
    await logger.close();
    const durable = await createAuditLogger({ file, fsync: true });
    durable.append({ type: 'erase' });
    expect(readRecords(file).at(-1)?.type).toBe('erase');
    await durable.close();
    const report = await verifyFile(file);
    expect(report.failures).toEqual([]);
    expect(report.totals.records).toBe(allRecords(file).length);
  });

  it('fails loudly when the sink cannot be written', async () => {
    // /dev/full accepts open() and fails every write with ENOSPC.
    await expect(createAuditLogger({ file: '/dev/full' })).rejects.toBeInstanceOf(AuditWriteError);
  });

  it('uploads sealed segments create-only under audit/{instance}/{first seq}, verifiable from the store', async () => {
    const file = auditFile();
    const store = new MemoryStore();
    const logger = await createAuditLogger({ file, maxSegmentBytes: 1200, upload: { store } });
    for (let i = 0; i < 20; i++) logger.append({ type: 'expire', counts: { objects: i } });
    await logger.close();

    const keys = (await store.list('audit/')).objects.map((o) => o.key);
    const sealed = listSealedSegments(file);
    expect(keys).toHaveLength(sealed.length);
    expect(keys[0]).toBe(`audit/${logger.instanceId}/000000000001.jsonl`);
    for (const [i, segment] of sealed.entries()) {
      const stored = await store.get(keys[i]!);
      expect(Buffer.from(stored!.body).equals(readFileSync(segment.file))).toBe(true);
    }
    const report = await verifyChains(await collectStoreChains(store));
    expect(report.failures).toEqual([]);
    expect(report.totals.segments).toBe(sealed.length);

    // A shell glob over the audit files also matches the progress file; verify ignores it.
    const globbed = [file, ...sealed.map((segment) => segment.file), `${file}.upload-state.json`];
    expect(existsSync(globbed.at(-1)!)).toBe(true);
    expect((await verifyChains(await collectFileChains(globbed))).ok).toBe(true);

    // A restart does not upload again (progress file), and a lost progress file is harmless (create-only).
    const again = await createAuditLogger({ file, upload: { store } });
    await again.close();
    expect((await store.list('audit/')).objects).toHaveLength(sealed.length + 1);
  });

  it('retries a failed upload at the next seal and reports the failure', async () => {
    const file = auditFile();
    const uploaded: string[] = [];
    let failNext = true;
    const errors: Error[] = [];
    const flaky: SegmentUploader = {
      supportsRetention: true,
      async upload(key, _body, retention) {
        if (failNext) {
          failNext = false;
          throw new Error('network down');
        }
        expect(retention?.mode).toBe('COMPLIANCE');
        expect(retention?.retainUntil.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);
        uploaded.push(key);
        return 'uploaded';
      },
    };
    const logger = await createAuditLogger({
      file,
      sealOnClose: true,
      upload: { uploader: flaky, objectLock: { mode: 'COMPLIANCE', days: 30 } },
      onError: (e) => errors.push(e),
    });
    await logger.close();
    expect(errors.map((e) => e.message)).toEqual(['network down']);
    expect(uploaded).toEqual([]);
    const reopened = await createAuditLogger({
      file,
      sealOnClose: true,
      upload: { uploader: flaky, objectLock: { mode: 'COMPLIANCE', days: 30 } },
    });
    await reopened.close();
    expect(uploaded).toHaveLength(2);
  });

  it("counts an 'exists' as shipped only when the object there is the local segment, byte for byte", async () => {
    const file = auditFile();
    const store = new MemoryStore();
    // Another writer with the same instance id (a copied state directory) got there first.
    const key = 'audit/reused-id/000000000001.jsonl';
    await store.put(key, new TextEncoder().encode('{"forged":true}\n'));
    const errors: Error[] = [];
    const logger = await createAuditLogger({
      file,
      instanceId: 'reused-id',
      maxSegmentBytes: 1200,
      upload: { store },
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 20; i++) logger.append({ type: 'expire', counts: { objects: i } });
    await logger.close();
    // Reported, not shipped: no progress, the local segments kept, the object there left as it was.
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.at(-1)!.message).toMatch(/already holds different content.*kept/);
    expect(errors.at(-1)!.message).not.toContain(file);
    expect(existsSync(`${file}.upload-state.json`)).toBe(false);
    const sealed = listSealedSegments(file);
    expect(sealed.length).toBeGreaterThan(1);
    for (const segment of sealed) expect(existsSync(segment.file)).toBe(true);
    expect(new TextDecoder().decode((await store.get(key))!.body)).toBe('{"forged":true}\n');
    expect((await store.list('audit/')).objects.map((o) => o.key)).toEqual([key]);

    // The same bytes there (an upload whose progress file was lost) are shipped: no error.
    const copy = new MemoryStore();
    for (const segment of sealed.slice(0, 2)) {
      const body = readFileSync(segment.file);
      const first = readRecords(segment.file)[0]!;
      await copy.put(`audit/reused-id/${String(first.seq).padStart(12, '0')}.jsonl`, body);
    }
    const retried: Error[] = [];
    const reopened = await createAuditLogger({ file, upload: { store: copy }, onError: (e) => retried.push(e) });
    await reopened.close();
    expect(retried).toEqual([]);
    expect((await copy.list('audit/')).objects).toHaveLength(listSealedSegments(file).length);
    expect((await verifyChains(await collectStoreChains(copy))).failures).toEqual([]);
  });

  it("fails closed on an 'exists' from an uploader that cannot compare, and on a longer object", async () => {
    const file = auditFile();
    const errors: Error[] = [];
    const blind: SegmentUploader = { supportsRetention: false, upload: async () => 'exists' };
    const logger = await createAuditLogger({ file, upload: { uploader: blind }, onError: (e) => errors.push(e) });
    await logger.close();
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/cannot compare/)]);
    expect(existsSync(`${file}.upload-state.json`)).toBe(false);

    // The local segment followed by more bytes is not the segment either.
    const store = new MemoryStore();
    const [segment] = listSealedSegments(file);
    const body = readFileSync(segment!.file);
    const key = `audit/${logger.instanceId}/000000000001.jsonl`;
    await store.put(key, Buffer.concat([body, Buffer.from('{"appended":true}\n')]));
    const longer: Error[] = [];
    const reopened = await createAuditLogger({ file, upload: { store }, onError: (e) => longer.push(e) });
    await reopened.close();
    // Reported by each pass (at open and at close), never counted.
    expect(longer.length).toBeGreaterThan(0);
    for (const e of longer) expect(e.message).toMatch(/already holds different content/);
    expect(existsSync(`${file}.upload-state.json`)).toBe(false);
  });

  it('refuses Object Lock with an uploader that cannot set retention', async () => {
    const file = auditFile();
    await expect(
      createAuditLogger({ file, upload: { store: new MemoryStore(), objectLock: { mode: 'GOVERNANCE', days: 7 } } }),
    ).rejects.toSatisfy((e) => isMemvaultError(e, 'CONFIG'));
  });
});
