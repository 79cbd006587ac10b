// The appender (src/audit/sink.ts) keeps async mode's promise without pino: a process that exits
// without closing its writer still writes what is buffered. Three records are far below the 4 KiB
// the buffer waits for, so without the exit flush nothing at all would reach the file.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { readRecords, tempDir } from './helpers.js';

const script = fileURLToPath(new URL('./fixtures/audit-process.ts', import.meta.url));

function runProcess(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}: ${stderr}`))));
  });
}

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

it('async mode: a process exiting without close() leaves every buffered record, a chain that verifies', async () => {
  const temp = tempDir();
  cleanup = temp.cleanup;
  const file = join(temp.dir, 'exit.jsonl');
  await runProcess([file, 'node-y', '3', 'async', 'no-close']);
  expect(readRecords(file).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  const report = await verifyChains(await collectFileChains([file]));
  expect(report.failures).toEqual([]);
}, 60_000);
