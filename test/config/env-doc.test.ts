/**
 * One table of environment variables (src/config/env.ts): docs/configuration.md shows exactly that
 * table, every MEMVAULT_* name the source mentions is in it, and only the applications (the CLI,
 * the Lambda) and the explicit readers touch process.env.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEnvTable } from '../../src/config/doc.js';
import { ENV_VARIABLES } from '../../src/config/env.js';

const doc = readFileSync('docs/configuration.md', 'utf8');
const tableNames = new Set(ENV_VARIABLES.map((v) => v.name));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('docs/configuration.md and the table', () => {
  it('the page carries the table as rendered from src/config/env.ts', () => {
    const block = /<!-- env-table:start -->\n([\s\S]*?)\n<!-- env-table:end -->/.exec(doc)?.[1];
    expect(block, 'the env-table markers are missing').toBeDefined();
    expect(block).toBe(renderEnvTable());
  });

  it('every variable of the table is on the page, and every variable on the page is in the table', () => {
    const onPage = new Set(doc.match(/MEMVAULT_[A-Z0-9_]*[A-Z0-9]/g));
    for (const name of tableNames) expect(onPage.has(name), name).toBe(true);
    for (const name of onPage) expect(tableNames.has(name), `${name} is on the page but not in the table`).toBe(true);
  });

  it('the table has each name once, with a setting and a doc line', () => {
    expect(tableNames.size).toBe(ENV_VARIABLES.length);
    for (const variable of ENV_VARIABLES) {
      expect(variable.name).toMatch(/^MEMVAULT_[A-Z0-9_]+$/);
      expect(variable.setting.length, variable.name).toBeGreaterThan(0);
      expect(variable.doc, variable.name).toMatch(/\.$/);
    }
  });
});

describe('the source', () => {
  const files = sourceFiles('src');

  it('names no MEMVAULT_* variable that the table lacks', () => {
    for (const file of files) {
      for (const name of readFileSync(file, 'utf8').match(/MEMVAULT_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []) {
        expect(tableNames.has(name), `${file} names ${name}`).toBe(true);
      }
    }
  });

  it('reads process.env only in the applications (CLI, Lambda) and the explicit readers', () => {
    const allowed = [
      /^src\/cli\//,
      /^src\/lambda\//,
      /^src\/config\/from-env\.ts$/,
      /^src\/store\/s3\/settings\.ts$/,
      /^src\/store\/s3\/client\.ts$/,
    ];
    const readers = files.filter((file) =>
      /process\.env\b/.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')),
    );
    expect(readers.filter((file) => !allowed.some((a) => a.test(file.replace(/\\/g, '/'))))).toEqual([]);
  });

  it('never assigns to or deletes from process.env', () => {
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(
        /delete\s+process\.env|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|Object\.assign\(process\.env/,
      );
    }
  });
});
