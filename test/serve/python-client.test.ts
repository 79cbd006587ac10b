// The Python client (clients/python, `python3 -m unittest`) against two live `memvault serve`
// processes (the real, built CLI) on one file store. The expected conformance outcomes are
// toolRunner's, computed here and handed to Python in a file. Stopping the servers with SIGTERM
// checks the graceful exit.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { CONFORMANCE_STEPS, runConformance, seedConformance, viaToolRunner } from '../kit/conformance.js';
import { tempDir } from '../kit/temp.js';
import { memoryVault } from '../kit/vault.js';
import { serviceKey, startServeProcess, type ServeProcess } from './helpers.js';

const clientDir = fileURLToPath(new URL('../../clients/python', import.meta.url));
const PYTHON = process.env['PYTHON'] ?? 'python3';
const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
const USERS = { sync: 'py-sync', async: 'py-async', tool: 'py-tool' };

const temp = tempDir('memvault-serve-py');
const store = `file://${join(temp.dir, 'store')}`;
const servers: ServeProcess[] = [];

function startServe(): Promise<ServeProcess> {
  return startServeProcess(['--store', store, '--api-keys', join(temp.dir, 'keys.json')], {
    MEMVAULT_MASTER_KEY: MASTER_KEY,
  });
}

function runPython(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      cwd: clientDir,
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

beforeAll(async () => {
  writeFileSync(join(temp.dir, 'keys.json'), JSON.stringify({ keys: [serviceKey.entry] }));
  const vault = await createVault({ store, encryption: { masterKey: MASTER_KEY } });
  for (const user of Object.values(USERS)) await seedConformance(vault, user);
  await vault.close();
  servers.push(...(await Promise.all([startServe(), startServe()])));
}, 60_000);

afterAll(async () => {
  for (const { child } of servers) child.kill('SIGKILL');
  temp.cleanup();
});

describe('the Python client against live memvault serve processes', () => {
  it('passes its unittest suite: conformance, retries, many clients, refusals', async () => {
    const reference = (await memoryVault()).vault;
    await seedConformance(reference, 'ref');
    const expected = await runConformance(viaToolRunner(reference, 'ref'));
    const unknown = expected.findIndex((o) => o.step === 'unknown-command');
    // The service answers what vault.run gives where toolRunner answers by itself (conformance.test.ts).
    expected[unknown] = {
      ...expected[unknown]!,
      text: (await reference.run('ref', { command: 'chmod', path: '/memories/a.md' })).content as string,
    };
    await reference.close();
    const file = join(temp.dir, 'conformance.json');
    writeFileSync(
      file,
      JSON.stringify({ steps: CONFORMANCE_STEPS.map(({ step, input }) => ({ step, input })), expected, users: USERS }),
    );
    const { code, output } = await runPython({
      MEMVAULT_URL_A: servers[0]!.url,
      MEMVAULT_URL_B: servers[1]!.url,
      MEMVAULT_API_KEY: serviceKey.key,
      MEMVAULT_CONFORMANCE: file,
    });
    expect(output).toMatch(/Ran 6 tests/);
    expect(code, output).toBe(0);
  }, 60_000);

  it('SIGTERM stops a server cleanly (exit 0), the other keeps serving', async () => {
    const [first, second] = servers as [(typeof servers)[0], (typeof servers)[0]];
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    const response = await fetch(`${second.url}/readyz`);
    expect(response.status).toBe(200);
  });
});
