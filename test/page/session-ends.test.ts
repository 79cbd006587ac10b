/**
 * Logging out ends the person's page sessions on every instance that shares the store (over HTTP,
 * two servers, two vaults, one store): through a sealed per-person record each instance reads at most
 * once per cache period. A record that does not open ends every session until the next sign-in.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { createServer, type MemvaultServer } from '../../src/serve.js';
import { registerPage, SESSION_COOKIE, WRITE_COOKIE } from '../../src/serve/page/plugin.js';
import { FORGET_CONFIRMATION } from '../../src/serve/page/actions.js';
import { MAX_CLOCK_AHEAD_MS, SessionEnds } from '../../src/serve/page/session-ends.js';
import { userPrefix } from '../../src/store/layout.js';
import { CookieSealer, newSession } from '../../src/serve/page/session.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError, type PutOptions } from '../../src/store/port.js';
import { StoreWrapper } from '../kit/stores.js';
import { CLIENT_ID, startProvider } from './setup.js';

const PUBLIC = 'http://127.0.0.1:1';
const secret = randomBytes(32);
const masterKey = randomBytes(32).toString('base64');
const store = new MemoryStore();
const instances: Array<{ vault: Vault; server: MemvaultServer; url: string }> = [];
let idp: Awaited<ReturnType<typeof startProvider>>;

beforeAll(async () => {
  idp = await startProvider(`${PUBLIC}/page/callback`);
  for (let i = 0; i < 2; i++) {
    const vault = await createVault({ store, encryption: { masterKey } });
    const server = await createServer(vault, { auth: { development: true }, rateLimit: false });
    await registerPage(server.fastify, vault, {
      oidc: { issuer: idp.issuer, clientId: CLIENT_ID },
      publicUrl: PUBLIC,
      sessionSecret: secret,
      sessionEndsCacheMs: 0,
    });
    instances.push({ vault, server, url: await server.listen({ host: '127.0.0.1', port: 0 }) });
  }
});
afterAll(async () => {
  for (const { server, vault } of instances) {
    await server.close();
    await vault.close();
  }
  await idp?.close();
});

function sessionOf(user: string, created: number) {
  const session = newSession(user, created);
  const sealed = new CookieSealer(secret).seal('session', session);
  return { cookie: `${SESSION_COOKIE}=${sealed}; ${WRITE_COOKIE}=${sealed}`, csrf: session.csrf };
}

async function signedIn(url: string, cookie: string): Promise<boolean> {
  const body = await (await fetch(`${url}/page`, { headers: { cookie } })).text();
  return !body.includes('>Sign in</a>');
}

describe('ending page sessions across instances', () => {
  it("logging out on one instance ends the person's sessions on the other, and only sessions from before", async () => {
    const [a, b] = instances.map((i) => i.url) as [string, string];
    const phone = sessionOf('alice', Date.now() - 2_000);
    const laptop = sessionOf('alice', Date.now() - 1_000);
    const bob = sessionOf('bob', Date.now() - 1_000);
    expect([await signedIn(a, phone.cookie), await signedIn(b, laptop.cookie)]).toEqual([true, true]);
    const logout = await fetch(`${a}/page/logout`, {
      method: 'POST',
      headers: { cookie: phone.cookie, origin: PUBLIC, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: phone.csrf }).toString(),
    });
    expect(logout.status).toBe(200);
    expect([await signedIn(b, laptop.cookie), await signedIn(b, phone.cookie)]).toEqual([false, false]);
    const change = await fetch(`${b}/page/pause`, {
      method: 'POST',
      headers: { cookie: laptop.cookie, origin: PUBLIC, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: laptop.csrf, paused: 'on' }).toString(),
    });
    expect(change.status).toBe(401);
    await expect(instances[1]!.vault.memoryPaused('alice')).resolves.toBe(false);
    // A later sign-in, and another person, are not ended.
    expect(await signedIn(b, sessionOf('alice', Date.now() + 1).cookie)).toBe(true);
    expect(await signedIn(b, bob.cookie)).toBe(true);
  });

  it('forget-me ends the session and leaves nothing of the person in the store: no new key', async () => {
    const [a] = instances.map((i) => i.url) as [string];
    const vault = instances[0]!.vault;
    await vault.run('dave', { command: 'create', path: '/memories/a.md', file_text: 'x\n' });
    const prefix = userPrefix((await vault.files('dave')).uid);
    expect((await store.list(prefix)).objects.length).toBeGreaterThan(0);
    const dave = sessionOf('dave', Date.now());
    const forget = await fetch(`${a}/page/forget`, {
      method: 'POST',
      headers: { cookie: dave.cookie, origin: PUBLIC, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: dave.csrf, confirm: FORGET_CONFIRMATION }).toString(),
    });
    expect(forget.status).toBe(200);
    expect(await forget.text()).toContain('id="receipt"');
    expect((await store.list(prefix)).objects).toEqual([]);
    expect(await signedIn(a, dave.cookie)).toBe(false);
  });

  it('never moves the time back: an earlier end, raced or later, leaves the later one in force', async () => {
    const [a, b] = instances.map(({ vault }) => new SessionEnds(vault, 0));
    const check = new SessionEnds(instances[0]!.vault, 0);
    // Two instances end the same person's sessions at once, clocks apart, in both orders of start.
    for (const [user, first, second] of [
      ['dave', () => a!.endAll('dave', 2_000), () => b!.endAll('dave', 1_000)],
      ['erin', () => b!.endAll('erin', 1_000), () => a!.endAll('erin', 2_000)],
    ] as const) {
      await Promise.all([first(), second()]);
      await expect(check.ended(user, 1_500, 3_000)).resolves.toBe(true);
      await expect(check.ended(user, 2_000, 3_000)).resolves.toBe(false);
    }
    // One after the other: the earlier time written second does not undo the later one.
    await a!.endAll('fay', 3_000);
    await b!.endAll('fay', 1_000);
    await expect(check.ended('fay', 2_000, 4_000)).resolves.toBe(true);
  });

  it('a time set far ahead by a wrong clock is replaced, not kept: new sign-ins work, earlier ones stay ended', async () => {
    const [fast, right] = instances.map(({ vault }) => new SessionEnds(vault, 0));
    const now = 10 * MAX_CLOCK_AHEAD_MS;
    // An instance whose clock runs an hour ahead logs the person out.
    await fast!.endAll('hal', now + 12 * MAX_CLOCK_AHEAD_MS);
    // A logout on a right clock puts its own time back, which still ends the sessions before it.
    await right!.endAll('hal', now);
    await expect(right!.ended('hal', now - 1, now + 1)).resolves.toBe(true);
    await expect(right!.ended('hal', now + 1, now + 2)).resolves.toBe(false);
    // A sign-in on a right clock replaces a far-ahead time too, so the new session is not ended at once.
    await fast!.endAll('ida', now + 12 * MAX_CLOCK_AHEAD_MS);
    await right!.signedIn('ida', now);
    await expect(right!.ended('ida', now, now + 1)).resolves.toBe(false);
    await expect(right!.ended('ida', now - 1, now + 1)).resolves.toBe(true);
    // A clock a little ahead (within the allowance) is kept: the later time stays in force.
    await fast!.endAll('jo', now + MAX_CLOCK_AHEAD_MS);
    await right!.endAll('jo', now);
    await right!.signedIn('jo', now);
    await expect(right!.ended('jo', now + MAX_CLOCK_AHEAD_MS - 1, now + 1)).resolves.toBe(true);
  });

  it('fails with CONFLICT, never a silent success, when other writes of the record win every attempt', async () => {
    class AlwaysRaced extends StoreWrapper {
      override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
        if (/\/p\/[0-9a-f]{64}$/.test(key)) throw new PreconditionFailedError(key);
        return super.put(key, body, options);
      }
    }
    const vault = await createVault({ store: new AlwaysRaced(new MemoryStore()), encryption: { masterKey } });
    try {
      await expect(new SessionEnds(vault, 0).endAll('gus', 1_000)).rejects.toMatchObject({ code: 'CONFLICT' });
    } finally {
      await vault.close();
    }
  });

  it('an altered record ends every session until the next sign-in writes it afresh', async () => {
    const ends = new SessionEnds(instances[0]!.vault, 0);
    await ends.endAll('carol', 1_000);
    await expect(ends.ended('carol', 999, 2_000)).resolves.toBe(true);
    await expect(ends.ended('carol', 1_000, 2_000)).resolves.toBe(false);
    const keys = (await store.list(`u/`)).objects.map((o) => o.key).filter((k) => /\/p\/[0-9a-f]{64}$/.test(k));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const body = new Uint8Array((await store.get(key))!.body);
      expect(Buffer.from(body).toString('latin1')).not.toContain('endedBefore');
      body[body.length - 1]! ^= 1;
      await store.put(key, body);
    }
    await expect(ends.ended('carol', 5_000, 6_000)).resolves.toBe(true);
    await ends.signedIn('carol', 7_000);
    await expect(ends.ended('carol', 7_000, 8_000)).resolves.toBe(false);
    await expect(ends.ended('carol', 6_999, 8_000)).resolves.toBe(true);
    for (const bad of [-1, 1.5, Number.NaN])
      expect(() => new SessionEnds(instances[0]!.vault, bad)).toThrow(RangeError);
  });
});
