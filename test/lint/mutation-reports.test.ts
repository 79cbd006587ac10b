// The committed mutation reports (reports/mutation/*.json) must not name host paths: Stryker writes
// its projectRoot (the checkout's absolute path) and sandbox paths in the reasons of broken runs;
// scripts/mutation/host-paths.mjs strips them after every run and mutation:check refuses a report
// that still has one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

type Report = {
  projectRoot?: string;
  files: Record<string, { source: string; mutants: { id: string; statusReason?: string; description?: string }[] }>;
};
type HostPaths = { withoutHostPaths(report: Report, root?: string): Report; hostPathsIn(report: Report): string[] };

const root = resolve(import.meta.dirname, '../..');
let paths: HostPaths;
beforeAll(async () => {
  paths = (await import(pathToFileURL(join(root, 'scripts/mutation/host-paths.mjs')).href)) as HostPaths;
});

const source = "const root = '/home/ci/repo/src';\n";
const report = (): Report => ({
  projectRoot: '/home/ci/repo',
  files: {
    'src/a.ts': {
      source,
      mutants: [
        {
          id: '1',
          statusReason:
            'An error occurred outside of a test run: /home/ci/repo/.stryker-tmp/sandbox-aB3_x9/test/a.test.ts: boom\n/home/ci/repo/.stryker-tmp/sandbox-aB3_x9/test/b.test.ts: boom',
        },
        { id: '2', statusReason: 'expected /home/ci/repo/src/a.ts to be fine' },
        { id: '3', statusReason: "expected '/memories/x' to be '/memories/y'" },
        { id: '4' },
      ],
    },
  },
});

describe('host paths in mutation reports', () => {
  it('a raw Stryker report is refused: projectRoot and each reason that names a host path', () => {
    expect(paths.hostPathsIn(report())).toEqual(['projectRoot', 'mutant 1 statusReason', 'mutant 2 statusReason']);
  });

  it('stripping drops projectRoot, makes sandbox and checkout paths relative, and leaves sources and other text alone', () => {
    const stripped = paths.withoutHostPaths(report(), '/elsewhere');
    expect('projectRoot' in stripped).toBe(false);
    const file = stripped.files['src/a.ts']!;
    expect(file.source).toBe(source);
    expect(file.mutants.map((m) => m.statusReason)).toEqual([
      'An error occurred outside of a test run: test/a.test.ts: boom\ntest/b.test.ts: boom',
      'expected src/a.ts to be fine',
      "expected '/memories/x' to be '/memories/y'",
      undefined,
    ]);
    expect(paths.hostPathsIn(stripped)).toEqual([]);
  });

  it('the checkout this runs in is stripped too when the report was made elsewhere', () => {
    const made = report();
    made.projectRoot = '/builds/other';
    const stripped = paths.withoutHostPaths(made, '/home/ci/repo/');
    expect(stripped.files['src/a.ts']!.mutants[1]!.statusReason).toBe('expected src/a.ts to be fine');
  });

  it('every committed report is free of host paths', () => {
    const dir = join(root, 'reports/mutation');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect(paths.hostPathsIn(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Report), file).toEqual([]);
  });
});
