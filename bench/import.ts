/**
 * What `import('memvault')` costs a process: time to import the package and open a vault, and how
 * many modules and packages it loads, for a file store and for an S3 store. Each scenario runs in a
 * fresh Node process (ROUNDS times, median), against the built package (`npm run build` first).
 *
 *   npx tsx bench/import.ts [rounds] [baseline-dist-dir]
 *
 * With a baseline (the dist/ of another build, e.g. an older commit's), every scenario runs against
 * both in the same run, interleaved, and the table shows both.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, printTable } from './stats.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const builds: Array<[string, string]> = [['this build', pathToFileURL(resolve(here, '..', 'dist', 'index.js')).href]];
if (process.argv[3]) builds.unshift(['baseline', pathToFileURL(resolve(process.argv[3], 'index.js')).href]);
const counter = join(here, 'import', 'count-modules.mjs');
const rounds = Number(process.argv[2] ?? 7);
const masterKey = Buffer.alloc(32, 1).toString('base64');

const scenariosFor = (entry: string): Record<string, string> => ({
  'import only': `await import(${JSON.stringify(entry)});`,
  'file store: open + create': `
    const m = await import(${JSON.stringify(entry)});
    const { mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync(${JSON.stringify(join(tmpdir(), 'memvault-import-'))});
    const v = await m.createVault({ store: 'file://' + dir, encryption: { masterKey: ${JSON.stringify(masterKey)} } });
    await v.run('u', { command: 'create', path: '/memories/a.md', file_text: 'x' });
    await v.close();`,
  // Nothing listens on port 9: the S3 client is built and the first request fails fast; what is
  // measured is what an S3 deployment loads.
  's3 store: open (refused)': `
    const m = await import(${JSON.stringify(entry)});
    try {
      const v = await m.createVault({ store: 's3://bench/p', s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }, encryption: { masterKey: ${JSON.stringify(masterKey)} } });
      await v.close();
    } catch {}`,
});

interface Sample {
  ms: number;
  modules: number;
  packages: string[];
}

async function sample(script: string, dir: string): Promise<Sample> {
  const file = join(dir, `s${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    file,
    `const t0 = performance.now();\n${script}\nprocess.stdout.write(JSON.stringify({ ms: performance.now() - t0 }) + '\\n');\n`,
  );
  const { stdout } = await run(process.execPath, ['--import', pathToFileURL(counter).href, file], { cwd: dir });
  const lines = stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  const { ms } = JSON.parse(lines[0]!) as { ms: number };
  const { modules, packages } = JSON.parse(lines.at(-1)!) as { modules: number; packages: string[] };
  return { ms, modules, packages };
}

const dir = await mkdtemp(join(tmpdir(), 'memvault-import-bench-'));
const rows: Array<Array<string | number>> = [];
const heavy = ['@aws-sdk/client-s3', '@aws-sdk/client-kms', 'tar-stream'];
for (const name of Object.keys(scenariosFor(''))) {
  const samples = new Map<string, Sample[]>(builds.map(([b]) => [b, []]));
  for (let i = 0; i < rounds; i++)
    for (const [build, entry] of builds) samples.get(build)!.push(await sample(scenariosFor(entry)[name]!, dir));
  for (const [build] of builds) rows.push(row(name, build, samples.get(build)!));
}

function row(name: string, build: string, samples: Sample[]): Array<string | number> {
  const last = samples.at(-1)!;
  return [
    name,
    build,
    median(samples.map((s) => s.ms)),
    String(last.modules - 1), // the scenario script itself
    String(last.packages.length),
    heavy.filter((p) => last.packages.includes(p)).join(', ') || '-',
  ];
}
await rm(dir, { recursive: true, force: true });
console.log(`Node ${process.version}, ${rounds} fresh processes per row (median ms)\n`);
printTable(['scenario', 'build', 'ms', 'modules', 'packages', 'of S3 / KMS / tar loaded'], rows);
