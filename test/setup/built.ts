/**
 * vitest globalSetup: the CLI suites run the built CLI (dist/cli/main.js), as an operator does, not
 * the sources through tsx, which costs a second compiler process on every run of the command. `npm
 * test` builds before vitest, so this only checks; run alone after an edit, it compiles what is stale
 * first. No `clean` here: a build that removed dist/ would pull it from under a run in progress. A
 * type error does not stop the run (tsc still emits; `npm run typecheck` is the check of types).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function stale(built: string, sources: string): boolean {
  return !existsSync(built) || newestMtime(join(repo, sources)) > statSync(built).mtimeMs;
}

function compile(project: string): void {
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', project], { cwd: repo, encoding: 'utf8' });
  if (run.status !== 0) console.warn(`[built] tsc -p ${project} reported errors; the suites run what it emitted`);
}

export default function setup(): void {
  if (stale(join(repo, 'dist', 'cli', 'main.js'), 'src')) compile('tsconfig.build.json');
  if (stale(join(repo, 'dist', 'infra', 'index.js'), join('infra', 'lib'))) compile('tsconfig.infra.json');
}
