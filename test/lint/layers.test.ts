// `npm run lint` runs scripts/depcruise.mjs with .dependency-cruiser.cjs. These tests plant a cycle and
// upward imports in a throw-away tree laid out like src/ and check that the project's own config fails
// on each (and passes the same tree without them), so the check cannot silently stop checking.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Each run starts dependency-cruiser in a node of its own (Node >= 22): slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const root = resolve(import.meta.dirname, '../..');
const script = join(root, 'scripts', 'depcruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** A tree with the given files (path -> source) plus a tsconfig like the project's. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'memvault-layers-'));
  dirs.push(dir);
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src'],
    }),
    // A legal base: each layer imports one below it.
    'src/errors.ts': 'export class MemvaultError extends Error {}\n',
    'src/store/port.ts':
      "import { MemvaultError } from '../errors.js';\nexport class PreconditionFailedError extends MemvaultError {}\n",
    'src/vault/user-files.ts': "export { PreconditionFailedError } from '../store/port.js';\n",
    'src/tool/commands/edit.ts':
      "import { PreconditionFailedError } from '../../vault/user-files.js';\nexport const E = PreconditionFailedError;\n",
    'src/pipeline/context.ts':
      "import type { E } from '../tool/commands/edit.js';\nexport type Ctx = { e: typeof E };\n",
    'src/memvault.ts': "export type { Ctx } from './pipeline/context.js';\n",
    'src/cli/main.ts': "export type { Ctx } from '../memvault.js';\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function lint(dir: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [script, '--config', config, 'src'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the layer check (npm run lint)', () => {
  it('passes a tree whose imports all point down', () => {
    const r = lint(tree({}));
    expect(r.output).toContain('no dependency violations found');
    expect(r.status).toBe(0);
  });

  it('fails on an import cycle between two files of one layer', () => {
    const r = lint(
      tree({
        'src/vault/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
        'src/vault/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      }),
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/no-circular: src\/vault\/(a|b)\.ts/);
  });

  it('fails on an upward import (vault -> pipeline), also when it is type-only: the cycle the vault once had', () => {
    const r = lint(
      tree({ 'src/vault/stats.ts': "import type { Ctx } from '../pipeline/context.js';\nexport type S = Ctx;\n" }),
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('layer-vault: src/vault/stats.ts → src/pipeline/context.ts');
  });

  it('fails when the protocol layer reaches past the vault into a layer above it, or the store into crypto', () => {
    const r = lint(
      tree({
        'src/tool/up.ts': "export { quota } from '../pipeline/quota.js';\n",
        'src/pipeline/quota.ts': 'export const quota = 1;\n',
        'src/store/keys.ts': "import { k } from '../crypto/k.js';\nexport const key = k;\n",
        'src/crypto/k.ts': 'export const k = 1;\n',
      }),
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('layer-tool: src/tool/up.ts → src/pipeline/quota.ts');
    expect(r.output).toContain('layer-store: src/store/keys.ts → src/crypto/k.ts');
  });

  it('fails when a side service imports the chain (audit -> pipeline) or a leaf imports the store (telemetry -> store)', () => {
    const r = lint(
      tree({
        'src/audit/logger.ts': "import type { Ctx } from '../pipeline/context.js';\nexport type L = Ctx;\n",
        'src/telemetry/store.ts':
          "import { PreconditionFailedError } from '../store/port.js';\nexport const P = PreconditionFailedError;\n",
      }),
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('layer-audit: src/audit/logger.ts → src/pipeline/context.ts');
    expect(r.output).toContain('layer-telemetry: src/telemetry/store.ts → src/store/port.ts');
  });

  it('fails on a module in a folder that has no layer', () => {
    const r = lint(
      tree({ 'src/newthing/x.ts': "import { MemvaultError } from '../errors.js';\nexport const X = MemvaultError;\n" }),
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('no-unlayered: src/newthing/x.ts');
  });

  it('passes the project itself', () => {
    const r = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(`${r.stdout}${r.stderr}`).toContain('no dependency violations found');
    expect(r.status).toBe(0);
  });
});
