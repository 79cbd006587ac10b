/**
 * Audit witnesses on radosgw: an authenticated chain's sealed segments uploaded to S3, its newest
 * segment deleted there, and the checkpoint file replaced by one naming the new end without its MAC.
 * `verify --store` of the S3 copy refuses that checkpoint instead of reporting the cut tail as
 * witnessed; the same head with its MAC (a checkpoint the writer wrote) witnesses it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditMac, canonicalJson } from '../../src/audit/chain.js';
import { readCheckpointFile } from '../../src/audit/checkpoints.js';
import { collectStoreChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { AuditWriter } from '../../src/audit/writer.js';
import { tempDir } from '../kit/temp.js';
import { recordS3SuiteRun, s3Available, s3SkipReason, suiteStores } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const KEY = new Uint8Array(32).fill(9);

describe.skipIf(!s3Available())(
  `audit checkpoints against the S3 copy${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const stores = suiteStores('audit-witness');
    const temp = tempDir('memvault-audit-witness');
    afterAll(() => temp.cleanup());

    it('a checkpoint without MAC at the end of a cut S3 copy is refused; with its MAC it witnesses it', async () => {
      const store = await stores();
      const file = join(temp.dir, 'audit.jsonl');
      const writer = await AuditWriter.open({
        file,
        instanceId: 'node-s3',
        macKey: KEY,
        maxSegmentBytes: 1200,
        upload: { store },
      });
      for (let i = 0; i < 15; i++) writer.append({ type: 'expire', counts: { objects: i } });
      await writer.close();
      const uploaded = (await collectStoreChains(store)).chains[0]!.segments;
      expect(uploaded.length).toBeGreaterThan(2);

      // The newest segment deleted from the bucket: the copy now ends at the previous one's seal.
      await store.delete(uploaded.at(-1)!.name);
      const cut = await collectStoreChains(store);
      let end: Record<string, unknown> = {};
      for await (const { line } of cut.chains[0]!.segments.at(-1)!.lines())
        end = JSON.parse(line) as Record<string, unknown>;
      const head = {
        instance: 'node-s3',
        seq: end['seq'] as number,
        hash: end['hash'] as string,
        time: end['time'] as string,
      };
      expect(end['v']).toBe(2);

      const checkpoints = join(temp.dir, 'checkpoints.jsonl');
      writeFileSync(checkpoints, `${JSON.stringify({ v: 2, type: 'checkpoint', ...head })}\n`);
      const stripped = await verifyChains(cut, { macKey: KEY, witnesses: await readCheckpointFile(checkpoints) });
      expect(stripped.ok).toBe(false);
      expect(stripped.failures).toEqual([
        expect.objectContaining({
          instance: 'node-s3',
          seq: head.seq,
          reason: `checkpoint ${checkpoints} line 1 carries no MAC but witnesses an authenticated record: the checkpoint was forged or its MAC stripped`,
        }),
      ]);
      expect(stripped.chains[0]!.witnessedThrough).toBeUndefined();

      writeFileSync(
        checkpoints,
        `${JSON.stringify({ v: 2, type: 'checkpoint', ...head, mac: auditMac(KEY, 'checkpoint', canonicalJson(head)) })}\n`,
      );
      const signed = await verifyChains(cut, { macKey: KEY, witnesses: await readCheckpointFile(checkpoints) });
      expect(signed.failures).toEqual([]);
      expect(signed.chains[0]!.witnessedThrough).toMatchObject({ seq: head.seq });
    });
  },
);
