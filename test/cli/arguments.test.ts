/**
 * Through the real CLI: the flags are checked by the API's checkers
 * (src/util/validate.ts) and an invalid one is exit 2, one line, and nothing changed. `--actor`
 * with an e-mail address was accepted and silently dropped from the audit record before.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { snapshot } from '../kit/stores.js';
import { ONE_LINE, runCli } from './helpers.js';

vi.setConfig({ testTimeout: 180_000 });

let cwd: string;
let storeDir: string;
const env = { MEMVAULT_MASTER_KEY: randomBytes(32).toString('base64') };

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'memvault-cli-args-'));
  storeDir = join(cwd, 'data');
  const input = [
    '{"command":"create","path":"/memories/a.md","file_text":"one"}',
    '{"command":"create","path":"/memories/a.md","file_text":"two"}',
  ].join('\n');
  const seeded = await runCli(['exec', '--user', 'ann', '--store', `file://${storeDir}`], { cwd, env, input });
  expect(seeded.code, seeded.stderr).toBe(0);
}, 180_000);
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function stored(): Promise<Map<string, string>> {
  const store = await FileStore.open(storeDir);
  try {
    return await snapshot(store);
  } finally {
    await store.close();
  }
}

const store = () => ['--store', `file://${storeDir}`];

describe('CLI flags are checked like the API arguments', () => {
  it.each([
    [
      'user forget --actor with an e-mail address',
      ['user', 'forget', '--user', 'ann', '--actor', 'ops@example.com'],
      /--actor must be/,
    ],
    ['user restore --as-of nonsense', ['user', 'restore', '--user', 'ann', '--as-of', 'yesterday-ish'], /--as-of/],
    [
      'user restore --path outside /memories',
      ['user', 'restore', '--user', 'ann', '--as-of', '2020-01-01T00:00:00Z', '--path', '/etc/passwd'],
      /path/,
    ],
    [
      'user drop-version --seq 1.5',
      ['user', 'drop-version', '--user', 'ann', '--path', '/memories/a.md', '--seq', '1.5'],
      /--seq must be a whole number >= 1/,
    ],
    [
      'keys rekey --settle-seconds -5',
      ['keys', 'rekey', '--user', 'ann', '--settle-seconds', '-5'],
      /--settle-seconds must be a whole number >= 0/,
    ],
  ])('%s: exit 2, one line, the store unchanged', async (_name, args, message) => {
    const before = await stored();
    const r = await runCli([...args, ...store()], { cwd, env });
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(await stored()).toEqual(before);
  });
});
