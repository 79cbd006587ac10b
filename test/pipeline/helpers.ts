import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';

export { RecordingStore } from '../kit/stores.js';
export { memoryVault, viaHandler, type HandlerOutcome } from '../kit/vault.js';

/** The store prefix of a user's files under the plain codec (what tests check keys against). */
export async function filesPrefixOf(userId: string): Promise<string> {
  return (await createPlainCodecProvider().forUser(userId)).filesPrefix;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
