// The root entry (and the other library entries) never load Fastify or jose: only memvault/serve
// and the CLI do. Walks the relative imports from each entry, statically.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT = /(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** Every package a module reaches through its relative imports (value and type imports alike). */
function packagesReached(entry: string): { packages: Set<string>; files: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [resolve(src, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = (match[1] ?? match[2])!;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (existsSync(target)) queue.push(target);
      } else {
        packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
      }
    }
  }
  return { packages, files };
}

describe('which entries load the HTTP stack', () => {
  it('memvault, memvault/s3, /chain, /verify and /pii load neither Fastify nor jose; memvault/serve does', () => {
    for (const entry of ['index.ts', 's3.ts', 'chain.ts', 'verify.ts', 'pii.ts']) {
      const { packages, files } = packagesReached(entry);
      expect(files.size, entry).toBeGreaterThan(1);
      for (const name of ['fastify', 'jose', '@fastify/rate-limit'])
        expect(packages.has(name), `${entry} reaches ${name}`).toBe(false);
      expect(
        [...files].some((f) => f.includes('/src/serve')),
        entry,
      ).toBe(false);
    }
    const serve = packagesReached('serve.ts').packages;
    for (const name of ['fastify', 'jose', '@fastify/rate-limit']) expect(serve.has(name)).toBe(true);
  });
});
