/**
 * Every CLI command reads the S3 settings through the one resolver (store/s3/settings.ts).
 * Here the right credentials are given ONLY as MEMVAULT_S3_ACCESS_KEY_ID/SECRET and the AWS SDK's own
 * chain is given wrong ones: before, exec, user, keys and audit built their client from a resolver
 * that knew no credentials, so the SDK signed with the wrong keys and radosgw refused them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../cli/helpers.js';
import { recordS3SuiteRun, s3Connection, s3SkipReason, s3Url } from './helpers.js';

const connection = s3Connection();
recordS3SuiteRun(import.meta.url);

describe.skipIf(!connection)(
  `CLI commands on radosgw read the same S3 settings${connection ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    let cwd: string;
    let url: string;
    let env: Record<string, string>;
    const cli = (args: string[]): Promise<CliResult> => runCli(args, { cwd, env });

    beforeAll(() => {
      cwd = mkdtempSync(join(tmpdir(), 'memvault-cli-s3-'));
      url = s3Url(`cli-settings-${randomBytes(3).toString('hex')}`);
      env = {
        MEMVAULT_S3_ENDPOINT: connection!.endpoint,
        MEMVAULT_S3_REGION: connection!.region,
        MEMVAULT_S3_ACCESS_KEY_ID: connection!.accessKeyId,
        MEMVAULT_S3_SECRET_ACCESS_KEY: connection!.secretAccessKey,
        // The SDK's chain holds other keys: a command that ignored MEMVAULT_S3_* would sign with these.
        AWS_ACCESS_KEY_ID: 'AKIAWRONGWRONGWRONG0',
        AWS_SECRET_ACCESS_KEY: 'wrong-secret',
        AWS_EC2_METADATA_DISABLED: 'true',
        MEMVAULT_MASTER_KEY: randomBytes(32).toString('base64'),
        MEMVAULT_CREATE_KEY_FILE: '0',
      };
    });
    afterAll(() => rmSync(cwd, { recursive: true, force: true }));

    it('exec writes and reads a memory file', async () => {
      const audit = join(cwd, 'audit.jsonl');
      const created = await cli([
        'exec',
        '--user',
        'alice',
        '--store',
        url,
        '--audit-file',
        audit,
        '{"command":"create","path":"/memories/a.md","file_text":"hello"}',
      ]);
      expect(created.stderr).not.toMatch(/^memvault: /m);
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ is_error: false });
      const viewed = await cli([
        'exec',
        '--user',
        'alice',
        '--store',
        url,
        '{"command":"view","path":"/memories/a.md"}',
      ]);
      expect(viewed.code).toBe(0);
      expect(viewed.stdout).toContain('hello');
    });

    it('keys verify opens the key records', async () => {
      const r = await cli(['keys', 'verify', '--store', url, '--json']);
      expect(r.stderr).not.toMatch(/^memvault: /m);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ failed: [] });
    });

    it('user export writes the archive', async () => {
      const out = join(cwd, 'alice.tar');
      const r = await cli(['user', 'export', '--user', 'alice', '--store', url, '--out', out, '--json']);
      expect(r.stderr).not.toMatch(/^memvault: /m);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ files: 1 });
    });

    it('audit verify loads the audit key from the S3 data store', async () => {
      const r = await cli(['audit', 'verify', join(cwd, 'audit.jsonl'), '--data-store', url]);
      expect(r.stderr).not.toMatch(/^memvault: /m);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/authenticated seq 1-/);
    });

    it('expire sweeps the prefix (dry run)', async () => {
      const r = await cli(['expire', '--store', url, '--ttl-days', '30', '--dry-run', '--json']);
      expect(r.stderr).not.toMatch(/^memvault: /m);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ scanned: 1, expired: 0, errors: 0 });
    });

    it('doctor reads the bucket configuration with those credentials', async () => {
      const r = await cli(['doctor', '--store', url, '--no-probes', '--json']);
      const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }> };
      const versioning = report.checks.find((c) => c.id === 'versioning');
      expect(versioning?.status).not.toBe('unknown');
      expect(r.stdout).not.toMatch(/credentials were rejected|access denied/);
    });

    it('user forget erases the user', async () => {
      const r = await cli(['user', 'forget', '--user', 'alice', '--store', url, '--json']);
      expect(r.stderr).not.toMatch(/^memvault: /m);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ keyDeleted: true, objectsDeleted: 2 }); // the file and its version (history on by default)
    });
  },
);
