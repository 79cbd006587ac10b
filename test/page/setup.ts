/**
 * The memory page's test bench: a real OpenID provider (oidc-provider, its development login form:
 * any login name is an account whose `sub` is that name), a real memvault serve on a file store with
 * the page mounted, an agent API key, and Debian's Chromium driven by playwright-core. One of each
 * per test file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createVault, type Vault } from '../../src/memvault.js';
import { createServer, newApiKey, type MemvaultServer } from '../../src/serve.js';
import { registerPage, type PageOptions } from '../../src/serve/page/plugin.js';
import { tempDir } from '../kit/temp.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CLIENT_ID = 'memvault-page';
export const agentKey = newApiKey('agent');

async function freePort(): Promise<number> {
  const probe = createHttpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startProvider(redirectUri: string): Promise<{ issuer: string; close: () => Promise<void> }> {
  const server: Server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    // The test account consents once and for all: no consent screen.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope('openid');
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface Bench {
  base: string;
  origin: string;
  vault: Vault;
  server: MemvaultServer;
  browser: Browser;
  /** Moves the page's clock (session timeouts) forward. */
  advance(ms: number): void;
  newContext(): Promise<BrowserContext>;
  /** POST /v1/memory as the agent, for `user`. */
  agent(user: string, input: Record<string, unknown>): Promise<{ content: unknown; is_error: boolean }>;
  close(): Promise<void>;
}

export async function startBench(page: Partial<PageOptions> = {}): Promise<Bench> {
  // Fail, never skip: the suite is the proof that the page is safe in a real browser.
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM} (apt-get install chromium)`);
  const temp = tempDir('memvault-page');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const base = `${origin}/page`;
  const idp = await startProvider(`${base}/callback`);
  const vault = await createVault({
    store: `file://${temp.dir}/store`,
    encryption: { masterKey: randomBytes(32).toString('base64') },
  });
  const server = await createServer(vault, { auth: { apiKeys: [agentKey.entry] }, rateLimit: false });
  let offset = 0;
  await registerPage(server.fastify, vault, {
    oidc: { issuer: idp.issuer, clientId: CLIENT_ID },
    publicUrl: origin,
    sessionSecret: randomBytes(32),
    timeouts: { idleMs: 60_000, absoluteMs: 3_600_000 },
    now: () => Date.now() + offset,
    ...page,
  });
  await server.listen({ host: '127.0.0.1', port });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // playwright-core gives each launch a fresh --user-data-dir of its own.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const contexts: BrowserContext[] = [];
  return {
    base,
    origin,
    vault,
    server,
    browser,
    advance: (ms) => {
      offset += ms;
    },
    async newContext() {
      const context = await browser.newContext();
      context.setDefaultTimeout(10_000);
      // Nothing may be fetched from another origin (the provider's form asks for a web font).
      await context.route(/^https:/, (route) => route.abort());
      contexts.push(context);
      return context;
    },
    async agent(user, input) {
      const response = await fetch(`${origin}/v1/memory`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${agentKey.key}`,
          'memvault-user': user,
          'content-type': 'application/json',
        },
        body: JSON.stringify(input),
      });
      return (await response.json()) as { content: unknown; is_error: boolean };
    },
    async close() {
      await browser.close();
      await server.close();
      await vault.close();
      await idp.close();
      temp.cleanup();
    },
  };
}

/** Signs `login` in through the provider's form; the context then holds the page's session. */
export async function signIn(bench: Bench, context: BrowserContext, login: string) {
  const page = await context.newPage();
  await page.goto(bench.base);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.locator('button[type=submit]').click();
  await page.waitForURL(bench.base);
  return page;
}

/** Saves a screenshot to docs/images/ when MEMVAULT_SCREENSHOTS is set (never in CI). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env['MEMVAULT_SCREENSHOTS']) return;
  await page.setViewportSize({ width: 900, height: 560 });
  await page.screenshot({ path: `docs/images/${name}.png` });
}
