/**
 * "This suite really ran": after a test file, one line `<file> passed=N failed=N skipped=N` appended
 * to a marker under .tmp/ (O_APPEND of one short line: files in parallel forks do not interleave).
 * A global setup clears the marker first; CI reads it, so a suite that skipped or never ran fails CI
 * instead of passing quietly. The S3 suites (test/s3/helpers.ts) and the browser suites
 * (test/page/setup.ts) record here.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The marker files CI checks. */
export const SUITE_MARKERS = {
  s3: join(repoRoot, '.tmp', 's3-suite-ran'),
  browser: join(repoRoot, '.tmp', 'browser-suite-ran'),
} as const;

interface TaskLike {
  type?: string;
  tasks?: TaskLike[];
  result?: { state?: string };
}

function tally(task: TaskLike, counts: { passed: number; failed: number; skipped: number }): void {
  if (task.tasks) {
    for (const child of task.tasks) tally(child, counts);
    return;
  }
  if (task.type !== 'test') return;
  const state = task.result?.state;
  if (state === 'pass') counts.passed += 1;
  else if (state === 'fail') counts.failed += 1;
  else counts.skipped += 1;
}

/** Call once at the top level of a test file; `ran()` false (no server, say) writes nothing. */
export function recordSuiteRun(marker: keyof typeof SUITE_MARKERS, fileUrl: string, ran: () => boolean = () => true) {
  // vitest 4 parses a hook's first parameter as a fixture pattern: it must be destructuring.
  // eslint-disable-next-line no-empty-pattern
  afterAll(({}, suite) => {
    if (!ran()) return;
    const counts = { passed: 0, failed: 0, skipped: 0 };
    tally(suite as unknown as TaskLike, counts);
    const path = SUITE_MARKERS[marker];
    mkdirSync(dirname(path), { recursive: true });
    const file = relative(repoRoot, fileURLToPath(fileUrl));
    appendFileSync(path, `${file} passed=${counts.passed} failed=${counts.failed} skipped=${counts.skipped}\n`);
  });
}
