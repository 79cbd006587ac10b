/**
 * Every public entry point refuses an argument that means nothing with a typed
 * error, and nothing in the store changes. One table, run on the memory store
 * (api-validation.test.ts) and on radosgw (test/s3/api-validation.test.ts). Each row is an invalid
 * call; the store's objects (keys and ETags) are compared before and after it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMemvaultError, type ErrorCode } from '../../src/errors.js';
import { createVault, type Vault, type VaultOptions } from '../../src/memvault.js';
import type { ObjectStore } from '../../src/store/port.js';
import { snapshot } from '../kit/stores.js';

const USER = 'ann';
const valid = new Date();

/** One invalid call and the code it must fail with. */
interface Row {
  entry: string;
  what: string;
  code: ErrorCode;
  call: (vault: Vault, store: ObjectStore, options: VaultOptions) => Promise<unknown>;
}

// Casts: these are the calls a JavaScript host (or a TypeScript host with `any`) can make.
const any = (value: unknown) => value as never;

export const ROWS: Row[] = [
  // restore: the reported case first (it deleted every file of the user).
  {
    entry: 'restore',
    what: 'asOf: new Date(NaN)',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, { asOf: new Date(NaN) }),
  },
  {
    entry: 'restore',
    what: 'asOf: a string',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, { asOf: any('2020-01-01') }),
  },
  { entry: 'restore', what: 'asOf: a number', code: 'INVALID_INPUT', call: (v) => v.restore(USER, { asOf: any(0) }) },
  {
    entry: 'restore',
    what: 'asOf missing',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, any({ path: '/memories/a.md' })),
  },
  { entry: 'restore', what: 'no options', code: 'INVALID_INPUT', call: (v) => v.restore(USER, any(undefined)) },
  { entry: 'restore', what: 'options null', code: 'INVALID_INPUT', call: (v) => v.restore(USER, any(null)) },
  {
    entry: 'restore',
    what: 'a misspelt option (pth)',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, any({ asOf: valid, pth: '/memories/a.md' })),
  },
  {
    entry: 'restore',
    what: 'path: a number',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, { asOf: valid, path: any(7) }),
  },
  {
    entry: 'restore',
    what: 'path outside /memories',
    code: 'INVALID_PATH',
    call: (v) => v.restore(USER, { asOf: valid, path: '/memories/../etc' }),
  },
  {
    entry: 'restore',
    what: "dryRun: 'yes'",
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, { asOf: valid, dryRun: any('yes') }),
  },
  {
    entry: 'restore',
    what: 'actor: an e-mail address',
    code: 'INVALID_INPUT',
    call: (v) => v.restore(USER, { asOf: valid, actor: 'ops@example.com' }),
  },
  { entry: 'restore', what: "user ''", code: 'INVALID_USER', call: (v) => v.restore('', { asOf: valid }) },
  // history
  { entry: 'history', what: 'path: a number', code: 'INVALID_INPUT', call: (v) => v.history(USER, any(1)) },
  { entry: 'history', what: 'a relative path', code: 'INVALID_PATH', call: (v) => v.history(USER, 'memories/a.md') },
  {
    entry: 'history',
    what: 'a misspelt option',
    code: 'INVALID_INPUT',
    call: (v) => v.history(USER, '/memories', any({ actr: 'x' })),
  },
  // dropVersion
  {
    entry: 'dropVersion',
    what: 'seq NaN',
    code: 'INVALID_INPUT',
    call: (v) => v.dropVersion(USER, '/memories/a.md', NaN),
  },
  { entry: 'dropVersion', what: 'seq 0', code: 'INVALID_INPUT', call: (v) => v.dropVersion(USER, '/memories/a.md', 0) },
  {
    entry: 'dropVersion',
    what: 'seq 1.5',
    code: 'INVALID_INPUT',
    call: (v) => v.dropVersion(USER, '/memories/a.md', 1.5),
  },
  {
    entry: 'dropVersion',
    what: 'seq Infinity',
    code: 'INVALID_INPUT',
    call: (v) => v.dropVersion(USER, '/memories/a.md', Infinity),
  },
  {
    entry: 'dropVersion',
    what: "seq '1'",
    code: 'INVALID_INPUT',
    call: (v) => v.dropVersion(USER, '/memories/a.md', any('1')),
  },
  {
    entry: 'dropVersion',
    what: 'a path with ..',
    code: 'INVALID_PATH',
    call: (v) => v.dropVersion(USER, '/memories/x/../a.md', 1),
  },
  // forgetUser / exportUser
  { entry: 'forgetUser', what: "user ''", code: 'INVALID_USER', call: (v) => v.forgetUser('') },
  { entry: 'forgetUser', what: 'user: a number', code: 'INVALID_USER', call: (v) => v.forgetUser(any(42)) },
  {
    entry: 'forgetUser',
    what: 'a misspelt option',
    code: 'INVALID_INPUT',
    call: (v) => v.forgetUser(USER, any({ actorr: 'ops' })),
  },
  {
    entry: 'forgetUser',
    what: 'actor with a space',
    code: 'INVALID_INPUT',
    call: (v) => v.forgetUser(USER, { actor: 'ops team' }),
  },
  {
    entry: 'forgetUser',
    what: 'onProgress not a function',
    code: 'INVALID_INPUT',
    call: (v) => v.forgetUser(USER, { onProgress: any('log') }),
  },
  { entry: 'exportUser', what: 'options: an array', code: 'INVALID_INPUT', call: (v) => v.exportUser(USER, any([])) },
  { entry: 'exportUser', what: 'actor: empty', code: 'INVALID_INPUT', call: (v) => v.exportUser(USER, { actor: '' }) },
  // rotateKeys / verifyKeys
  { entry: 'rotateKeys', what: 'no options', code: 'INVALID_INPUT', call: (v) => v.rotateKeys(any(undefined)) },
  {
    entry: 'rotateKeys',
    what: 'to: {} (would fall back to the environment)',
    code: 'INVALID_INPUT',
    call: (v) => v.rotateKeys({ to: {} }),
  },
  {
    entry: 'rotateKeys',
    what: 'to: two key sources',
    code: 'INVALID_INPUT',
    call: (v) => v.rotateKeys({ to: { masterKey: randomBytes(32).toString('base64'), masterKeyFile: '/nonexistent' } }),
  },
  {
    entry: 'rotateKeys',
    what: 'to: a misspelt source',
    code: 'INVALID_INPUT',
    call: (v) => v.rotateKeys({ to: any({ masterkey: 'x' }) }),
  },
  {
    entry: 'verifyKeys',
    what: 'a misspelt option',
    code: 'INVALID_INPUT',
    call: (v) => v.verifyKeys(any({ onprogress: () => {} })),
  },
  // rekeyUser / rekeyAll
  {
    entry: 'rekeyUser',
    what: 'settleMs NaN',
    code: 'INVALID_INPUT',
    call: (v) => v.rekeyUser(USER, { settleMs: NaN }),
  },
  { entry: 'rekeyUser', what: 'settleMs -1', code: 'INVALID_INPUT', call: (v) => v.rekeyUser(USER, { settleMs: -1 }) },
  {
    entry: 'rekeyUser',
    what: "wait: 'no'",
    code: 'INVALID_INPUT',
    call: (v) => v.rekeyUser(USER, { wait: any('no') }),
  },
  {
    entry: 'rekeyUser',
    what: 'a misspelt option',
    code: 'INVALID_INPUT',
    call: (v) => v.rekeyUser(USER, any({ continue: true })),
  },
  {
    entry: 'rekeyAll',
    what: 'settleMs Infinity',
    code: 'INVALID_INPUT',
    call: (v) => v.rekeyAll({ settleMs: Infinity }),
  },
  { entry: 'rekeyAll', what: 'now: a number', code: 'INVALID_INPUT', call: (v) => v.rekeyAll({ now: any(5) }) },
  // expire (its deletions are what an invalid value must never cause)
  {
    entry: 'expire',
    what: 'asOf: new Date(NaN)',
    code: 'INVALID_INPUT',
    call: (v) => v.expire({ ttl: { ttlDays: 1 }, asOf: new Date(NaN) }),
  },
  {
    entry: 'expire',
    what: 'graceMs NaN',
    code: 'INVALID_INPUT',
    call: (v) => v.expire({ ttl: { ttlDays: 1 }, graceMs: NaN }),
  },
  {
    entry: 'expire',
    what: 'graceMs -1',
    code: 'INVALID_INPUT',
    call: (v) => v.expire({ ttl: { ttlDays: 1 }, graceMs: -1 }),
  },
  { entry: 'expire', what: 'ttl.ttlDays NaN', code: 'CONFIG', call: (v) => v.expire({ ttl: { ttlDays: NaN } }) },
  {
    entry: 'expire',
    what: 'a misspelt ttl key',
    code: 'CONFIG',
    call: (v) => v.expire({ ttl: any({ ttlDays: 1, ttldays: 0 }) }),
  },
  {
    entry: 'expire',
    what: 'dryrun (misspelt: would delete)',
    code: 'INVALID_INPUT',
    call: (v) => v.expire(any({ ttl: { ttlDays: 1 }, dryrun: true })),
  },
  {
    entry: 'expire',
    what: "dryRun: 'true'",
    code: 'INVALID_INPUT',
    call: (v) => v.expire({ ttl: { ttlDays: 1 }, dryRun: any('true') }),
  },
  {
    entry: 'expire',
    what: 'deleter: {}',
    code: 'INVALID_INPUT',
    call: (v) => v.expire({ ttl: { ttlDays: 1 }, deleter: any({}) }),
  },
  // the model-facing entries
  { entry: 'tool', what: "extraProps: 'x'", code: 'INVALID_INPUT', call: async (v) => v.tool(USER, any('x')) },
  { entry: 'tool', what: "user ''", code: 'INVALID_USER', call: async (v) => v.tool('') },
  { entry: 'handlers', what: 'user: null', code: 'INVALID_USER', call: async (v) => v.handlers(any(null)) },
  { entry: 'files', what: 'user: a control character', code: 'INVALID_USER', call: (v) => v.files('a\u0000b') },
  // createVault on the same (seeded) store: refused before anything is opened
  {
    entry: 'createVault',
    what: 'a misspelt option (histroy)',
    code: 'CONFIG',
    call: (_v, store, o) => createVault(any({ ...o, store, histroy: false })),
  },
  {
    entry: 'createVault',
    what: "createMode: 'fial'",
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, createMode: any('fial') }),
  },
  {
    entry: 'createVault',
    what: 'create: 0',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, create: any(0) }),
  },
  {
    entry: 'createVault',
    what: 'limits.viewChars NaN',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, limits: { viewChars: NaN } }),
  },
  {
    entry: 'createVault',
    what: 'a misspelt limit',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, limits: any({ maxFileByte: 1 }) }),
  },
  {
    entry: 'createVault',
    what: 'history: a misspelt knob',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, history: any({ maxversions: 5 }) }),
  },
  {
    entry: 'createVault',
    what: 'expiry.ttlDays NaN',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, expiry: { ttlDays: NaN } }),
  },
  {
    entry: 'createVault',
    what: 'expiry.touchIntervalMs NaN',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, expiry: { ttlDays: 2, touchIntervalMs: NaN } }),
  },
  {
    entry: 'createVault',
    what: 'middlewares: not an array',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, middlewares: any(() => {}) }),
  },
  {
    entry: 'createVault',
    what: 'encryption: a misspelt key',
    code: 'CONFIG',
    call: (_v, store, o) =>
      createVault({ ...o, store, encryption: any({ ...(o.encryption as object), masterKeyFiel: '/x' }) }),
  },
  {
    entry: 'createVault',
    what: 'pii: a misspelt type',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, pii: { policy: any({ EMAILS: 'allow' }) } }),
  },
  {
    entry: 'createVault',
    what: "pii: policy 'ignore'",
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, pii: { policy: { EMAIL: any('ignore') } } }),
  },
  {
    entry: 'createVault',
    what: 'quota: a misspelt limit',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, quota: any({ maxUserByte: 10 }) }),
  },
  {
    entry: 'createVault',
    what: 'audit: a misspelt option',
    code: 'CONFIG',
    call: (_v, store, o) => createVault({ ...o, store, audit: any({ flie: '/tmp/x' }) }),
  },
  { entry: 'createVault', what: "options: 'memory:'", code: 'CONFIG', call: () => createVault(any('memory:')) },
];

/** Runs every row against a vault on a store from `makeStore`, seeded with a user, two files and their versions. */
export function runApiValidationSuite(label: string, makeStore: () => Promise<ObjectStore>): void {
  describe(`public API arguments (${label}): an invalid value is a typed error and changes nothing`, () => {
    const options: VaultOptions = { encryption: { masterKey: randomBytes(32).toString('base64') } };
    let vault: Vault;
    let store: ObjectStore;
    beforeAll(async () => {
      store = await makeStore();
      vault = await createVault({ ...options, store });
      for (const [path, text] of [
        ['/memories/a.md', 'one\n'],
        ['/memories/a.md', 'two\n'],
        ['/memories/notes/b.md', 'three\n'],
      ] as const) {
        const r = await vault.run(USER, { command: 'create', path, file_text: text });
        expect(r.isError, String(r.content)).toBe(false);
      }
    }, 120_000);
    afterAll(async () => {
      await vault?.close();
    });

    it.each(ROWS.map((row) => [`${row.entry}: ${row.what}`, row] as const))('%s', async (_name, row) => {
      const before = await snapshot(store);
      let error: unknown;
      try {
        const result = await row.call(vault, store, options);
        // A vault opened by a row that should have been refused is closed, then the row fails.
        if (result && typeof (result as Vault).close === 'function') await (result as Vault).close();
      } catch (e) {
        error = e;
      }
      expect(isMemvaultError(error), `expected a MemvaultError ${row.code}, got ${String(error)}`).toBe(true);
      expect((error as { code: string }).code).toBe(row.code);
      // A clear one-line message naming the argument; no stack trace or key in it.
      expect((error as Error).message).not.toMatch(/\n\s+at /);
      expect(await snapshot(store)).toEqual(before);
    });

    it('the valid forms of the same calls still work (the checks refuse only what means nothing)', async () => {
      const { versions } = await vault.history(USER, '/memories/', { actor: 'ops-1' });
      expect(versions.map((v) => v.path)).toContain('/memories/a.md');
      const dry = await vault.restore(USER, { asOf: new Date(0), dryRun: true, actor: undefined });
      expect(dry.dryRun).toBe(true);
      expect(dry.deleted).toBe(2);
      expect(await vault.dropVersion(USER, '/memories/notes/b.md', 999_999)).toBe(false);
      expect((await vault.rekeyUser(USER, { wait: false, settleMs: 0 })).uid).toMatch(/\S/);
    }, 120_000);
  });
}
