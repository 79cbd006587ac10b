import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { createVault, type Vault, type VaultOptions } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectInfo, StoredObject, ListOptions, ListPage, PutOptions } from '../../src/store/port.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';

/** A MemoryStore that remembers every key (or prefix) it was asked about. */
export class RecordingStore extends MemoryStore {
  readonly touched: string[] = [];
  override get(key: string): Promise<StoredObject | null> {
    this.touched.push(key);
    return super.get(key);
  }
  override head(key: string): Promise<ObjectInfo | null> {
    this.touched.push(key);
    return super.head(key);
  }
  override put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    this.touched.push(key);
    return super.put(key, body, options);
  }
  override list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.touched.push(prefix);
    return super.list(prefix, options);
  }
  override delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    this.touched.push(key);
    return super.delete(key, options);
  }
}

/** The store prefix of a user's files under the plain codec (what tests check keys against). */
export async function filesPrefixOf(userId: string): Promise<string> {
  return (await createPlainCodecProvider().forUser(userId)).filesPrefix;
}

export async function memoryVault(options: VaultOptions = {}): Promise<{ vault: Vault; store: MemoryStore }> {
  const store = options.store instanceof MemoryStore ? options.store : new MemoryStore();
  const vault = await createVault({ ...options, store });
  return { vault, store };
}

export type HandlerOutcome = { ok: true; content: unknown } | { ok: false; content: string };

/** Calls a handler the way the SDK's tool runner does: a ToolError is the is_error result. */
export async function viaHandler(vault: Vault, user: string, input: { command: 'view'; path: string }): Promise<HandlerOutcome> {
  try {
    return { ok: true, content: await vault.handlers(user).view(input as never) };
  } catch (error) {
    if (error instanceof ToolError) return { ok: false, content: typeof error.content === 'string' ? error.content : JSON.stringify(error.content) };
    throw error;
  }
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
