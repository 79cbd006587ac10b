/**
 * The AWS KMS key provider. Data keys come from GenerateDataKey (AES_256 = 32 bytes) and are opened
 * with Decrypt; Encrypt wraps an existing secret (the deployment secret, and every key during a
 * rotation onto KMS). Each request carries the encryption context
 * `{ 'memvault:deployment': id, 'memvault:uid': uid, 'memvault:key-version': n }`, so a wrapped key
 * copied to another user's record, or to another deployment on the same KMS key, does not decrypt, and CloudTrail shows which pseudonymous user a key request was for.
 */
import type * as KmsSdkModule from '@aws-sdk/client-kms';
import type { DecryptCommandOutput, EncryptCommandOutput, GenerateDataKeyCommandOutput } from '@aws-sdk/client-kms';
import { MemvaultError } from '../errors.js';
import { KEY_BYTES } from './format.js';
import type { GeneratedDataKey, KeyProvider, WrapContext } from './key-provider.js';

export interface KmsKeyProviderOptions {
  /** Key id, key ARN, alias name or alias ARN of a symmetric encryption key. */
  keyId: string;
  /**
   * A configured KMSClient (region, credentials, endpoint); one is made from the environment
   * otherwise. Used by its `send` alone, so the app's own copy of @aws-sdk/client-kms works.
   */
  client?: KmsClientLike;
}

/** What memvault needs of a KMSClient: its `send`. Every KMSClient of SDK v3 has this shape. */
export interface KmsClientLike {
  send(command: object): Promise<unknown>;
}

type KmsSdk = typeof KmsSdkModule;
let kmsSdk: Promise<KmsSdk> | undefined;

/**
 * @aws-sdk/client-kms is an optional peer dependency, loaded on the first KMS call: a deployment
 * with a local master key never loads (or needs) it.
 */
function loadKmsSdk(): Promise<KmsSdk> {
  kmsSdk ??= import('@aws-sdk/client-kms').catch((e: unknown) => {
    kmsSdk = undefined;
    throw new MemvaultError(
      'CONFIG',
      'Error: AWS KMS is configured but the @aws-sdk/client-kms package is not installed (npm install @aws-sdk/client-kms).',
      {
        cause: e,
      },
    );
  });
  return kmsSdk;
}

export function kmsEncryptionContext(context: WrapContext): Record<string, string> {
  return {
    'memvault:deployment': context.deploymentId,
    'memvault:uid': context.uid,
    'memvault:key-version': String(context.keyVersion),
  };
}

type KmsOperation = 'GenerateDataKey' | 'Decrypt' | 'Encrypt';

/** The SDK's error name when it is an identifier (it is shown), else a neutral word. */
function errorName(e: unknown): string {
  const name = typeof e === 'object' && e !== null && 'name' in e ? e.name : undefined;
  return typeof name === 'string' && /^[A-Za-z][A-Za-z0-9]{0,63}$/.test(name) ? name : 'UnknownError';
}

/** How every message names the key: the operator knows which one is configured, the model need not. */
const KEY = 'the configured AWS KMS key';

/**
 * Clear messages for what an operator can fix. They reach the model too (a user's key is opened
 * during a command), so they name no key id, ARN, alias, account or region: AWS's own message,
 * which carries them, is kept only as the cause (for the host's logs, never shown).
 */
export function mapKmsError(e: unknown, operation: KmsOperation): MemvaultError {
  const name = errorName(e);
  const fail = (message: string) =>
    new MemvaultError(
      'KEY_UNAVAILABLE',
      `Error: AWS KMS could not open or create the memory key: ${message} Nothing was changed.`,
      { cause: e },
    );
  switch (name) {
    case 'InvalidCiphertextException':
      return new MemvaultError(
        'INTEGRITY',
        'Error: A wrapped key did not decrypt with AWS KMS: the key record is damaged or was moved from another user.',
        {
          cause: e,
        },
      );
    case 'IncorrectKeyException':
      return fail(`a wrapped key was encrypted under a different KMS key than ${KEY}.`);
    case 'NotFoundException':
    case 'InvalidArnException':
      return fail(`${KEY} does not exist (check the key id, alias and region).`);
    case 'DisabledException':
      return fail(`${KEY} is disabled; enable it to use memvault.`);
    case 'KMSInvalidStateException':
      return fail(`${KEY} is not usable in its current state (pending deletion or import?).`);
    case 'AccessDeniedException':
      return fail(`access to ${KEY} was denied for kms:${operation}; grant it in the key policy or IAM policy.`);
    case 'InvalidKeyUsageException':
      return fail(`${KEY} cannot be used for kms:${operation}: it must be a symmetric ENCRYPT_DECRYPT key.`);
    case 'CredentialsProviderError':
      return fail('no AWS credentials were found for KMS; configure credentials for the process.');
    case 'KeyUnavailableException':
    case 'DependencyTimeoutException':
    case 'KMSInternalException':
    case 'ThrottlingException':
    case 'LimitExceededException':
      return new MemvaultError(
        'KEY_UNAVAILABLE',
        `Error: AWS KMS is unavailable right now (${name}); please try again.`,
        { cause: e },
      );
    default:
      return new MemvaultError('KEY_UNAVAILABLE', `Error: AWS KMS ${operation} failed (${name}); please try again.`, {
        cause: e,
      });
  }
}

class KmsKeyProvider implements KeyProvider {
  readonly kind = 'kms' as const;
  readonly keyId: string;
  private client: KmsClientLike | undefined;

  constructor(options: KmsKeyProviderOptions) {
    if (!options.keyId)
      throw new MemvaultError('CONFIG', 'A KMS key id is required (kms.keyId or MEMVAULT_KMS_KEY_ID).');
    this.keyId = options.keyId;
    this.client = options.client;
  }

  private async kms(): Promise<{ sdk: KmsSdk; client: KmsClientLike }> {
    const sdk = await loadKmsSdk();
    this.client ??= new sdk.KMSClient({});
    return { sdk, client: this.client };
  }

  async generateDataKey(context: WrapContext): Promise<GeneratedDataKey> {
    const { sdk, client } = await this.kms();
    let out: GenerateDataKeyCommandOutput;
    try {
      out = (await client.send(
        new sdk.GenerateDataKeyCommand({
          KeyId: this.keyId,
          KeySpec: 'AES_256',
          EncryptionContext: kmsEncryptionContext(context),
        }),
      )) as GenerateDataKeyCommandOutput;
    } catch (e) {
      throw mapKmsError(e, 'GenerateDataKey');
    }
    if (!out.Plaintext || out.Plaintext.byteLength !== KEY_BYTES || !out.CiphertextBlob) {
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        'Error: AWS KMS GenerateDataKey returned an unexpected answer; please try again.',
      );
    }
    return { plaintext: out.Plaintext, wrapped: out.CiphertextBlob };
  }

  async wrap(dataKey: Uint8Array, context: WrapContext): Promise<Uint8Array> {
    const { sdk, client } = await this.kms();
    let out: EncryptCommandOutput;
    try {
      out = (await client.send(
        new sdk.EncryptCommand({
          KeyId: this.keyId,
          Plaintext: dataKey,
          EncryptionContext: kmsEncryptionContext(context),
        }),
      )) as EncryptCommandOutput;
    } catch (e) {
      throw mapKmsError(e, 'Encrypt');
    }
    if (!out.CiphertextBlob)
      throw new MemvaultError('KEY_UNAVAILABLE', 'Error: AWS KMS Encrypt returned no ciphertext; please try again.');
    return out.CiphertextBlob;
  }

  async unwrap(wrapped: Uint8Array, context: WrapContext): Promise<Uint8Array> {
    const { sdk, client } = await this.kms();
    let out: DecryptCommandOutput;
    try {
      out = (await client.send(
        new sdk.DecryptCommand({
          KeyId: this.keyId,
          CiphertextBlob: wrapped,
          EncryptionContext: kmsEncryptionContext(context),
        }),
      )) as DecryptCommandOutput;
    } catch (e) {
      throw mapKmsError(e, 'Decrypt');
    }
    if (!out.Plaintext || out.Plaintext.byteLength !== KEY_BYTES) {
      throw new MemvaultError(
        'INTEGRITY',
        'Error: AWS KMS returned a key of the wrong length: the key record is not a memvault key.',
      );
    }
    return out.Plaintext;
  }
}

export function createKmsKeyProvider(options: KmsKeyProviderOptions): KeyProvider {
  return new KmsKeyProvider(options);
}
