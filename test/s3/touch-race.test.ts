/**
 * A read's touch racing another instance's edit on a real S3 server (radosgw).
 * Before touches were conditional, a touch was a CopyObject onto itself with the metadata its read
 * saw: RGW copied the newer body under the older version record (the file no longer opened) and
 * restated the TTL-class tag in a second request. The cases are test/kit/touch-race.ts.
 */
import { GetObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, it } from 'vitest';
import { parseS3Url, type S3Store } from '../../src/store/s3.js';
import { editHeldPastATouch, touchesAgainstInserts, touchHeldPastAnEdit, type TagsOf } from '../kit/touch-race.js';
import { recordS3SuiteRun, s3Available, s3ClientConfig, s3SkipReason, suiteStoresWithUrl } from './helpers.js';

recordS3SuiteRun(import.meta.url);

describe.skipIf(!s3Available())(
  `a touch racing an edit on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const nextStore = suiteStoresWithUrl('touch-race');
    let admin: S3Client | undefined;
    afterAll(() => admin?.destroy());

    async function setup(): Promise<{ store: S3Store; tagsOf: TagsOf }> {
      admin ??= new S3Client(s3ClientConfig());
      const client = admin;
      const { store, url } = await nextStore();
      const { bucket, prefix } = parseS3Url(url);
      const tagsOf: TagsOf = async (key) => {
        const { TagSet } = await client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: `${prefix}/${key}` }));
        return Object.fromEntries((TagSet ?? []).map((t) => [t.Key!, t.Value!]));
      };
      return { store, tagsOf };
    }

    it('a touch held until an insert landed loses: the insert stays whole, the tag stays', async () => {
      const { store, tagsOf } = await setup();
      await touchHeldPastAnEdit(store, tagsOf);
    });

    it('an insert held until a touch landed still lands whole', async () => {
      const { store, tagsOf } = await setup();
      await editHeldPastATouch(store, tagsOf);
    });

    it(
      '12 files, 3 rounds of touching reads against inserts in flight together: nothing lost',
      { timeout: 120_000 },
      async () => {
        const { store, tagsOf } = await setup();
        await touchesAgainstInserts(store, tagsOf, 12, 3);
      },
    );
  },
);
