/**
 * The embedded store's default key file `<dir>.key` lives beside the
 * data, so a copy of the parent folder carries both. Every start-up that uses it says so, loudly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createVault, defaultMasterKeyFileFor } from '../../src/memvault.js';
import { recordingLogger } from './planted-objects.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const besideData = (lines: ReturnType<typeof recordingLogger>['lines']) =>
  lines.filter((l) => /beside the store/.test(typeof l.fields === 'string' ? l.fields : String(l.message ?? '')));

describe('the default key file beside a file store', () => {
  it('is announced as beside the data on every start, not only the first, at warn level and with its path', async () => {
    dir = await mkdtemp(join(tmpdir(), 'memvault-defkey-'));
    const url = pathToFileURL(join(dir, 'data')).href;
    const keyFile = defaultMasterKeyFileFor(url);
    expect(keyFile).toBe(`${join(dir, 'data')}.key`);
    for (const start of ['first', 'second']) {
      const { logger, lines } = recordingLogger();
      const vault = await createVault({ store: url, logger });
      expect((await vault.run('u', { command: 'create', path: `/memories/${start}.md`, file_text: 'x' })).isError).toBe(
        false,
      );
      await vault.close();
      const warned = besideData(lines);
      expect(warned, start).toHaveLength(1);
      expect(warned[0]!.level).toBe('warn');
      const text = typeof warned[0]!.fields === 'string' ? warned[0]!.fields : String(warned[0]!.message);
      expect(text).toContain(keyFile);
      expect(text).toContain('a copy of the parent folder carries the data and its key together');
      expect(text).toContain('MEMVAULT_MASTER_KEY_FILE');
    }
  });

  it('is not said when the key comes from elsewhere', async () => {
    dir = await mkdtemp(join(tmpdir(), 'memvault-defkey-'));
    const keyFile = join(dir, 'elsewhere.key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    const { logger, lines } = recordingLogger();
    const vault = await createVault({
      store: pathToFileURL(join(dir, 'data')).href,
      encryption: { masterKeyFile: keyFile },
      logger,
    });
    await vault.close();
    expect(besideData(lines)).toEqual([]);
    expect(lines.some((l) => /encryption: local-master-key/.test(typeof l.fields === 'string' ? l.fields : ''))).toBe(
      true,
    );
  });
});
