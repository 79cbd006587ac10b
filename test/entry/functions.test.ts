/**
 * For the package's plain functions (src/entry/functions.ts): a misspelt or
 * mistyped option is a typed error and nothing is created, and verification never reports ok
 * on options it could not use.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openExistingStore, openStore } from '../../src/index.js';
import { createAuditLogger, piiRedactor, quota } from '../../src/chain.js';
import { collectFileChains, verifyChains } from '../../src/verify.js';

const dir = mkdtempSync(join(tmpdir(), 'memvault-functions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const any = (value: unknown) => value as never;

describe('openStore and openExistingStore', () => {
  it.each([
    ['a misspelt create (craete: false)', () => openStore(`file://${join(dir, 'a')}`, any({ craete: false }))],
    ['create: a string', () => openStore(`file://${join(dir, 'b')}`, { create: any('no') })],
    [
      "s3Options.conditionChecks: 'nativ'",
      () => openStore(`file://${join(dir, 'c')}`, { s3Options: { conditionChecks: any('nativ') } }),
    ],
    ['the URL: not a string', () => openStore(any(new URL(`file://${join(dir, 'd')}`)))],
    ['openExistingStore with create', () => openExistingStore(`file://${join(dir, 'e')}`, any({ create: true }))],
  ])('%s: CONFIG, and no directory is created', async (_what, call) => {
    await expect(call()).rejects.toMatchObject({ name: 'MemvaultError', code: 'CONFIG' });
    for (const name of ['a', 'b', 'c', 'd', 'e']) expect(existsSync(join(dir, name))).toBe(false);
  });

  it('the valid forms still open (create: false refuses a missing directory, the default creates it)', async () => {
    await expect(openStore(`file://${join(dir, 'f')}`, { create: false })).rejects.toMatchObject({ code: 'CONFIG' });
    expect(existsSync(join(dir, 'f'))).toBe(false);
    const store = await openStore(`file://${join(dir, 'f')}`);
    expect(existsSync(join(dir, 'f'))).toBe(true);
    await store.close();
  });
});

describe('verifyChains fails closed on options it cannot use', () => {
  it('a misspelt macKey, a string key or no chains: INVALID_INPUT, never a report', async () => {
    const macKey = randomBytes(32);
    const file = join(dir, 'audit.jsonl');
    const logger = await createAuditLogger({ file, macKey });
    logger.append({ type: 'expire', outcome: 'ok' });
    await logger.close();
    const chains = await collectFileChains([file]);
    // The valid call checks the MACs and passes; with the wrong key it fails (so the key is used).
    expect((await verifyChains(chains, { macKey })).ok).toBe(true);
    expect((await verifyChains(chains, { macKey: randomBytes(32) })).ok).toBe(false);
    for (const [options, target] of [
      [{ mackey: macKey }, chains],
      [{ macKey: macKey.toString('base64') }, chains],
      [{ witnesses: 'none' }, chains],
      [{ macKey }, { chains: 'all' }],
    ] as const) {
      await expect(verifyChains(any(target), any(options))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
  });
});

describe('the middlewares a host composes itself', () => {
  it.each([
    ['quota: a misspelt limit', () => quota(any({ maxUserByte: 10 }))],
    ['quota: options null', () => quota(any(null))],
    ['piiRedactor: a misspelt type', () => piiRedactor({ policy: any({ EMAILS: 'allow' }) })],
    ["piiRedactor: policy 'ignore'", () => piiRedactor({ policy: { EMAIL: any('ignore') } })],
    ['piiRedactor: a misspelt option', () => piiRedactor(any({ alowList: ['ops@example.com'] }))],
  ])('%s: CONFIG', (_what, make) => {
    let error: unknown;
    try {
      make();
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'MemvaultError', code: 'CONFIG' });
  });

  it('their valid options still make a middleware', () => {
    expect(typeof quota({ maxUserBytes: 10_000 })).toBe('function');
    expect(typeof piiRedactor({ policy: { EMAIL: 'allow' }, allowList: ['ops@example.com'] })).toBe('function');
    expect(typeof piiRedactor()).toBe('function');
  });
});

describe('memvault/s3 createS3Store', () => {
  it.each([
    [
      "conditionChecks: 'nativ' (would skip the HEAD that RGW needs)",
      { url: 's3://bucket/p', conditionChecks: 'nativ' },
    ],
    ['a misspelt option', { url: 's3://bucket/p', conditionCheck: 'native' }],
    ['restateTagsOnReplace: a string', { url: 's3://bucket/p', restateTagsOnReplace: 'no' }],
    ['no url', { conditionChecks: 'native' }],
  ])('%s: CONFIG', async (_what, options) => {
    const { createS3Store } = await import('../../src/s3.js');
    expect(() => createS3Store(any(options))).toThrow(
      expect.objectContaining({ name: 'MemvaultError', code: 'CONFIG' }) as Error,
    );
  });

  it('valid options make a store', async () => {
    const { createS3Store } = await import('../../src/s3.js');
    const store = createS3Store({
      url: 's3://bucket/p',
      s3: { region: 'us-east-1' },
      conditionChecks: 'native',
      restateTagsOnReplace: false,
    });
    expect(store.kind).toBe('s3');
    await store.close();
  });
});
