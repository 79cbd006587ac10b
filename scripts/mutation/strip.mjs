#!/usr/bin/env node
/**
 * node scripts/mutation/strip.mjs [<target>...]
 *
 * Rewrites committed reports (reports/mutation/<target>.json) without the host paths Stryker puts
 * in them (projectRoot, sandbox paths in error reasons). `npm run mutation` does this after every
 * run; this is for a report made by calling Stryker directly. The recorded sources are not touched,
 * so a current report stays current.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

process.chdir(resolve(dirname(fileURLToPath(import.meta.url)), '../..'));
const { stripHostPaths } = await import('./score.mjs');
const { targetByName, targets } = await import('./targets.mjs');
const names = process.argv.slice(2);
for (const target of names.length > 0 ? names.map(targetByName) : targets) {
  if (stripHostPaths(target)) console.log(`mutation: ${target.name}: host paths stripped`);
}
