/**
 * publishTemporary (src/util/fs.ts) on a file system without hard links, where link(2) answers
 * EPERM: the name is taken with an exclusive create instead, so a file already there is still never
 * replaced, and a free name still receives the temporary whole.
 */
import type * as FsPromises from 'node:fs/promises';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { publishTemporary, temporaryPathFor } from '../../src/util/fs.js';

const links = vi.hoisted(() => ({ tried: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  return {
    ...actual,
    link: async () => {
      links.tried += 1;
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    },
  };
});

describe('publishTemporary without hard links', () => {
  it('publishes at a free name and refuses a taken one with EEXIST, the file there kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memvault-nolinks-'));
    try {
      const target = join(dir, 'copy.db');
      const first = temporaryPathFor(target);
      writeFileSync(first, 'ours');
      await publishTemporary(first, target);
      expect(links.tried).toBe(1);
      expect(readFileSync(target, 'utf8')).toBe('ours');
      expect(existsSync(first)).toBe(false);
      const second = temporaryPathFor(target);
      writeFileSync(second, 'another');
      await expect(publishTemporary(second, target)).rejects.toMatchObject({ code: 'EEXIST' });
      expect(readFileSync(target, 'utf8')).toBe('ours');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
