/**
 * Shared plumbing for the S3 suites: the connection provided by test/setup/rgw.ts, stores under a
 * per-run prefix, and the "this suite really ran" marker that CI checks.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { afterAll, inject } from 'vitest';
import { listAll } from '../../src/store/port.js';
import { createS3Store, type ConditionChecks, type S3Store } from '../../src/store/s3.js';
import { recordSuiteRun } from '../kit/suite-marker.js';
import type { S3TestConnection } from '../setup/rgw.js';

/** The S3 server of this run, or null when the S3 suites skip. */
export function s3Connection(): S3TestConnection | null {
  // inject() is undefined when the globalSetup is not registered in the vitest config.
  const provided = inject('memvaultS3') as S3TestConnection | null | undefined;
  if (provided) return provided;
  if (provided === undefined && process.env.MEMVAULT_S3_ENDPOINT) {
    return {
      endpoint: process.env.MEMVAULT_S3_ENDPOINT,
      bucket: process.env.MEMVAULT_S3_BUCKET ?? 'memvault-test',
      region: process.env.MEMVAULT_S3_REGION ?? 'us-east-1',
      accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
      source: 'env',
    };
  }
  if (provided === undefined && process.env.CI) {
    throw new Error('S3 suites under CI need test/setup/rgw.ts in the vitest globalSetup (or MEMVAULT_S3_ENDPOINT)');
  }
  return null;
}

export function s3Available(): boolean {
  return s3Connection() !== null;
}

export function s3SkipReason(): string {
  return (
    (inject('memvaultS3SkipReason') as string | undefined) ??
    'test/setup/rgw.ts is not a globalSetup of this vitest config'
  );
}

export function s3ClientConfig(connection: S3TestConnection = requireConnection()): S3ClientConfig {
  return {
    endpoint: connection.endpoint,
    region: connection.region,
    forcePathStyle: true,
    credentials: { accessKeyId: connection.accessKeyId, secretAccessKey: connection.secretAccessKey },
  };
}

function requireConnection(): S3TestConnection {
  const connection = s3Connection();
  if (!connection) throw new Error('no S3 server in this run');
  return connection;
}

/** A prefix unique to this test process, so that files and reruns never see each other's keys. */
/** The environment of a worker process that opens a vault on this run's S3 server (read by its MEMVAULT_S3_* settings). */
export function s3WorkerEnv(masterKey: string, connection: S3TestConnection = requireConnection()): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MEMVAULT_S3_ENDPOINT: connection.endpoint,
    MEMVAULT_S3_REGION: connection.region,
    MEMVAULT_S3_ACCESS_KEY_ID: connection.accessKeyId,
    MEMVAULT_S3_SECRET_ACCESS_KEY: connection.secretAccessKey,
    MEMVAULT_TEST_MASTER_KEY: masterKey,
  };
}

export const RUN_PREFIX = `t-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

export function s3Url(prefix: string): string {
  const connection = requireConnection();
  return `s3://${connection.bucket}/${RUN_PREFIX}/${prefix}`;
}

export function makeS3Store(prefix: string, options: { conditionChecks?: ConditionChecks } = {}): S3Store {
  return createS3Store({ url: s3Url(prefix), s3: s3ClientConfig(), ...options });
}

/**
 * For a suite, called inside its describe: a fresh store per call, each on a prefix of its own
 * (`label/1`, `label/2`, ...), so that a test's "the store is unchanged" snapshots see only its
 * keys; every one is emptied and closed after the suite (the shared bucket is left as found).
 */
export function suiteStores(label: string): () => Promise<S3Store> {
  const next = suiteStoresWithUrl(label);
  return async () => (await next()).store;
}

/** As suiteStores, with each store's URL (for requests of the test's own: an S3 deleter, an admin client). */
export function suiteStoresWithUrl(label: string): () => Promise<{ store: S3Store; url: string }> {
  const opened: S3Store[] = [];
  afterAll(async () => {
    for (const store of opened) {
      await emptyStore(store);
      await store.close();
    }
  }, 300_000);
  return async () => {
    const prefix = `${label}/${opened.length + 1}`;
    const store = makeS3Store(prefix);
    opened.push(store);
    return { store, url: s3Url(prefix) };
  };
}

/** Delete every object a store can see (its whole prefix). */
export async function emptyStore(store: S3Store): Promise<void> {
  const keys: string[] = [];
  for await (const info of listAll(store, '')) keys.push(info.key);
  const { failed } = await store.deleteMany(keys);
  if (failed.length > 0) throw new Error(`${failed.length} objects could not be deleted`);
}

/**
 * A store on a bucket of its own with no key prefix, for suites that need the whole 1,024-byte key
 * budget (the contract writes a 1,020-byte key). cleanup() empties and removes the bucket.
 */
export async function makeS3StoreInFreshBucket(
  options: { conditionChecks?: ConditionChecks } = {},
): Promise<{ store: S3Store; cleanup(): Promise<void> }> {
  const bucket = `mv-${RUN_PREFIX}-${randomBytes(3).toString('hex')}`.toLowerCase();
  const admin = new S3Client(s3ClientConfig());
  try {
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    admin.destroy();
  }
  const url = `s3://${bucket}`;
  return {
    store: createS3Store({ url, s3: s3ClientConfig(), ...options }),
    cleanup: async () => {
      const sweeper = createS3Store({ url, s3: s3ClientConfig() });
      try {
        await emptyStore(sweeper);
        await sweeper.client.send(new DeleteBucketCommand({ Bucket: bucket }));
      } finally {
        await sweeper.close();
      }
    },
  };
}

/**
 * Call once at the top level of every S3 test file: its pass count goes to .tmp/s3-suite-ran
 * (test/kit/suite-marker.ts). When the suites skip nothing is written, so a CI check of the marker
 * fails.
 */
export function recordS3SuiteRun(fileUrl: string): void {
  recordSuiteRun('s3', fileUrl, s3Available);
}
