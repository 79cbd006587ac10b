/**
 * vitest globalSetup: clears the browser suites' "this suite really ran" marker before a run
 * (test/kit/suite-marker.ts; the S3 marker is cleared by test/setup/rgw.ts), so that CI reads only
 * what this run wrote.
 */
import { rmSync } from 'node:fs';
import { SUITE_MARKERS } from '../kit/suite-marker.js';

export default function setup(): void {
  rmSync(SUITE_MARKERS.browser, { force: true });
}
