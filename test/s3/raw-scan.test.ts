import { randomBytes } from 'node:crypto';
import { GetObjectCommand, GetObjectTaggingCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import {
  emptyStore,
  makeS3Store,
  recordS3SuiteRun,
  s3Available,
  s3ClientConfig,
  s3Connection,
  s3SkipReason,
  s3Url,
  RUN_PREFIX,
} from './helpers.js';

recordS3SuiteRun(import.meta.url);

/**
 * No plaintext in the bucket, on the real server: after a workload through RGW, nothing a bucket reader
 * can see (object keys, metadata, tags, bodies) holds any of the workload's file contents, file
 * names or user ids. Unique strings are planted in each and grepped for in the raw bytes.
 */
describe.skipIf(!s3Available())(`raw bucket scan on RGW${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`, () => {
  const prefix = `raw-scan-${randomBytes(3).toString('hex')}`;
  afterAll(async () => {
    const store = makeS3Store(prefix);
    await emptyStore(store);
    await store.close();
  });

  it('finds no planted content, file name or user id in keys, metadata, tags or bodies', async () => {
    const planted = {
      user: 'RAWPLANTUSER.jane@example.com',
      dir: 'RAWPLANTDIR',
      file: 'RAWPLANTFILE',
      text: 'RAWPLANTTEXT',
      renamed: 'RAWPLANTMOVED',
    };
    const vault = await createVault({
      store: s3Url(prefix),
      s3: s3ClientConfig(),
      encryption: { masterKey: randomBytes(32).toString('base64') },
      expiry: { ttlDays: 30, classes: { RAWPLANTCLASS: 90 }, classOf: () => 'RAWPLANTCLASS' },
    });
    const run = async (input: Record<string, unknown>) => {
      const r = await vault.run(planted.user, input);
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
      return r;
    };
    for (let i = 0; i < 4; i++)
      await run({
        command: 'create',
        path: `/memories/${planted.dir}/${planted.file}${i}.md`,
        file_text: `${planted.text} number ${i}\n`,
      });
    await run({
      command: 'str_replace',
      path: `/memories/${planted.dir}/${planted.file}0.md`,
      old_str: 'number 0',
      new_str: `${planted.text} edited`,
    });
    await run({
      command: 'insert',
      path: `/memories/${planted.dir}/${planted.file}1.md`,
      insert_line: 1,
      insert_text: `${planted.text} inserted`,
    });
    await run({
      command: 'rename',
      old_path: `/memories/${planted.dir}/${planted.file}2.md`,
      new_path: `/memories/${planted.renamed}/${planted.file}2.md`,
    });
    await run({ command: 'rename', old_path: `/memories/${planted.dir}`, new_path: `/memories/${planted.renamed}2` });
    const seen = await run({ command: 'view', path: `/memories/${planted.renamed}2/${planted.file}0.md` });
    expect(JSON.stringify(seen.content)).toContain(`${planted.text} edited`);
    await vault.close();

    const connection = s3Connection()!;
    const client = new S3Client(s3ClientConfig());
    const haystack: string[] = [];
    let objects = 0;
    try {
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket: connection.bucket,
            Prefix: `${RUN_PREFIX}/${prefix}/`,
            ContinuationToken: token,
          }),
        );
        for (const item of page.Contents ?? []) {
          objects += 1;
          haystack.push(item.Key!);
          const object = await client.send(new GetObjectCommand({ Bucket: connection.bucket, Key: item.Key! }));
          haystack.push(
            JSON.stringify(object.Metadata ?? {}),
            object.ContentType ?? '',
            object.ContentDisposition ?? '',
          );
          haystack.push(Buffer.from(await object.Body!.transformToByteArray()).toString('latin1'));
          const tags = await client.send(new GetObjectTaggingCommand({ Bucket: connection.bucket, Key: item.Key! }));
          haystack.push(JSON.stringify(tags.TagSet ?? []));
        }
        token = page.NextContinuationToken;
      } while (token);
    } finally {
      client.destroy();
    }
    // Keys: the deployment record, the user's key, the class marker and the five files.
    expect(objects).toBeGreaterThanOrEqual(7);
    const all = haystack.join('\n');
    for (const needle of [
      'RAWPLANTUSER',
      'jane@example.com',
      'RAWPLANTDIR',
      'RAWPLANTFILE',
      'RAWPLANTTEXT',
      'RAWPLANTMOVED',
      'number',
      'inserted',
      'edited',
    ]) {
      expect(all, needle).not.toContain(needle);
    }
  });
});
