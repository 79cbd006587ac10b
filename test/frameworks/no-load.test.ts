import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FRAMEWORKS = /node_modules\/(@ai-sdk\/|ai\/|@langchain\/|langchain\/|zod\/)/;

/**
 * Imports the given entry points in a fresh Node process (its module graph is not vitest's) and
 * returns every framework package file it loaded (a resolve hook sees each one, also the lazy ones).
 */
async function frameworkFilesLoadedBy(entries: string[]): Promise<string[]> {
  const script = [
    "import { registerHooks } from 'node:module';",
    'const seen = [];',
    'registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });',
    `for (const entry of ${JSON.stringify(entries)}) await import(entry);`,
    `process.stdout.write(JSON.stringify(seen.filter((url) => ${FRAMEWORKS.toString()}.test(url))));`,
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: repo },
  );
  return JSON.parse(stdout) as string[];
}

const src = (file: string) => new URL(`../../src/${file}`, import.meta.url).href;

describe('the framework packages are optional peers', () => {
  it('the root and the other entry points load none of them; memvault/ai-sdk and memvault/langchain do', async () => {
    const others = ['index.ts', 'chain.ts', 'verify.ts', 'pii.ts', 's3.ts'].map(src);
    expect(await frameworkFilesLoadedBy(others)).toEqual([]);
    const aiSdk = await frameworkFilesLoadedBy([src('ai-sdk.ts')]);
    expect(aiSdk.some((url) => url.includes('node_modules/@ai-sdk/anthropic/'))).toBe(true);
    expect(aiSdk.some((url) => url.includes('@langchain/'))).toBe(false);
    const langChain = await frameworkFilesLoadedBy([src('langchain.ts')]);
    expect(langChain.some((url) => url.includes('node_modules/@langchain/anthropic/'))).toBe(true);
    expect(langChain.some((url) => url.includes('@ai-sdk/'))).toBe(false);
  }, 60_000);
});
