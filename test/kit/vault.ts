import { randomBytes } from 'node:crypto';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { afterAll } from 'vitest';
import { createVault, type Vault, type VaultOptions } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';

/**
 * A vault on a real MemoryStore: a new one, or the one given as `options.store` (a MemoryStore or a
 * kit wrapper around one, e.g. a RecordingStore).
 */
export async function memoryVault<S extends ObjectStore = MemoryStore>(
  options: Omit<VaultOptions, 'store'> & { store?: S } = {},
): Promise<{ vault: Vault; store: S }> {
  const store = options.store ?? (new MemoryStore() as ObjectStore as S);
  const vault = await createVault({ ...options, store });
  return { vault, store };
}

/** A vault on whatever store `makeStore` gives (the suites that run on memory, file and S3 stores alike). */
export async function vaultOn(
  makeStore: () => Promise<ObjectStore>,
  options: VaultOptions = {},
): Promise<{ vault: Vault; store: ObjectStore }> {
  const store = await makeStore();
  return { vault: await createVault({ store, ...options }), store };
}

/** Calls a handler the way the SDK's toolRunner does and returns what the model would read. */
export async function callTool(
  vault: Vault,
  user: string,
  input: Record<string, unknown>,
): Promise<{ content: unknown; isError: boolean }> {
  const handlers = vault.handlers(user) as unknown as Record<string, (i: unknown) => Promise<unknown>>;
  const handler = handlers[String(input['command'])] ?? handlers['view']!;
  try {
    return { content: await handler(input), isError: false };
  } catch (error) {
    if (error instanceof ToolError) return { content: error.content, isError: true };
    throw error;
  }
}

export type HandlerOutcome = { ok: true; content: unknown } | { ok: false; content: string };

/** Calls the view handler the way the SDK's tool runner does: a ToolError is the is_error result. */
export async function viaHandler(
  vault: Vault,
  user: string,
  input: { command: 'view'; path: string },
): Promise<HandlerOutcome> {
  try {
    return { ok: true, content: await vault.handlers(user).view(input as never) };
  } catch (error) {
    if (error instanceof ToolError)
      return { ok: false, content: typeof error.content === 'string' ? error.content : JSON.stringify(error.content) };
    throw error;
  }
}

/** Writes `source` (name -> text) under /memories/src and a bystander /memories/keep.md, as the host (the directory commands' tests). */
export async function seedSource(vault: Vault, user: string, source: Record<string, string>): Promise<void> {
  const files = await vault.files(user);
  await Promise.all(
    Object.entries(source).map(([name, text]) => files.write(`/memories/src/${name}`, new TextEncoder().encode(text))),
  );
  await files.write('/memories/keep.md', new TextEncoder().encode('not involved\n'));
}

/** A file's text as the host reads it, or null when none is there. */
export async function textAt(vault: Vault, user: string, path: string): Promise<string | null> {
  const file = await (await vault.files(user)).read(path);
  return file ? Buffer.from(file.data).toString('utf8') : null;
}

/** A suite's master key, and the list of the vaults it opens: each closed after the suite (afterAll). */
export function suiteVaults(): { masterKey: string; opened: Vault[] } {
  const masterKey = randomBytes(32).toString('base64');
  const opened: Vault[] = [];
  afterAll(async () => {
    for (const vault of opened) await vault.close();
  });
  return { masterKey, opened };
}
