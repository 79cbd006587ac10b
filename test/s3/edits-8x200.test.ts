/**
 * The concurrency acceptance run: 8 processes x 200 edits (str_replace and insert mixed) on one file
 * through a real S3 server (RGW), each process a memvault instance of its own (no shared locks: only
 * S3's conditional writes keep them apart). 0 lost edits: every edit that reported success is in the
 * final file, exactly once; nothing else was added; edits that failed left no trace.
 *
 * Size: MEMVAULT_EDITS_PROCESSES x MEMVAULT_EDITS_PER_PROCESS (default 8 x 200).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { S3Store } from '../../src/store/s3.js';
import { editOf, seededText, SHARED_FILE, SHARED_USER } from './fixtures/edits.js';
import {
  emptyStore,
  recordS3SuiteRun,
  s3Available,
  s3ClientConfig,
  s3Connection,
  s3WorkerEnv,
  s3SkipReason,
  s3Url,
} from './helpers.js';

recordS3SuiteRun(import.meta.url);

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./fixtures/edit-worker.ts', import.meta.url));

const PROCESSES = Number(process.env.MEMVAULT_EDITS_PROCESSES ?? 8);
const EDITS = Number(process.env.MEMVAULT_EDITS_PER_PROCESS ?? 200);
const TIMEOUT_MS = Number(process.env.MEMVAULT_EDITS_TIMEOUT_MS ?? 900_000);

interface WorkerReport {
  tag: string;
  succeeded: string[];
  failed: Array<{ id: string; code: string | undefined; content: unknown }>;
  requests: Record<string, number>;
}

const opened: Vault[] = [];

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n += 1;
  return n;
}

describe.skipIf(!s3Available())(
  `${PROCESSES} processes x ${EDITS} edits on one file on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    afterAll(async () => {
      for (const vault of opened) {
        await emptyStore(vault.store as S3Store);
        await vault.close();
      }
    }, 120_000);

    it('loses no edit: every reported success is in the final file exactly once', { timeout: TIMEOUT_MS }, async () => {
      const connection = s3Connection()!;
      const url = s3Url(`edits-${PROCESSES}x${EDITS}`);
      const masterKey = randomBytes(32).toString('base64');
      const tags = Array.from({ length: PROCESSES }, (_, p) => `p${p}`);

      const setup = await createVault({ store: url, s3: s3ClientConfig(), encryption: { masterKey } });
      opened.push(setup);
      const initial = seededText(tags, EDITS);
      expect(await setup.run(SHARED_USER, { command: 'create', path: SHARED_FILE, file_text: initial })).toMatchObject({
        isError: false,
      });

      const env = s3WorkerEnv(masterKey, connection);
      const started = Date.now();
      const outputs = await Promise.all(
        tags.map((tag) =>
          // node --import tsx: one process each (the tsx CLI would start a second one).
          run(process.execPath, ['--import', 'tsx', worker, url, tag, String(EDITS)], {
            env,
            timeout: TIMEOUT_MS - 30_000,
            maxBuffer: 16 * 1024 * 1024,
          }),
        ),
      );
      const seconds = (Date.now() - started) / 1000;
      const reports = outputs.map((o) => JSON.parse(o.stdout.trim().split('\n').pop()!) as WorkerReport);

      const file = await (await setup.files(SHARED_USER)).read(SHARED_FILE);
      const text = Buffer.from(file!.data).toString('utf8');
      const succeeded = new Set(reports.flatMap((r) => r.succeeded));
      const failures = reports.flatMap((r) => r.failed);
      const lineCounts = new Map<string, number>();
      for (const line of text.split('\n')) lineCounts.set(line, (lineCounts.get(line) ?? 0) + 1);
      let inserted = 0;
      for (const tag of tags) {
        for (let i = 0; i < EDITS; i++) {
          const edit = editOf(tag, i);
          // An insert's mark is a whole line; a replacement's mark is bracketed, so unique as a substring.
          const marks = edit.kind === 'insert' ? (lineCounts.get(edit.mark) ?? 0) : occurrences(text, edit.mark);
          if (succeeded.has(edit.id)) {
            // A reported success is in the file, once (never lost, never applied twice).
            expect(marks, `${edit.id} (${edit.kind}) reported success`).toBe(1);
            if (edit.token) expect(occurrences(text, edit.token), `${edit.id} token`).toBe(0);
            if (edit.kind === 'insert') inserted += 1;
          } else {
            // A failed edit was not applied (all failures here are answered before any write lands).
            expect(marks, `${edit.id} (${edit.kind}) failed`).toBe(0);
            if (edit.token) expect(occurrences(text, edit.token), `${edit.id} token`).toBe(1);
          }
        }
      }
      // Nothing else was added: the seeded lines plus one line per successful insert.
      expect(text.split('\n').length).toBe(initial.split('\n').length + inserted);
      // An edit may give up after its 12 conditional-write attempts: then with the clear conflict
      // error (checked above to have left no trace), never anything else.
      for (const failure of failures) {
        expect(failure.code, JSON.stringify(failure)).toBe('CONFLICT');
        expect(failure.content).toBe(
          `Error: ${SHARED_FILE} was changed by other writers at the same time too often; this edit was not applied. View the file and try again.`,
        );
      }
      expect(succeeded.size + failures.length).toBe(PROCESSES * EDITS);
      const requests: Record<string, number> = {};
      for (const r of reports)
        for (const [type, n] of Object.entries(r.requests)) requests[type] = (requests[type] ?? 0) + n;
      const perEdit = (type: string): string => ((requests[type] ?? 0) / (PROCESSES * EDITS)).toFixed(2);
      console.info(
        `[edits] ${PROCESSES} processes x ${EDITS} edits on one file: ${succeeded.size} succeeded, ${failures.length} gave up (CONFLICT), 0 lost, ` +
          `in ${seconds.toFixed(1)} s (${((PROCESSES * EDITS) / seconds).toFixed(1)} edits/s); per edit ${perEdit('GET')} GET + ${perEdit('PUT')} PUT`,
      );
    });
  },
);
