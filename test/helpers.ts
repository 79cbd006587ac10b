import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { createVault, type Vault, type VaultOptions } from '../src/index.js';
import { listAll, type ObjectStore } from '../src/store/port.js';
import { MemoryStore } from '../src/store/memory.js';

/** Every object's key and version: equal snapshots mean the store was not changed at all. */
export async function snapshot(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const o of listAll(store, '')) out.set(o.key, o.etag);
  return out;
}

export async function memoryVault(options: VaultOptions = {}): Promise<{ vault: Vault; store: MemoryStore }> {
  const store = new MemoryStore();
  const vault = await createVault({ store, ...options });
  return { vault, store };
}

/** Calls a handler the way the SDK's toolRunner does and returns what the model would read. */
export async function callTool(vault: Vault, user: string, input: Record<string, unknown>): Promise<{ content: unknown; isError: boolean }> {
  const handlers = vault.handlers(user) as unknown as Record<string, (i: unknown) => Promise<unknown>>;
  const handler = handlers[String(input['command'])] ?? handlers['view']!;
  try {
    return { content: await handler(input), isError: false };
  } catch (error) {
    if (error instanceof ToolError) return { content: error.content, isError: true };
    throw error;
  }
}
