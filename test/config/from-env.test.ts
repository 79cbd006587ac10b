/**
 * fromEnv(env): createVault's options from an environment through the one table. The library never
 * reads process.env by itself; what a host hands fromEnv is read and left unchanged; a bad value is
 * one CONFIG error naming the variable; the touch interval is applied and follows a short TTL.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fromEnv, sweeperFromEnv } from '../../src/config/from-env.js';
import { isMemvaultError } from '../../src/errors.js';
import { createVault, type VaultOptions } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, type ObjectInfo } from '../../src/store/port.js';
import { expirySetup } from '../kit/expiry.js';

const HOUR_MS = 3_600_000;
const key = () => randomBytes(32).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'memvault-from-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(objects: AsyncIterable<ObjectInfo>): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const object of objects) out.push(object);
  return out;
}

function configError(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    expect(isMemvaultError(e, 'CONFIG'), String(e)).toBe(true);
    return e as Error;
  }
  throw new Error('expected a CONFIG error');
}

describe('fromEnv', () => {
  it('maps every vault variable to its option, and leaves the env object as it was', () => {
    const master = key();
    const previous = key();
    const env = {
      MEMVAULT_STORE: 's3://bucket/prefix',
      MEMVAULT_MASTER_KEY: master,
      MEMVAULT_PREVIOUS_MASTER_KEY: previous,
      MEMVAULT_PREVIOUS_KMS_KEY_ID: 'alias/old',
      MEMVAULT_DEPLOYMENT_FINGERPRINT: 'abc.def',
      MEMVAULT_CREATE_KEY_FILE: 'yes',
      MEMVAULT_HOME: '/srv/keys',
      MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:9',
      MEMVAULT_S3_REGION: 'eu-west-3',
      MEMVAULT_S3_ACCESS_KEY_ID: 'a',
      MEMVAULT_S3_SECRET_ACCESS_KEY: 'b',
      MEMVAULT_TTL_DAYS: '7',
      MEMVAULT_TTL_CLASSES: '{"pro":365}',
      MEMVAULT_TOUCH_INTERVAL_HOURS: '6',
      MEMVAULT_HISTORY_DAYS: '10',
      MEMVAULT_HISTORY_VERSIONS: '5',
      MEMVAULT_AUDIT_FILE: '/var/log/memvault.jsonl',
      MEMVAULT_AUDIT_CHECKPOINT_FILE: '/var/log/heads',
    };
    const copy = { ...env };
    const options: VaultOptions = fromEnv(env); // assignable to createVault's options
    expect(options).toEqual({
      store: 's3://bucket/prefix',
      s3: {
        endpoint: 'http://127.0.0.1:9',
        region: 'eu-west-3',
        forcePathStyle: true,
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      },
      encryption: {
        masterKey: master,
        previous: [{ masterKey: previous }, { kms: { keyId: 'alias/old' } }],
        deploymentFingerprint: 'abc.def',
        createKeyFile: true,
        defaultKeyDir: '/srv/keys',
      },
      expiry: { ttlDays: 7, classes: { pro: 365 }, defaultClass: 'default', touchIntervalMs: 6 * HOUR_MS },
      history: { retentionDays: 10, maxVersions: 5 },
      audit: { file: '/var/log/memvault.jsonl', checkpoint: { file: '/var/log/heads' } },
    });
    expect(env).toEqual(copy);
    expect(fromEnv({})).toEqual({});
    expect(fromEnv({ MEMVAULT_HISTORY: '0', MEMVAULT_HISTORY_DAYS: '10' })).toEqual({ history: false });
  });

  it.each([
    [{ MEMVAULT_TOUCH_INTERVAL_HOURS: 'soon' }, 'MEMVAULT_TOUCH_INTERVAL_HOURS'],
    [{ MEMVAULT_TTL_DAYS: '1.5' }, 'MEMVAULT_TTL_DAYS'],
    [{ MEMVAULT_TTL_CLASSES: '[1]' }, 'MEMVAULT_TTL_CLASSES'],
    [{ MEMVAULT_TTL_CLASSES: '{"pro":365}' }, 'MEMVAULT_TTL_DAYS'],
    [{ MEMVAULT_HISTORY_VERSIONS: '5000' }, 'MEMVAULT_HISTORY_VERSIONS'],
    [{ MEMVAULT_CREATE_KEY_FILE: 'perhaps' }, 'MEMVAULT_CREATE_KEY_FILE'],
    [{ MEMVAULT_MASTER_KEY: 'c2hvcnQ=' }, 'MEMVAULT_MASTER_KEY'],
    [{ MEMVAULT_MASTER_KEY: key(), MEMVAULT_KMS_KEY_ID: 'alias/x' }, 'MEMVAULT_KMS_KEY_ID'],
    [{ MEMVAULT_S3_ACCESS_KEY_ID: 'a' }, 'MEMVAULT_S3_SECRET_ACCESS_KEY'],
  ] as Array<[Record<string, string>, string]>)('%j is one CONFIG error naming %s', (env, name) => {
    const error = configError(() => fromEnv(env));
    expect(error.message).toContain(name);
    expect(error.message.split('\n')).toHaveLength(1);
    if (env['MEMVAULT_MASTER_KEY']) expect(error.message).not.toContain(env['MEMVAULT_MASTER_KEY']);
  });

  it('the sweeper variables: a mode other than native or recheck, or a negative number, names the variable', () => {
    expect(
      sweeperFromEnv({
        MEMVAULT_CONDITIONAL_DELETE: 'NATIVE',
        MEMVAULT_EXPIRE_GRACE_MINUTES: '0',
        MEMVAULT_SWEEP_OVERDUE_HOURS: '12',
      }),
    ).toEqual({
      conditionalDelete: 'native',
      graceMinutes: 0,
      overdueHours: 12,
    });
    expect(configError(() => sweeperFromEnv({ MEMVAULT_CONDITIONAL_DELETE: 'sometimes' })).message).toContain(
      'MEMVAULT_CONDITIONAL_DELETE',
    );
    expect(configError(() => sweeperFromEnv({ MEMVAULT_SWEEP_STOP_MARGIN_SECONDS: '-1' })).message).toContain(
      'MEMVAULT_SWEEP_STOP_MARGIN_SECONDS',
    );
  });
});

describe('MEMVAULT_TOUCH_INTERVAL_HOURS takes effect, and the default follows a short TTL', () => {
  it('a one-day TTL alone opens and touches every 12 hours; a 3-day TTL with 2 hours touches every 2 hours', async () => {
    const oneDay = fromEnv({ MEMVAULT_TTL_DAYS: '1' });
    expect((await expirySetup(oneDay.expiry)).expiry.touchIntervalMs).toBe(12 * HOUR_MS);
    const vault = await createVault({ store: new MemoryStore(), ...oneDay });
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'x' })).isError).toBe(false);
    await vault.close();

    const { clock, expiry, files, store } = await expirySetup(
      fromEnv({ MEMVAULT_TTL_DAYS: '3', MEMVAULT_TOUCH_INTERVAL_HOURS: '2' }).expiry,
    );
    expect(expiry.touchIntervalMs).toBe(2 * HOUR_MS);
    await files.write('/memories/a.md', new TextEncoder().encode('x'));
    const stamps = async () => (await collect(listAll(store, ''))).map((o) => o.lastModified.getTime());
    const written = await stamps();
    clock.advanceMs(3 * HOUR_MS);
    await files.read('/memories/a.md');
    const after = await stamps();
    // A read 3 hours on, past the 2-hour interval, touched the file (a 6-hour interval would not have).
    expect(Math.max(...after)).toBeGreaterThan(Math.max(...written));
  });

  it('an interval as long as the TTL is one CONFIG error at start-up naming the variable to lower', async () => {
    await expect(
      createVault({
        store: new MemoryStore(),
        ...fromEnv({ MEMVAULT_TTL_DAYS: '1', MEMVAULT_TOUCH_INTERVAL_HOURS: '24' }),
      }),
    ).rejects.toThrow(/MEMVAULT_TOUCH_INTERVAL_HOURS/);
  });
});

describe('the library never reads process.env by itself', () => {
  it('createVault ignores MEMVAULT_MASTER_KEY in process.env; fromEnv() hands it over', async () => {
    const saved = process.env['MEMVAULT_MASTER_KEY'];
    const master = key();
    process.env['MEMVAULT_MASTER_KEY'] = master;
    try {
      const url = pathToFileURL(join(dir, 'plain')).href;
      const vault = await createVault({ store: url });
      await vault.close();
      // No key configured in code: the default key file beside the store was made, the variable not used.
      expect(existsSync(join(dir, 'plain.key'))).toBe(true);

      const other = pathToFileURL(join(dir, 'from-env')).href;
      const withEnv = await createVault({ store: other, ...fromEnv() });
      expect((await withEnv.run('u', { command: 'create', path: '/memories/a.md', file_text: 'x' })).isError).toBe(
        false,
      );
      await withEnv.close();
      expect(existsSync(join(dir, 'from-env.key'))).toBe(false);
      expect(process.env['MEMVAULT_MASTER_KEY']).toBe(master);
    } finally {
      if (saved === undefined) delete process.env['MEMVAULT_MASTER_KEY'];
      else process.env['MEMVAULT_MASTER_KEY'] = saved;
    }
  });
});
