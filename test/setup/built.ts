/**
 * vitest globalSetup: the CLI suites run the built CLI (dist/cli/main.js), as an operator does, not
 * the sources through tsx, which costs a second compiler process on every run of the command. `npm
 * test` builds before vitest, so this only checks; run alone after an edit, it compiles what is stale
 * first. No `clean` here: a build that removed dist/ would pull it from under a run in progress.
 */
import { execFileSync } from 'node:child_process';
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

export default function setup(): void {
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  if (stale(join(repo, 'dist', 'cli', 'main.js'), 'src')) {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repo, stdio: 'inherit' });
  }
  if (stale(join(repo, 'dist', 'infra', 'index.js'), join('infra', 'lib'))) {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.infra.json'], { cwd: repo, stdio: 'inherit' });
  }
}
