/**
 * The command mix on the embedded store against the SDK's own local tool, in one run.
 *   npx tsx bench/commands.ts [iterations]
 * Both write real files under a temp directory of this machine. memvault runs with its default
 * chain (validation, path guard) and, in a second column, with client-side encryption, so the table
 * shows what the guarantees cost: conditional writes, locks, fsync'd atomic writes, encryption.
 */
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createVault, type Vault } from '../src/index.js';
import { median, printTable, timeRuns } from './stats.js';

const iterations = Number(process.argv[2] ?? 200);
const text4k = 'memory line with some words in it, about 60 characters long\n'.repeat(68);

type Runner = (input: Record<string, unknown>) => Promise<unknown>;

const seedText = 'memory line once\n' + 'x\n'.repeat(100);
const f = (i: number) => `/memories/c/f${i}.md`;

/** The mix: every step works on its own files, and nothing is overwritten (the SDK refuses that). */
const steps: Array<{ name: string; input: (i: number) => Record<string, unknown> }> = [
  { name: 'create 4 KiB', input: (i) => ({ command: 'create', path: `/memories/n/f${i}.md`, file_text: text4k }) },
  { name: 'view file', input: (i) => ({ command: 'view', path: f(i) }) },
  { name: 'view dir', input: () => ({ command: 'view', path: '/memories' }) },
  { name: 'str_replace', input: (i) => ({ command: 'str_replace', path: f(i), old_str: 'memory line once', new_str: 'memory LINE once' }) },
  { name: 'insert', input: (i) => ({ command: 'insert', path: f(i), insert_line: 1, insert_text: `inserted ${i}` }) },
  { name: 'rename file', input: (i) => ({ command: 'rename', old_path: f(i), new_path: `/memories/r/f${i}.md` }) },
  { name: 'delete file', input: (i) => ({ command: 'delete', path: `/memories/r/f${i}.md` }) },
];

async function measure(run: Runner): Promise<Map<string, number>> {
  for (let i = 0; i < iterations; i++) await run({ command: 'create', path: f(i), file_text: seedText });
  const out = new Map<string, number>();
  for (const step of steps) out.set(step.name, median(await timeRuns(iterations, (i) => run(step.input(i)), 0)));
  return out;
}

async function memvaultRunner(dir: string, encrypted: boolean): Promise<{ run: Runner; vault: Vault }> {
  const vault = await createVault({
    store: pathToFileURL(dir).href,
    ...(encrypted ? await encryptionOptions(dir) : { encryption: false as const }),
  });
  const handlers = vault.handlers('bench-user') as unknown as Record<string, (i: unknown) => Promise<unknown>>;
  return { vault, run: (input) => handlers[String(input['command'])]!(input) };
}

async function encryptionOptions(dir: string): Promise<Record<string, unknown>> {
  try {
    const crypto = await import('../src/crypto/index.js');
    const { randomBytes } = await import('node:crypto');
    const store = await (await import('../src/store/open.js')).openStore(pathToFileURL(dir).href);
    const encryption = await crypto.createEncryptionFromConfig({ store, config: { masterKey: randomBytes(32).toString('base64') } });
    return { store, codec: encryption.codecProvider };
  } catch (error) {
    console.error('encryption unavailable for the bench:', error instanceof Error ? error.message : error);
    return {};
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'memvault-bench-'));
  try {
    const sdk = await BetaLocalFilesystemMemoryTool.init(join(root, 'sdk'));
    const sdkHandlers = sdk as unknown as Record<string, (i: unknown) => Promise<unknown>>;
    const sdkRun: Runner = (input) => sdkHandlers[String(input['command'])]!.call(sdk, input);
    const sdkTimes = await measure(sdkRun);
    const plain = await memvaultRunner(join(root, 'plain'), false);
    const plainTimes = await measure(plain.run);
    await plain.vault.close();
    const enc = await memvaultRunner(join(root, 'enc'), true);
    const encTimes = await measure(enc.run);
    await enc.vault.close();

    console.log(`\nCommand mix, embedded store vs the SDK's BetaLocalFilesystemMemoryTool (median ms of ${iterations} runs each, one run)\n`);
    printTable(
      ['command', 'SDK local tool', 'memvault, no encryption', 'ratio', 'memvault (default: encrypted)', 'ratio'],
      [...sdkTimes.keys()].map((name) => {
        const s = sdkTimes.get(name)!;
        const p = plainTimes.get(name)!;
        const e = encTimes.get(name)!;
        return [name, s, p, `${(p / s).toFixed(2)}x`, e, `${(e / s).toFixed(2)}x`];
      }),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
