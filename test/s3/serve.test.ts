// Two `memvault serve` processes (the built CLI: no shared locks or caches, only S3's conditional
// writes between them) on one radosgw prefix: 64 concurrent clients lose no acknowledged edit, and
// an Idempotency-Key sent to both at once runs its command once. Skips where no S3 server runs (CI
// requires one).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordS3SuiteRun, s3Available, s3Connection, s3SkipReason, suiteStoresWithUrl } from './helpers.js';
import { serviceKey, startServeProcess, type ServeProcess } from '../serve/helpers.js';

recordS3SuiteRun(import.meta.url);

const CLIENTS = 64;

describe.skipIf(!s3Available())(
  `two serve processes on one S3 store${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const nextStore = suiteStoresWithUrl('serve');
    const servers: ServeProcess[] = [];
    let dir: string;

    beforeAll(async () => {
      const connection = s3Connection()!;
      const { url } = await nextStore();
      dir = mkdtempSync(join(tmpdir(), 'memvault-serve-s3-'));
      const keysFile = join(dir, 'keys.json');
      writeFileSync(keysFile, JSON.stringify({ keys: [serviceKey.entry] }));
      const env = {
        MEMVAULT_S3_ENDPOINT: connection.endpoint,
        MEMVAULT_S3_REGION: connection.region,
        MEMVAULT_S3_ACCESS_KEY_ID: connection.accessKeyId,
        MEMVAULT_S3_SECRET_ACCESS_KEY: connection.secretAccessKey,
        MEMVAULT_MASTER_KEY: Buffer.alloc(32, 11).toString('base64'),
        MEMVAULT_CREATE_KEY_FILE: '0',
      };
      const args = ['--store', url, '--api-keys', keysFile, '--rate-limit', '100000'];
      // The first creates the deployment record; the second opens it.
      servers.push(await startServeProcess(args, env));
      servers.push(await startServeProcess(args, env));
    });

    afterAll(() => {
      for (const { child } of servers) child.kill('SIGKILL');
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function post(url: string, body: unknown, key?: string) {
      const response = await fetch(`${url}/v1/memory`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${serviceKey.key}`,
          'memvault-user': 'sam',
          'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as { content: string; is_error: boolean } };
    }

    it(`${CLIENTS} concurrent clients over both processes lose no acknowledged edit; a key runs once`, async () => {
      const [a, b] = servers.map((s) => s.url) as [string, string];
      await post(a, { command: 'create', path: '/memories/s.md', file_text: 'head\n' });
      const answers = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) =>
          post(i % 2 ? a : b, { command: 'insert', path: '/memories/s.md', insert_line: 1, insert_text: `edit-${i}` }),
        ),
      );
      const acknowledged = answers.flatMap((answer, i) => (answer.status === 200 && !answer.body.is_error ? [i] : []));
      expect(acknowledged.length).toBeGreaterThan(8);
      // Every answer is the edit or a clear refusal, never a 5xx.
      for (const answer of answers) expect(answer.status).toBe(200);
      const key = 'same-key-on-s3-0123456789';
      const insert = { command: 'insert', path: '/memories/s.md', insert_line: 0, insert_text: 'keyed' };
      const keyed = await Promise.all([post(a, insert, key), post(b, insert, key)]);
      for (const answer of keyed) expect([200, 409]).toContain(answer.status);
      const text = (await post(b, { command: 'view', path: '/memories/s.md' })).body.content;
      for (const i of acknowledged) expect(`${text}\n`).toContain(`\tedit-${i}\n`);
      for (let i = 0; i < CLIENTS; i++)
        if (!acknowledged.includes(i)) expect(`${text}\n`).not.toContain(`\tedit-${i}\n`);
      expect(`${text}\n`.match(/\tkeyed\n/g)).toHaveLength(1);
    }, 120_000);
  },
);
