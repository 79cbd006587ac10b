/**
 * The memory page in real Chromium against a real OpenID provider and a real memvault serve on a file
 * store: a person signs in, browses, reads, edits (and meets an agent's edit as a conflict that loses
 * nothing), deletes, downloads, erases, signs out. Attacks are in attacks.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startBench, type Bench } from './setup.js';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => bench?.close());

describe('the memory page', () => {
  it('signs alice in and shows her tree', async () => {
    await bench.agent('alice', { command: 'create', path: '/memories/prefs.md', file_text: 'likes tea\n' });
    const context = await bench.newContext();
    const page = await signIn(bench, context, 'alice');
    await expect(page.getByRole('link', { name: '/memories/prefs.md' }).textContent()).resolves.toBe(
      '/memories/prefs.md',
    );
  });
});
