// Two servers (each with a vault of its own: no shared locks, only S3's conditional writes between
// them) on one radosgw prefix: concurrent clients lose no acknowledged edit, and an Idempotency-Key
// sent to both at once runs its command once. Skips where no S3 server runs (CI requires one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { recordS3SuiteRun, s3Available, s3ClientConfig, s3SkipReason, suiteStoresWithUrl } from './helpers.js';
import { serviceKey, startIdp, testServer, type TestIdp } from '../serve/helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `two servers on one S3 store${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const nextStore = suiteStoresWithUrl('serve');
    let idp: TestIdp;
    const servers: { server: MemvaultServer; vault: Vault; url: string }[] = [];

    beforeAll(async () => {
      idp = await startIdp();
      const { url } = await nextStore();
      const options = {
        store: url,
        s3: s3ClientConfig(),
        encryption: { masterKey: Buffer.alloc(32, 11).toString('base64') },
      };
      for (let i = 0; i < 2; i++) {
        const vault = await createVault(options);
        const { server } = await testServer(idp, { rateLimit: false }, vault);
        servers.push({ server, vault, url: await server.listen({ port: 0 }) });
      }
    });

    afterAll(async () => {
      for (const { server, vault } of servers) {
        await server.close();
        await vault.close();
      }
      await idp?.close();
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

    it('32 concurrent clients over both servers lose no acknowledged edit; a key runs once', async () => {
      const [a, b] = servers.map((s) => s.url) as [string, string];
      await post(a, { command: 'create', path: '/memories/s.md', file_text: 'head\n' });
      const answers = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          post(i % 2 ? a : b, { command: 'insert', path: '/memories/s.md', insert_line: 1, insert_text: `edit-${i}` }),
        ),
      );
      const acknowledged = answers.flatMap((answer, i) => (answer.status === 200 && !answer.body.is_error ? [i] : []));
      expect(acknowledged.length).toBeGreaterThan(8);
      const key = 'same-key-on-s3-0123456789';
      const insert = { command: 'insert', path: '/memories/s.md', insert_line: 0, insert_text: 'keyed' };
      const keyed = await Promise.all([post(a, insert, key), post(b, insert, key)]);
      for (const answer of keyed) expect([200, 409]).toContain(answer.status);
      const text = (await post(b, { command: 'view', path: '/memories/s.md' })).body.content;
      for (const i of acknowledged) expect(`${text}\n`).toContain(`\tedit-${i}\n`);
      for (let i = 0; i < 32; i++) if (!acknowledged.includes(i)) expect(`${text}\n`).not.toContain(`\tedit-${i}\n`);
      expect(`${text}\n`.match(/\tkeyed\n/g)).toHaveLength(1);
    }, 120_000);
  },
);
