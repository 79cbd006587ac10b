/**
 * OpenID alone is a complete configuration of `memvault serve` (the built CLI, one process): it
 * starts, serves the memory page and its sign-in, and refuses every agent call with a 401 problem.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../kit/temp.js';
import { startServeProcess, type ServeProcess } from '../serve/helpers.js';
import { CLIENT_ID, startProvider } from './setup.js';

const temp = tempDir('memvault-page-cli');
let serve: ServeProcess | undefined;
let idp: Awaited<ReturnType<typeof startProvider>> | undefined;
afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exit;
  await idp?.close();
  temp.cleanup();
});

async function freePort(): Promise<number> {
  const probe = createHttpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('memvault serve with OpenID alone', () => {
  it('serves the page and its sign-in, and answers agent calls 401', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    idp = await startProvider(`${origin}/page/callback`);
    serve = await startServeProcess(
      [
        '--port',
        String(port),
        '--store',
        `file://${temp.dir}/store`,
        '--oidc-issuer',
        idp.issuer,
        '--oidc-client-id',
        CLIENT_ID,
        '--public-url',
        origin,
      ],
      { MEMVAULT_MASTER_KEY: randomBytes(32).toString('base64') },
    );
    expect(serve.url).toBe(origin);
    const page = await fetch(`${origin}/page`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Sign in');
    const login = await fetch(`${origin}/page/login`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toMatch(new RegExp(`^${idp.issuer}/.*code_challenge_method=S256`));
    const input = JSON.stringify({ command: 'view', path: '/memories' });
    const callers: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-a-credential', 'memvault-user': 'alice' },
    ];
    for (const headers of callers) {
      const agent = await fetch(`${origin}/v1/memory`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: input,
      });
      expect(agent.status).toBe(401);
      expect(agent.headers.get('content-type')).toContain('application/problem+json');
      expect(((await agent.json()) as { status: number }).status).toBe(401);
    }
  }, 60_000);
});
