import { randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemvaultError } from '../../src/errors.js';
import { mapKmsError } from '../../src/crypto/kms-key.js';
import { createVault } from '../../src/memvault.js';
import { errorResult, scrubInfrastructureDetail } from '../../src/pipeline/error-result.js';
import { MemoryStore } from '../../src/store/memory.js';

const KEY_ID = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const BUCKET = 'acme-prod-memories-4711';
const ENDPOINT = `https://${BUCKET}.s3.eu-west-1.amazonaws.com`;
/** Nothing of these may ever reach the model. */
const SECRETS = [
  'arn:',
  '111122223333',
  '1234abcd',
  KEY_ID,
  'eu-west-1',
  BUCKET,
  'amazonaws',
  'alias/',
  '10.0.3.7',
  '/home/ops',
];

function leaks(text: unknown): string[] {
  const s = typeof text === 'string' ? text : JSON.stringify(text);
  return SECRETS.filter((secret) => s.includes(secret));
}

const awsMessage = `User: arn:aws:iam::111122223333:role/app is not authorized to perform: kms:Decrypt on resource: ${KEY_ID} (alias/prod-memories) via 10.0.3.7:443`;
const awsError = (name: string, message = awsMessage) =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });

const kms = mockClient(KMSClient);
const s3 = mockClient(S3Client);
beforeEach(() => {
  kms.reset();
  s3.reset();
});
afterEach(() => {
  kms.reset();
  s3.reset();
});

/** A KMS stand-in that works (so a deployment can be created), until `failWith` is set. */
function workingKms(): { failWith: (error: Error | undefined) => void } {
  let failure: Error | undefined;
  const blobs = new Map<string, Uint8Array>();
  const blob = (plaintext: Uint8Array) => {
    const b = new Uint8Array(randomBytes(48));
    blobs.set(Buffer.from(b).toString('hex'), new Uint8Array(plaintext));
    return b;
  };
  kms.on(GenerateDataKeyCommand).callsFake(() => {
    if (failure) throw failure;
    const plaintext = new Uint8Array(randomBytes(32));
    return { Plaintext: plaintext, CiphertextBlob: blob(plaintext), KeyId: KEY_ID };
  });
  kms.on(EncryptCommand).callsFake((input: { Plaintext: Uint8Array }) => {
    if (failure) throw failure;
    return { CiphertextBlob: blob(input.Plaintext), KeyId: KEY_ID };
  });
  kms.on(DecryptCommand).callsFake((input: { CiphertextBlob: Uint8Array }) => {
    if (failure) throw failure;
    // A fresh buffer per answer, as from real KMS (memvault wipes what it is given).
    const stored = blobs.get(Buffer.from(input.CiphertextBlob).toString('hex'));
    return { Plaintext: stored && new Uint8Array(stored), KeyId: KEY_ID };
  });
  return { failWith: (error) => (failure = error) };
}

const kmsClient = () => new KMSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });

const KMS_ERROR_NAMES = [
  'AccessDeniedException',
  'NotFoundException',
  'InvalidArnException',
  'DisabledException',
  'KMSInvalidStateException',
  'IncorrectKeyException',
  'InvalidKeyUsageException',
  'CredentialsProviderError',
  'ThrottlingException',
  'KMSInternalException',
  'InvalidCiphertextException',
  'SomethingNew',
  KEY_ID, // an error whose very name is the ARN
  `Error ${ENDPOINT}`,
];

describe('KMS errors name no key, ARN, account, alias or region', () => {
  it('mapKmsError: every error, whatever its AWS message and name, for every operation', () => {
    for (const name of KMS_ERROR_NAMES) {
      for (const operation of ['GenerateDataKey', 'Decrypt', 'Encrypt'] as const) {
        const mapped = mapKmsError(awsError(name), operation);
        expect([name, leaks(mapped.message)]).toEqual([name, []]);
        expect(['KEY_UNAVAILABLE', 'INTEGRITY']).toContain(mapped.code);
      }
    }
    // The operator's hint survives without the key id.
    expect(mapKmsError(awsError('AccessDeniedException'), 'Decrypt').message).toBe(
      'Error: AWS KMS could not open or create the memory key: access to the configured AWS KMS key was denied for kms:Decrypt; grant it in the key policy or IAM policy. Nothing was changed.',
    );
  });

  it('a command whose user key cannot be made or opened answers the model without them (new user, existing user)', async () => {
    const control = workingKms();
    const store = new MemoryStore();
    const open = () => createVault({ store, encryption: { kms: { keyId: KEY_ID, client: kmsClient() } } });
    const vault = await open();
    expect((await vault.run('bob', { command: 'create', path: '/memories/b.md', file_text: 'hi' })).isError).toBe(
      false,
    );
    for (const name of KMS_ERROR_NAMES) {
      control.failWith(awsError(name));
      // A new user: GenerateDataKey fails.
      const fresh = await vault.run(`new-user-${name.length}-${Math.random()}`, { command: 'view', path: '/memories' });
      expect(fresh.isError).toBe(true);
      expect([name, leaks(fresh.content)]).toEqual([name, []]);
      // An existing user in a new process (no cached key): Decrypt fails.
      control.failWith(undefined);
      const other = await open();
      control.failWith(awsError(name));
      const existing = await other.run('bob', { command: 'view', path: '/memories/b.md' });
      expect(existing.isError).toBe(true);
      expect([name, leaks(existing.content)]).toEqual([name, []]);
      control.failWith(undefined);
      await other.close();
    }
    // And through the SDK handlers, as the tool runner calls them.
    control.failWith(awsError('AccessDeniedException'));
    await expect(vault.handlers('carol').view({ command: 'view', path: '/memories' } as never)).rejects.toSatisfy(
      (e: { content?: unknown }) => leaks(e.content).length === 0 && String(e.content).includes('denied'),
    );
    await vault.close();
  });
});

describe('S3 errors name no bucket, endpoint or key', () => {
  it('store failures whose messages and codes carry the bucket and endpoint reach the model as a bare operation and status', async () => {
    const vault = await createVault({
      store: `s3://${BUCKET}/tenant-a`,
      s3: new S3Client({
        region: 'eu-west-1',
        endpoint: ENDPOINT,
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      }),
      encryption: false,
    });
    const s3Failure = (name: string, status: number) =>
      Object.assign(
        new Error(
          `Access Denied for bucket ${BUCKET} at ${ENDPOINT}/tenant-a/u/x (request from 10.0.3.7, role arn:aws:iam::111122223333:role/app)`,
        ),
        {
          name,
          Code: name,
          $metadata: { httpStatusCode: status },
        },
      );
    for (const [name, status] of [
      ['AccessDenied', 403],
      ['NoSuchBucket', 404],
      ['InternalError', 500],
      [`${BUCKET}.s3.eu-west-1.amazonaws.com`, 400],
      [BUCKET, 400],
    ] as const) {
      s3.reset();
      s3.on(ListObjectsV2Command).rejects(s3Failure(name, status));
      s3.on(GetObjectCommand).rejects(s3Failure(name, status));
      s3.on(HeadObjectCommand).rejects(s3Failure(name, status));
      s3.on(PutObjectCommand).rejects(s3Failure(name, status));
      for (const input of [
        { command: 'view', path: '/memories' },
        { command: 'view', path: '/memories/a.md' },
        { command: 'create', path: '/memories/a.md', file_text: 'x' },
        { command: 'str_replace', path: '/memories/a.md', old_str: 'x', new_str: 'y' },
      ]) {
        const result = await vault.run('alice', input);
        expect(result.isError).toBe(true);
        expect([name, input.command, leaks(result.content)]).toEqual([name, input.command, []]);
      }
    }
    // A fault that is not a store error at all (an SDK TypeError with the endpoint in it) is the generic message.
    s3.reset();
    s3.on(ListObjectsV2Command).rejects(new TypeError(`fetch failed for ${ENDPOINT}`));
    const generic = await vault.run('alice', { command: 'view', path: '/memories' });
    expect(leaks(generic.content)).toEqual([]);
    await vault.close();
  });
});

describe('the one error-to-result conversion', () => {
  it("scrubs infrastructure messages; leaves the model's own input in other messages untouched", () => {
    const infra = new MemvaultError(
      'STORE_UNAVAILABLE',
      `S3 GetObject failed at ${ENDPOINT} for ${KEY_ID} (bucket: ${BUCKET}, account 111122223333, file /home/ops/memvault/data, C:\\ops\\data, 10.0.3.7:9000, alias/prod, mrk-1234567890abcdef1234567890abcdef)`,
    );
    const answer = errorResult(infra);
    expect(answer.code).toBe('STORE_UNAVAILABLE');
    expect(leaks(answer.content)).toEqual([]);
    expect(answer.content).toMatch(/^S3 GetObject failed at \[URL\]/);
    expect(scrubInfrastructureDetail('Error: A stored memory file /memories/notes/a.md could not be decrypted')).toBe(
      'Error: A stored memory file /memories/notes/a.md could not be decrypted',
    );
    // A NO_MATCH echo of what the model wrote (an ARN in its own notes) is its own text: unchanged.
    const own = new MemvaultError(
      'NO_MATCH',
      `No replacement was performed, old_str \`${KEY_ID}\` did not appear verbatim in /memories/aws.md.`,
    );
    expect(errorResult(own).content).toBe(own.message);
    let reported: unknown;
    expect(errorResult(new Error(`boom at ${ENDPOINT}`), (e) => (reported = e))).toEqual({
      content: expect.not.stringContaining('amazonaws'),
      isError: true,
      code: 'INTERNAL',
    });
    expect(reported).toBeInstanceOf(Error);
  });
});
