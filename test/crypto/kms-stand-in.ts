/**
 * A stand-in for one AWS KMS key, with the property memvault depends on: a ciphertext opens only
 * with the encryption context it was made with. `host()` is the service's client (GenerateDataKey,
 * Encrypt, Decrypt); `encryptOnly()` is a principal allowed kms:Encrypt and nothing else on the
 * same key, an attacker holding only that grant (it can make ciphertexts that Decrypt accepts, but never
 * decrypt one). Request shapes and permissions only: not evidence about AWS itself.
 */
import { randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import type { KmsClientLike } from '../../src/crypto/kms-key.js';

export const STAND_IN_KEY_ID = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

interface Blob {
  plaintext: Uint8Array;
  context: string;
}

const accessDenied = (operation: string) =>
  Object.assign(new Error(`not authorized to perform kms:${operation}`), { name: 'AccessDeniedException' });

export class KmsStandIn {
  private readonly blobs = new Map<string, Blob>();
  readonly calls: Array<{
    principal: 'host' | 'encrypt-only';
    operation: string;
    context: Record<string, string> | undefined;
  }> = [];

  private seal(plaintext: Uint8Array, context: Record<string, string> | undefined): Uint8Array {
    const blob = new Uint8Array(randomBytes(64));
    this.blobs.set(Buffer.from(blob).toString('hex'), {
      plaintext: new Uint8Array(plaintext),
      context: JSON.stringify(sorted(context)),
    });
    return blob;
  }

  private open(blob: Uint8Array, context: Record<string, string> | undefined): Uint8Array {
    const entry = this.blobs.get(Buffer.from(blob).toString('hex'));
    if (!entry || entry.context !== JSON.stringify(sorted(context))) {
      throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
    }
    return new Uint8Array(entry.plaintext);
  }

  host(): KmsClientLike {
    return {
      send: async (command: object) => {
        if (command instanceof GenerateDataKeyCommand) {
          this.calls.push({
            principal: 'host',
            operation: 'GenerateDataKey',
            context: command.input.EncryptionContext,
          });
          const plaintext = new Uint8Array(randomBytes(32));
          return {
            Plaintext: new Uint8Array(plaintext),
            CiphertextBlob: this.seal(plaintext, command.input.EncryptionContext),
            KeyId: STAND_IN_KEY_ID,
          };
        }
        if (command instanceof EncryptCommand) {
          this.calls.push({ principal: 'host', operation: 'Encrypt', context: command.input.EncryptionContext });
          return {
            CiphertextBlob: this.seal(command.input.Plaintext!, command.input.EncryptionContext),
            KeyId: STAND_IN_KEY_ID,
          };
        }
        if (command instanceof DecryptCommand) {
          this.calls.push({ principal: 'host', operation: 'Decrypt', context: command.input.EncryptionContext });
          return {
            Plaintext: this.open(command.input.CiphertextBlob!, command.input.EncryptionContext),
            KeyId: STAND_IN_KEY_ID,
          };
        }
        throw new Error('unexpected KMS command');
      },
    };
  }

  encryptOnly(): KmsClientLike {
    return {
      send: async (command: object) => {
        if (command instanceof EncryptCommand) {
          this.calls.push({
            principal: 'encrypt-only',
            operation: 'Encrypt',
            context: command.input.EncryptionContext,
          });
          return {
            CiphertextBlob: this.seal(command.input.Plaintext!, command.input.EncryptionContext),
            KeyId: STAND_IN_KEY_ID,
          };
        }
        throw accessDenied(command instanceof DecryptCommand ? 'Decrypt' : 'GenerateDataKey');
      },
    };
  }

  /** Decrypt calls made for a context naming this uid. */
  decryptsFor(uid: string): number {
    return this.calls.filter((c) => c.operation === 'Decrypt' && c.context?.['memvault:uid'] === uid).length;
  }
}

function sorted(context: Record<string, string> | undefined): Array<[string, string]> {
  return Object.entries(context ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
}
