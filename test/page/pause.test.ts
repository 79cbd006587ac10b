/**
 * Pause memory in the vault's default chain (src/pipeline/pause.ts): a second vault on the same
 * store (another process) refuses the model's writes too; the setting object is sealed and named by
 * the pseudonymous uid only; an altered one fails closed; a model write costs one GET, a view none.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { settingsKeyOf } from '../../src/pipeline/pause.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { messages } from '../../src/tool/messages.js';

const masterKey = randomBytes(32).toString('base64');
const store = new MemoryStore();
let gets: string[] = [];
const counting: ObjectStore = new Proxy(store, {
  get(target, name, receiver) {
    if (name === 'get') return (key: string, ...rest: unknown[]) => (gets.push(key), target.get(key, ...(rest as [])));
    const value = Reflect.get(target, name, receiver) as unknown;
    return typeof value === 'function' ? value.bind(target) : value;
  },
});
const page = await createVault({ store, encryption: { masterKey } });
const agent = await createVault({ store: counting, encryption: { masterKey } });
afterAll(async () => {
  await page.close();
  await agent.close();
});
const write = { command: 'create', path: '/memories/a.md', file_text: 'x' };
const paused = { content: messages.memoryPaused(), isError: true, code: 'PAUSED' };

describe('pause memory', () => {
  it('holds in every vault on the store, for the model only, and costs one read per model write', async () => {
    await expect(page.memoryPaused('ivy')).resolves.toBe(false);
    await page.setMemoryPaused('ivy', true, { actor: 'page:person' });
    await expect(agent.memoryPaused('ivy')).resolves.toBe(true);
    await expect(agent.run('ivy', write)).resolves.toEqual(paused);
    await expect(agent.run('ivy', write, { writer: 'person' })).resolves.toMatchObject({ isError: false });
    await expect(agent.run('ivy', write, { writer: 'host' })).resolves.toMatchObject({ isError: false });
    gets = [];
    await expect(agent.run('ivy', { command: 'view', path: '/memories' })).resolves.toMatchObject({ isError: false });
    const settingsKey = (await agent.files('ivy')).uid;
    expect(gets.filter((k) => k === settingsKeyOf(settingsKey))).toEqual([]);
    await agent.run('ivy', write);
    expect(gets.filter((k) => k === settingsKeyOf(settingsKey))).toHaveLength(1);
    await page.setMemoryPaused('ivy', false);
    await expect(agent.run('ivy', write)).resolves.toMatchObject({ isError: false });
  });

  it('is sealed, named without the user id, fails closed when altered, and rejects bad arguments', async () => {
    await page.setMemoryPaused('ivy', false);
    const key = settingsKeyOf((await page.files('ivy')).uid);
    expect(key).not.toContain('ivy');
    const stored = (await store.get(key))!.body;
    expect(Buffer.from(stored).toString('latin1')).not.toContain('paused');
    const altered = new Uint8Array(stored);
    altered[altered.length - 1]! ^= 1;
    await store.put(key, altered);
    await expect(agent.run('ivy', write)).resolves.toEqual(paused);
    await expect(page.setMemoryPaused('ivy', 'no' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(page.setMemoryPaused('', true)).rejects.toMatchObject({ code: 'INVALID_USER' });
    await expect(page.memoryPaused('ivy', { who: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(page.memoryPaused('nobody-yet')).resolves.toBe(false);
  });

  it('works without encryption too (the setting then plain, as the files are)', async () => {
    const plain = await createVault({ store: new MemoryStore(), encryption: false });
    try {
      await plain.setMemoryPaused('ivy', true);
      await expect(plain.run('ivy', write)).resolves.toEqual(paused);
      await plain.setMemoryPaused('ivy', false);
      await expect(plain.run('ivy', write)).resolves.toMatchObject({ isError: false });
    } finally {
      await plain.close();
    }
  });
});
