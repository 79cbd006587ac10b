/**
 * Attacks on the memory page, in real Chromium and at the HTTP level: another person's files by URL,
 * form field or API call; a cross-site form post; a change without the CSRF token or Origin; a memory
 * made of script, HTML, SVG and markdown links; an expired or tampered session cookie.
 */
import { createHash } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSuiteRun } from '../kit/suite-marker.js';
import { signIn, startBench, type Bench } from './setup.js';

let bench: Bench;
let attacker: Server;
let attackerOrigin: string;
beforeAll(async () => {
  bench = await startBench();
  // Another site (localhost is not 127.0.0.1's site) whose page posts a form to the memory page.
  attacker = createHttpServer((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<form id="f" method="post" action="${bench.base}/delete">` +
          '<input name="path" value="memories/keep.md"><input name="csrf" value="guessed"></form>' +
          '<script>document.getElementById("f").submit()</script>',
      );
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  await bench.agent('alice', { command: 'create', path: '/memories/keep.md', file_text: 'alice keeps this' });
});
afterAll(async () => {
  await new Promise<void>((resolve) => attacker?.close(() => resolve()));
  await bench?.close();
});

async function aliceText(): Promise<string | undefined> {
  const file = await (await bench.vault.files('alice')).read('/memories/keep.md');
  return file ? new TextDecoder().decode(file.data) : undefined;
}

function csrfOf(page: Page): Promise<string> {
  return page.locator('input[name=csrf]').first().inputValue();
}

// CI fails unless this file ran and passed in Chromium (.ci/run reads the marker).
recordSuiteRun('browser', import.meta.url);

describe('attacks on the memory page', () => {
  it("bob's session reaches none of alice's files by URL, form field or API call", async () => {
    await bench.agent('bob', { command: 'create', path: '/memories/bob.md', file_text: 'bob only' });
    const page = await signIn(bench, await bench.newContext(), 'bob');
    await expect(page.getByRole('link', { name: '/memories/keep.md' }).count()).resolves.toBe(0);
    const byUrl = await page.goto(`${bench.base}/file?path=memories/keep.md&user=alice`);
    expect(byUrl?.status()).toBe(404);

    await page.goto(bench.base);
    const csrf = await csrfOf(page);
    const headers = { origin: bench.origin };
    const edit = await page.request.post(`${bench.base}/file`, {
      headers,
      form: { csrf, path: 'memories/keep.md', base: '', text: 'bob was here' },
    });
    // The form names a path, never a user: the write lands in bob's own memory.
    expect(edit.status()).toBe(200);
    const bobs = await (await bench.vault.files('bob')).read('/memories/keep.md');
    expect(new TextDecoder().decode(bobs!.data)).toBe('bob was here');
    const aliceEtag = `"sha256:${createHash('sha256').update('alice keeps this').digest('hex')}"`;
    const smuggled = await page.request.post(`${bench.base}/delete`, {
      headers,
      form: { csrf, path: 'memories/keep.md', base: aliceEtag, user: 'alice' },
    });
    expect(smuggled.status()).toBe(409);
    const exported = await page.request.get(`${bench.base}/export`);
    expect((await exported.body()).includes('alice keeps this')).toBe(false);
    expect((await exported.body()).includes('bob only')).toBe(true);
    // The page's session is no credential of the API.
    for (const url of ['/v1/files/memories/keep.md', '/v1/files', '/v1/export'])
      expect(
        (await page.request.get(`${bench.origin}${url}`, { headers: { 'memvault-user': 'alice' } })).status(),
      ).toBe(401);
    expect(await aliceText()).toBe('alice keeps this');
  });

  it('refuses a cross-site form post, a change without the CSRF token and one from another Origin', async () => {
    const context = await bench.newContext();
    const page = await signIn(bench, context, 'alice');
    const csrf = await csrfOf(page);
    const refused = page.waitForResponse(`${bench.base}/delete`);
    await page.goto(attackerOrigin);
    expect((await refused).status()).toBe(403);

    const noToken = await page.request.post(`${bench.base}/delete`, {
      headers: { origin: bench.origin },
      form: { path: 'memories/keep.md' },
    });
    expect(noToken.status()).toBe(403);
    const wrongOrigin = await page.request.post(`${bench.base}/delete`, {
      headers: { origin: attackerOrigin },
      form: { path: 'memories/keep.md', csrf },
    });
    expect(wrongOrigin.status()).toBe(403);
    expect(await aliceText()).toBe('alice keeps this');
  });

  it('shows a memory of script, HTML, SVG and markdown links as text and runs nothing', async () => {
    const payload = [
      '<script>window.pwned = 1</script>',
      '<img src=x onerror="window.pwned = 2">',
      '<svg onload="window.pwned = 3"><script>window.pwned = 4</script></svg>',
      '[click](javascript:window.pwned=5) ![x](http://127.0.0.1:1/leak)',
      '</textarea><script>window.pwned = 6</script>',
      '',
    ].join('\n');
    await bench.agent('alice', { command: 'create', path: '/memories/evil.md', file_text: payload });
    const page = await signIn(bench, await bench.newContext(), 'alice');
    let dialogs = 0;
    page.on('dialog', () => void dialogs++);
    const response = await page.goto(`${bench.base}/file?path=memories/evil.md`);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'none'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-store');
    await expect(page.getByLabel('Content').inputValue()).resolves.toBe(payload);
    // A string: it runs in the page, and the test build has no DOM types.
    const injected = await page.evaluate(`({
      pwned: window.pwned,
      elements: document.querySelectorAll('script, img, svg, iframe, object').length,
      javascriptLinks: document.querySelectorAll('a[href^="javascript"]').length,
    })`);
    expect(injected).toEqual({ pwned: undefined, elements: 0, javascriptLinks: 0 });
    expect(dialogs).toBe(0);
  });

  it('takes only its own forms: a JSON, text or multipart body is a 415, never a 500 or a change', async () => {
    const page = await signIn(bench, await bench.newContext(), 'alice');
    const csrf = await csrfOf(page);
    // Each with the person's CSRF token and Origin: fields of the wrong type (once a 500), and forms
    // that would have worked as JSON (a pause, a sign-out).
    const bodies: [string, Record<string, unknown>][] = [
      ['/forget', { csrf, confirm: 5 }],
      ['/restore', { csrf, as_of: '2026-01-01T00:00:00Z', path: 5 }],
      ['/file', { csrf, path: 'memories/keep.md', base: '', text: ['x'] }],
      ['/delete', { csrf, path: { p: 1 }, base: '' }],
      ['/pause', { csrf, paused: 'on' }],
      ['/logout', { csrf }],
    ];
    for (const [route, body] of bodies) {
      const response = await page.request.post(`${bench.base}${route}`, {
        headers: { origin: bench.origin, 'content-type': 'application/json' },
        data: JSON.stringify(body),
      });
      expect(response.status(), route).toBe(415);
      expect(await response.text(), route).toContain('only its own forms');
    }
    for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded-not']) {
      const response = await page.request.post(`${bench.base}/pause`, {
        headers: { origin: bench.origin, 'content-type': type },
        data: `csrf=${csrf}&paused=on`,
      });
      expect(response.status(), type).toBe(415);
    }
    expect(await aliceText()).toBe('alice keeps this');
    expect(await bench.vault.memoryPaused('alice')).toBe(false);
    // Still signed in: the JSON sign-out did nothing, and the form itself still works.
    const pause = await page.request.post(`${bench.base}/pause`, {
      headers: { origin: bench.origin },
      form: { csrf, paused: 'off' },
    });
    expect(pause.status()).toBe(200);
  });

  it('refuses a tampered cookie and one past its idle timeout', async () => {
    const context = await bench.newContext();
    const page = await signIn(bench, context, 'alice');
    const cookies = await context.cookies();
    const tampered = cookies.map((c) => {
      const i = Math.floor(c.value.length / 2);
      return { ...c, value: c.value.slice(0, i) + (c.value[i] === 'A' ? 'B' : 'A') + c.value.slice(i + 1) };
    });
    await context.addCookies(tampered);
    await page.goto(bench.base);
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);

    const fresh = await signIn(bench, await bench.newContext(), 'alice');
    const csrf = await csrfOf(fresh);
    bench.advance(61_000);
    await fresh.goto(bench.base);
    await expect(fresh.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
    const late = await fresh.request.post(`${bench.base}/delete`, {
      headers: { origin: bench.origin },
      form: { path: 'memories/keep.md', csrf },
    });
    expect(late.status()).toBe(401);
    expect(await aliceText()).toBe('alice keeps this');
  });
});
