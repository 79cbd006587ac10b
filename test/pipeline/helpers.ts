import { userFilesPrefix, userHistoryPrefix } from '../../src/store/layout.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';

export { RecordingStore } from '../kit/stores.js';
export { memoryVault, viaHandler, type HandlerOutcome } from '../kit/vault.js';

/** The store prefix of a user's files under the plain codec (what tests check keys against). */
export async function filesPrefixOf(userId: string): Promise<string> {
  return (await createPlainCodecProvider().forUser(userId)).filesPrefix;
}

/**
 * The keys of one user's space: their files (`u/{uid}/f/`) and, with history on (the default), the
 * kept versions of those files (`u/{uid}/v/`, docs/versions.md). Nothing else is theirs.
 */
export async function userSpaceOf(userId: string): Promise<(key: string) => boolean> {
  const { uid } = await createPlainCodecProvider().forUser(userId);
  const prefixes = [userFilesPrefix(uid), userHistoryPrefix(uid)];
  return (key) => prefixes.some((prefix) => key.startsWith(prefix));
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
