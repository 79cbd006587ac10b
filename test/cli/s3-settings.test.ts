/**
 * Every CLI command resolves its S3 client through the one resolver (store/s3/settings.ts).
 * A MEMVAULT_S3_FORCE_PATH_STYLE that means nothing is refused by each of them as a configuration
 * error (exit 2) before any request; before, exec, chat, user, keys and audit read it through the
 * CLI's own resolver, which took any unknown word for "false" and went on. (Radosgw runs of the same
 * commands with credentials given only as MEMVAULT_S3_*: test/s3/cli-settings.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_LINE, runCli } from './helpers.js';

const STORE = 's3://memvault-nobucket/p';
const REFUSAL = 'memvault: MEMVAULT_S3_FORCE_PATH_STYLE must be 1/true or 0/false\n';

let cwd: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'memvault-cli-settings-'));
  writeFileSync(join(cwd, 'audit.jsonl'), '');
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const commands: Array<[string, string[]]> = [
  ['exec', ['exec', '--user', 'alice', '--store', STORE, '{"command":"view","path":"/memories"}']],
  ['chat', ['chat', '--user', 'alice', '--store', STORE]],
  ['user forget', ['user', 'forget', '--user', 'alice', '--store', STORE]],
  ['user export', ['user', 'export', '--user', 'alice', '--store', STORE, '--out', 'alice.tar']],
  ['keys rotate', ['keys', 'rotate', '--store', STORE, '--to-master-key-file', 'new.key']],
  ['keys verify', ['keys', 'verify', '--store', STORE]],
  ['audit verify --store', ['audit', 'verify', '--store', STORE]],
  [
    'audit export --user (data store)',
    [
      'audit',
      'export',
      'audit.jsonl',
      '--user',
      'alice',
      '--data-store',
      STORE,
      '--from',
      '2026-01-01',
      '--to',
      '2026-01-02',
      '--out',
      'x.jsonl',
    ],
  ],
  ['expire', ['expire', '--store', STORE, '--ttl-days', '30']],
  ['doctor', ['doctor', '--store', STORE]],
];

describe('every CLI command reads MEMVAULT_S3_* through the one resolver', () => {
  it.each(commands)(
    '%s refuses an unknown MEMVAULT_S3_FORCE_PATH_STYLE with exit 2, sending nothing',
    async (_name, args) => {
      const r = await runCli(args, {
        cwd,
        env: {
          MEMVAULT_S3_FORCE_PATH_STYLE: 'sometimes',
          MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9',
          MEMVAULT_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
          ANTHROPIC_API_KEY: 'sk-test-not-used',
        },
      });
      expect(r.stderr).toMatch(ONE_LINE);
      expect(r.stderr).toBe(REFUSAL);
      expect(r.code).toBe(2);
    },
  );
});
