/**
 * The memory page in real Chromium against a real OpenID provider and a real memvault serve on a file
 * store: a person signs in, browses, reads, edits (and meets an agent's edit as a conflict that loses
 * nothing), deletes, downloads, erases, signs out. Attacks are in attacks.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages } from '../../src/tool/messages.js';
import { recordSuiteRun } from '../kit/suite-marker.js';
import { screenshot, signIn, startBench, type Bench } from './setup.js';

let bench: Bench;
beforeAll(async () => {
  bench = await startBench();
});
afterAll(async () => bench?.close());

async function stored(user: string, path: string): Promise<string | undefined> {
  const file = await (await bench.vault.files(user)).read(path);
  return file ? new TextDecoder().decode(file.data) : undefined;
}

// CI fails unless this file ran and passed in Chromium (.ci/run reads the marker).
recordSuiteRun('browser', import.meta.url);

describe('the memory page', () => {
  it('signs in, browses, reads and edits through the chain; an agent edit meanwhile is a conflict', async () => {
    await bench.agent('alice', { command: 'create', path: '/memories/prefs.md', file_text: 'likes tea\n' });
    await bench.agent('alice', { command: 'create', path: '/memories/work/project.md', file_text: 'ships memvault\n' });
    const page = await signIn(bench, await bench.newContext(), 'alice');
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    const first = await rows.first().locator('td').allTextContents();
    expect(first[0]).toBe('/memories/prefs.md');
    expect(first[1]).toBe('10 B');
    expect(first[3]).not.toBe('—');
    await screenshot(page, 'page-tree');

    await page.getByRole('link', { name: '/memories/prefs.md' }).click();
    await page.waitForURL(/\/file\?/);
    await expect(page.getByLabel('Content').inputValue()).resolves.toBe('likes tea\n');
    await page.getByLabel('Content').fill('likes green tea\nlives in Lyon\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Saved /memories/prefs.md.');
    expect(await stored('alice', '/memories/prefs.md')).toBe('likes green tea\nlives in Lyon\n');

    // Loaded, then an agent writes, then the person saves: both texts shown, the agent's kept.
    await page.goto(`${bench.base}/file?path=memories/prefs.md`);
    await screenshot(page, 'page-file');
    await bench.agent('alice', {
      command: 'str_replace',
      path: '/memories/prefs.md',
      old_str: 'lives in Lyon',
      new_str: 'lives in Paris',
    });
    await page.getByLabel('Content').fill('likes coffee\n');
    const conflict = page.waitForResponse((r) => r.url() === `${bench.base}/file`);
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await conflict).status()).toBe(409);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Nothing was overwritten');
    await expect(page.locator('#theirs').textContent()).resolves.toBe('likes green tea\nlives in Paris\n');
    await expect(page.locator('#yours').textContent()).resolves.toBe('likes coffee\n');
    expect(await stored('alice', '/memories/prefs.md')).toBe('likes green tea\nlives in Paris\n');
    await screenshot(page, 'page-conflict');
    // Saving again from the conflict screen is based on the agent's version, so it applies.
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').waitFor();
    expect(await stored('alice', '/memories/prefs.md')).toBe('likes coffee\n');

    await page.goto(`${bench.base}/file?path=memories/work/project.md`);
    await page.getByRole('button', { name: 'Delete this file' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Deleted /memories/work/project.md.');
    expect(await stored('alice', '/memories/work/project.md')).toBeUndefined();
    await page.close();
  });

  it("lists a file's versions with their actor, restores one, and previews then restores the memory as of a time", async () => {
    await bench.agent('frank', { command: 'create', path: '/memories/notes/a.md', file_text: 'one' });
    await bench.agent('frank', {
      command: 'str_replace',
      path: '/memories/notes/a.md',
      old_str: 'one',
      new_str: 'two',
    });
    const page = await signIn(bench, await bench.newContext(), 'frank');
    await page.goto(`${bench.base}/file?path=memories/notes/a.md`);
    await page.getByRole('link', { name: 'Versions' }).click();
    await page.waitForURL(/\/versions\?/);
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    await screenshot(page, 'page-versions');
    await rows.last().getByRole('button', { name: 'Restore…' }).click();
    await page.locator('#preview').waitFor();
    await expect(page.locator('#preview li').allTextContents()).resolves.toEqual(['/memories/notes/a.md: restored']);
    expect(await stored('frank', '/memories/notes/a.md')).toBe('two');
    await page.getByRole('button', { name: 'Restore now' }).click();
    await page.getByRole('heading', { name: 'Restored' }).waitFor();
    expect(await stored('frank', '/memories/notes/a.md')).toBe('one');

    const asOf = new Date().toISOString();
    await bench.agent('frank', { command: 'create', path: '/memories/notes/late.md', file_text: 'late' });
    await page.goto(bench.base);
    await page.getByLabel(/Restore everything as it was at/).fill(asOf);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('#preview').waitFor();
    await expect(page.locator('#preview li').allTextContents()).resolves.toEqual(['/memories/notes/late.md: deleted']);
    expect(await stored('frank', '/memories/notes/late.md')).toBe('late');
    await page.getByRole('button', { name: 'Restore now' }).click();
    await page.getByRole('heading', { name: 'Restored' }).waitFor();
    expect(await stored('frank', '/memories/notes/late.md')).toBeUndefined();
    expect(await stored('frank', '/memories/notes/a.md')).toBe('one');

    // A diff of two versions: each changed line marked, markup in a memory shown as text.
    await bench.agent('frank', {
      command: 'create',
      path: '/memories/notes/a.md',
      file_text: 'one\n<script>document.title="run"</script>\n',
    });
    await page.goto(`${bench.base}/versions?path=memories/notes/a.md`);
    await page.getByLabel('From (older)').selectOption({ index: 2 });
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.waitForURL(/\/diff\?/);
    await expect(page.locator('#diff').textContent()).resolves.toBe(
      '- two\n+ one\n+ <script>document.title="run"</script>\n',
    );
    await expect(page.locator('#diff ins').count()).resolves.toBe(2);
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/by agent\).* to version .*by agent\)/s);
    await expect(page.title()).resolves.toBe('Compare versions · memvault');
    await screenshot(page, 'page-diff');
  });

  it("pauses memory: the agent's writes are refused with the model's message, views and the person's edits work", async () => {
    await bench.agent('gina', { command: 'create', path: '/memories/a.md', file_text: 'before\n' });
    const page = await signIn(bench, await bench.newContext(), 'gina');
    await page.getByRole('button', { name: 'Pause memory' }).click();
    await page.getByRole('heading', { name: 'Paused' }).waitFor();
    const write = { command: 'create', path: '/memories/a.md', file_text: 'agent\n' };
    await expect(bench.vault.run('gina', write)).resolves.toEqual({
      content: messages.memoryPaused(),
      isError: true,
      code: 'PAUSED',
    });
    await expect(bench.agent('gina', write)).resolves.toEqual({ content: messages.memoryPaused(), is_error: true });
    const view = await bench.vault.run('gina', { command: 'view', path: '/memories/a.md' });
    expect([view.isError, String(view.content)]).toEqual([false, expect.stringContaining('before')]);
    await page.goto(`${bench.base}/file?path=memories/a.md`);
    await page.getByLabel('Content').fill('mine\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').waitFor();
    expect(await stored('gina', '/memories/a.md')).toBe('mine\n');
    await page.goto(bench.base);
    await expect(page.locator('tbody tr td').nth(3).textContent()).resolves.toBe('you');

    await page.goto(bench.base);
    await expect(page.locator('#pause strong').textContent()).resolves.toBe('Memory is paused:');
    await page.getByRole('button', { name: 'Resume memory' }).click();
    await page.getByRole('heading', { name: 'Resumed' }).waitFor();
    await expect(bench.vault.run('gina', write)).resolves.toMatchObject({ isError: false });
    expect(await stored('gina', '/memories/a.md')).toBe('agent\n');
    await page.goto(bench.base);
    await expect(page.locator('tbody tr td').nth(3).textContent()).resolves.toBe('agent');

    // A textarea sends CRLF: an edit keeps the file's own line ends (LF, or CRLF throughout).
    await bench.agent('gina', { command: 'create', path: '/memories/dos.txt', file_text: 'one\r\ntwo\r\n' });
    for (const [file, typed, kept] of [
      ['a.md', 'x\ny\n', 'x\ny\n'],
      ['dos.txt', 'one\nthree\n', 'one\r\nthree\r\n'],
    ] as const) {
      await page.goto(`${bench.base}/file?path=memories/${file}`);
      await page.getByLabel('Content').fill(typed);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').waitFor();
      expect(await stored('gina', `/memories/${file}`)).toBe(kept);
    }
  });

  it('downloads everything as the export tar', async () => {
    await bench.agent('carol', { command: 'create', path: '/memories/a.md', file_text: 'carol-only text' });
    const page = await signIn(bench, await bench.newContext(), 'carol');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download everything' }).click();
    const tar = await readFile((await (await download).path())!);
    expect(tar.includes('memories/a.md')).toBe(true);
    expect(tar.includes('carol-only text')).toBe(true);
    expect(tar.includes('manifest.json')).toBe(true);
  });

  it('forgets dana after a typed confirmation, ends the session and gives a receipt', async () => {
    await bench.agent('dana', { command: 'create', path: '/memories/secret.md', file_text: 'dana secret' });
    const page = await signIn(bench, await bench.newContext(), 'dana');
    await page.getByRole('link', { name: 'Forget me' }).click();
    await page.getByLabel('Type forget me to confirm').fill('forget');
    await page.getByRole('button', { name: 'Erase my memory' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Type “forget me” to confirm.');
    expect(await stored('dana', '/memories/secret.md')).toBe('dana secret');

    await page.goto(`${bench.base}/forget`);
    await page.getByLabel('Type forget me to confirm').fill('forget me');
    await page.getByRole('button', { name: 'Erase my memory' }).click();
    await page.locator('#receipt').waitFor();
    const receipt = await page.locator('#receipt dd').allTextContents();
    expect(receipt[1]).toBe('yes');
    expect(Number(receipt[2])).toBeGreaterThan(0);
    await screenshot(page, 'page-receipt');
    await page.goto(bench.base);
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);

    const again = await signIn(bench, await bench.newContext(), 'dana');
    await expect(again.getByText('Nothing is remembered about you.').count()).resolves.toBe(1);
  });

  it('logs out, and the cookie kept from before opens nothing', async () => {
    const context = await bench.newContext();
    const page = await signIn(bench, context, 'erin');
    const before = await context.cookies();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
    await context.addCookies(before);
    await page.goto(bench.base);
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
  });
});
