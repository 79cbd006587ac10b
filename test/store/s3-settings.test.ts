/**
 * One resolver of S3 client settings (store/s3/settings.ts). The CLI had a second one
 * (cli/config.ts s3ConfigFrom: no credentials, any unknown path-style word meant false, region from
 * AWS_DEFAULT_REGION) that exec, user, keys and audit used alone while expire and doctor merged both.
 */
import { describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { openS3Store } from '../../src/store/open-s3.js';
import { buildS3Client, type S3Store } from '../../src/store/s3.js';
import { resolveS3Settings, s3ConfigFromEnv } from '../../src/store/s3/settings.js';

describe('s3ConfigFromEnv', () => {
  it('path style: 1/true/yes and 0/false/no in any case; by default on when an endpoint is given, unset without one', () => {
    for (const word of ['1', 'true', 'TRUE', ' yes '])
      expect(s3ConfigFromEnv({ MEMVAULT_S3_FORCE_PATH_STYLE: word }).forcePathStyle).toBe(true);
    for (const word of ['0', 'false', 'No'])
      expect(s3ConfigFromEnv({ MEMVAULT_S3_FORCE_PATH_STYLE: word }).forcePathStyle).toBe(false);
    expect(s3ConfigFromEnv({ MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9' })).toEqual({
      endpoint: 'http://127.0.0.1:9',
      forcePathStyle: true,
    });
    expect(
      s3ConfigFromEnv({ MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9', MEMVAULT_S3_FORCE_PATH_STYLE: '0' }).forcePathStyle,
    ).toBe(false);
    expect(s3ConfigFromEnv({ MEMVAULT_S3_FORCE_PATH_STYLE: '' })).toEqual({});
  });

  it('an unknown path-style word is a configuration error naming the variable, never a silent false', () => {
    let error: unknown;
    try {
      s3ConfigFromEnv({ MEMVAULT_S3_FORCE_PATH_STYLE: 'maybe' });
    } catch (e) {
      error = e;
    }
    expect(isMemvaultError(error, 'CONFIG')).toBe(true);
    expect((error as Error).message).toBe('MEMVAULT_S3_FORCE_PATH_STYLE must be 1/true or 0/false');
  });

  it('region: MEMVAULT_S3_REGION, else AWS_DEFAULT_REGION unless AWS_REGION (which the SDK reads itself) is set', () => {
    expect(s3ConfigFromEnv({ MEMVAULT_S3_REGION: 'eu-west-3', AWS_DEFAULT_REGION: 'us-west-2' }).region).toBe(
      'eu-west-3',
    );
    expect(s3ConfigFromEnv({ AWS_DEFAULT_REGION: 'us-west-2' }).region).toBe('us-west-2');
    expect(s3ConfigFromEnv({ AWS_DEFAULT_REGION: 'us-west-2', AWS_REGION: 'ap-south-1' }).region).toBeUndefined();
  });

  it('credentials: both halves or neither', () => {
    expect(s3ConfigFromEnv({ MEMVAULT_S3_ACCESS_KEY_ID: 'a', MEMVAULT_S3_SECRET_ACCESS_KEY: 'b' }).credentials).toEqual(
      {
        accessKeyId: 'a',
        secretAccessKey: 'b',
      },
    );
    expect(() => s3ConfigFromEnv({ MEMVAULT_S3_SECRET_ACCESS_KEY: 'b' })).toThrow(/must be set together/);
  });
});

describe('resolveS3Settings', () => {
  const env = {
    MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9',
    MEMVAULT_S3_REGION: 'eu-west-3',
    MEMVAULT_S3_ACCESS_KEY_ID: 'a',
    MEMVAULT_S3_SECRET_ACCESS_KEY: 'b',
  };

  it("the host's config wins key by key over the environment", () => {
    expect(resolveS3Settings({ region: 'us-east-2', forcePathStyle: false }, env)).toEqual({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-2',
      forcePathStyle: false,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    expect(resolveS3Settings(undefined, {})).toEqual({});
  });

  it("the host's own client is used as it is (the environment is not even read)", () => {
    const client = buildS3Client({ region: 'us-east-1' });
    try {
      expect(resolveS3Settings(client, { MEMVAULT_S3_FORCE_PATH_STYLE: 'maybe' })).toBe(client);
    } finally {
      client.destroy();
    }
  });

  it('openStore and openS3Store build the client from those settings (no request is sent)', async () => {
    const viaOpenStore = (await openStore('s3://bucket/p', { env, s3: { region: 'us-east-2' } })) as S3Store;
    const viaOpenS3Store = await openS3Store('s3://bucket/p', { env });
    try {
      expect(await viaOpenStore.client.config.region()).toBe('us-east-2');
      expect(await viaOpenS3Store.client.config.region()).toBe('eu-west-3');
      for (const store of [viaOpenStore, viaOpenS3Store]) {
        expect(store.client.config.forcePathStyle).toBe(true);
        expect((await store.client.config.credentials()).accessKeyId).toBe('a');
        const endpoint = await store.client.config.endpoint?.();
        expect(endpoint?.hostname).toBe('127.0.0.1');
      }
    } finally {
      await viaOpenStore.close();
      await viaOpenS3Store.close();
    }
    await expect(openS3Store('file:///tmp/x')).rejects.toThrow(/store URL must be/);
  });
});
