// Restore's arguments are taken only as the API describes them: POST /v1/restore and the page's
// restore refuse (400, nothing changed) a dry_run that is not a boolean and an as_of that is not a
// strict RFC 3339 date-time with a timezone naming a real date; no argument is coerced into a value
// that turns a preview into a restore or picks a date nobody meant. The valid forms still restore.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { createServer, type MemvaultServer } from '../../src/serve.js';
import { parseRfc3339 } from '../../src/util/date-time.js';
import { registerPage, SESSION_COOKIE, WRITE_COOKIE } from '../../src/serve/page/plugin.js';
import { CookieSealer, newSession } from '../../src/serve/page/session.js';
import { MemoryStore } from '../../src/store/memory.js';
import { CLIENT_ID, startProvider } from '../page/setup.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
const as = (user: string) => ({ ...bearer(serviceKey.key), 'memvault-user': user, 'content-type': 'application/json' });
const restore = (user: string, payload: string) =>
  server.fastify.inject({ method: 'POST', url: '/v1/restore', headers: as(user), payload });
const stored = async (user: string) =>
  (await (await vault.files(user)).read('/memories/a.md')) ? 'present' : 'absent';
let users = 0;

/** A user whose only file was created after the instant answered: a restore as of then deletes it. */
async function userWithNewFile(): Promise<{ user: string; before: string }> {
  const user = `rita${users++}`;
  const before = new Date(Date.now() - 1000).toISOString();
  await vault.run(user, { command: 'create', path: '/memories/a.md', file_text: 'new\n' }, { writer: 'host' });
  return { user, before };
}

beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 9).toString('base64') },
  });
  ({ server } = await testServer(idp, {}, vault));
});
afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
});

describe('POST /v1/restore arguments', () => {
  it('a dry_run that is not a boolean (null, 0, "false", "") is a 400 and restores nothing', async () => {
    for (const dry of ['null', '0', '"false"', '""', '[]']) {
      const { user, before } = await userWithNewFile();
      const res = await restore(user, `{"as_of":"${before}","dry_run":${dry}}`);
      expect({
        dry,
        status: res.statusCode,
        type: res.json<{ type: string }>().type,
        file: await stored(user),
      }).toEqual({ dry, status: 400, type: 'urn:memvault:problem:invalid-request', file: 'present' });
    }
  });

  it('an as_of that is not a strict RFC 3339 date-time with a timezone is a 400 and restores nothing', async () => {
    const bad = [
      '"1"',
      '"0"',
      '"2001"',
      '"March 7"',
      '12',
      'null',
      '"2026-03-07"',
      '"2026-03-07T12:00:00"',
      '"2026-03-07 12:00:00Z"',
      '"2026-02-30T00:00:00Z"',
      '"2026-03-07T24:00:00Z"',
      '"2026-03-07T12:00:00+25:00"',
    ];
    for (const asOf of bad) {
      const { user } = await userWithNewFile();
      const res = await restore(user, `{"as_of":${asOf}}`);
      expect({ asOf, status: res.statusCode, file: await stored(user) }).toEqual({
        asOf,
        status: 400,
        file: 'present',
      });
      expect(res.body).not.toMatch(/memories|at .*\.ts/);
    }
  });

  it('refuses a member it does not define; the valid forms preview and restore', async () => {
    const { user, before } = await userWithNewFile();
    expect((await restore(user, JSON.stringify({ as_of: before, dryrun: true }))).statusCode).toBe(400);
    const preview = await restore(user, JSON.stringify({ as_of: before, dry_run: true }));
    expect({ status: preview.statusCode, dry: preview.json<{ dry_run: boolean }>().dry_run }).toEqual({
      status: 200,
      dry: true,
    });
    expect(await stored(user)).toBe('present');
    // The same instant with an offset (and a fraction) is the same restore, applied.
    const offset = new Date(Date.parse(before) + 3_600_000).toISOString().replace('Z', '+01:00');
    const applied = await restore(user, JSON.stringify({ as_of: offset, dry_run: false }));
    expect({ status: applied.statusCode, deleted: applied.json<{ deleted: number }>().deleted }).toEqual({
      status: 200,
      deleted: 1,
    });
    expect(await stored(user)).toBe('absent');
  });
});

describe('parseRfc3339', () => {
  it('takes the instant of a real date-time with a timezone, and nothing else', () => {
    expect(parseRfc3339('2026-03-07T12:00:00Z')?.toISOString()).toBe('2026-03-07T12:00:00.000Z');
    expect(parseRfc3339('2026-03-07t13:30:00.25+01:30')?.toISOString()).toBe('2026-03-07T12:00:00.250Z');
    expect(parseRfc3339('2026-03-07T00:00:00-05:00')?.toISOString()).toBe('2026-03-07T05:00:00.000Z');
    expect(parseRfc3339('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(parseRfc3339('0099-01-01T00:00:00Z')?.getUTCFullYear()).toBe(99);
    for (const text of ['2023-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z'])
      expect(parseRfc3339(text), text).toBeUndefined();
    for (const text of [
      '2026-03-07T12:60:00Z',
      '2026-03-07T12:00:60Z',
      '2026-03-07T12:00:00+0100',
      ' 2026-03-07T12:00:00Z',
    ])
      expect(parseRfc3339(text), text).toBeUndefined();
    for (const value of [1, 0, '1', 'March 7', 'Sat, 07 Mar 2026 12:00:00 GMT', null, undefined, {}])
      expect(parseRfc3339(value), String(value)).toBeUndefined();
  });
});

describe("the page's restore", () => {
  const secret = randomBytes(32);
  let page: MemvaultServer;
  let provider: Awaited<ReturnType<typeof startProvider>>;
  const origin = 'http://127.0.0.1:1';

  beforeAll(async () => {
    provider = await startProvider(`${origin}/page/callback`);
    page = await createServer(vault, { auth: { development: true }, rateLimit: false });
    await registerPage(page.fastify, vault, {
      oidc: { issuer: provider.issuer, clientId: CLIENT_ID },
      publicUrl: origin,
      sessionSecret: secret,
    });
  });
  afterAll(async () => {
    await page.close();
    await provider.close();
  });

  function post(user: string, form: Record<string, string>) {
    const session = newSession(user, Date.now());
    const sealed = new CookieSealer(secret).seal('session', session);
    return page.fastify.inject({
      method: 'POST',
      url: '/page/restore',
      headers: {
        origin,
        cookie: `${SESSION_COOKIE}=${sealed}; ${WRITE_COOKIE}=${sealed}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ csrf: session.csrf, path: '', ...form }).toString(),
    });
  }

  it('refuses an as_of that is not RFC 3339, or a preview flag it did not write, restoring nothing', async () => {
    for (const asOf of ['1', '0', 'March 7', '2001', '2026-03-07T12:00:00']) {
      const { user } = await userWithNewFile();
      const res = await post(user, { as_of: asOf });
      expect({ asOf, status: res.statusCode, file: await stored(user) }).toEqual({
        asOf,
        status: 400,
        file: 'present',
      });
    }
    for (const preview of ['0', 'true', '']) {
      const { user, before } = await userWithNewFile();
      const res = await post(user, { as_of: before, preview });
      expect({ preview, status: res.statusCode, file: await stored(user) }).toEqual({
        preview,
        status: 400,
        file: 'present',
      });
    }
  });

  it('previews with preview=1 and restores without it', async () => {
    const { user, before } = await userWithNewFile();
    const preview = await post(user, { as_of: before, preview: '1' });
    expect({ status: preview.statusCode, file: await stored(user) }).toEqual({ status: 200, file: 'present' });
    expect(preview.body).toContain('/memories/a.md: deleted');
    const applied = await post(user, { as_of: before });
    expect({ status: applied.statusCode, file: await stored(user) }).toEqual({ status: 200, file: 'absent' });
  });
});
