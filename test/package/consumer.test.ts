/**
 * memvault as a dependency, tried the way an adopting team would: `npm pack`, then install the
 * tarball into a fresh strict TypeScript project that brings its own @anthropic-ai/sdk and
 * @aws-sdk/client-s3 at the LOW end of memvault's peer ranges (the repo itself develops against the
 * high end, so one `npm test` covers both). Asserts one copy of each SDK, .d.ts files that typecheck
 * under NodeNext / node16 / bundler resolution with and without esModuleInterop, the README's
 * toolRunner example with every tool_result exact, the app's own S3Client being the one that sends,
 * and what `require('memvault')` does.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

/** The low ends of the peer ranges in package.json (checked below), not the dev versions. */
const CONSUMER_SDK = '1.0.0';
const CONSUMER_S3 = '3.750.0';

let project = '';

async function sh(cmd: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_loglevel: 'error' } });
}

beforeAll(async () => {
  if (!existsSync(join(repo, 'dist', 'index.js'))) await sh('npm', ['run', 'build'], repo);
  project = await mkdtemp(join(tmpdir(), 'memvault-consumer-'));
  // dist/ is fresh: `npm test` builds before vitest runs (prepack would build again).
  const { stdout } = await sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], repo);
  const tarball = join(project, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'consumer-app',
      private: true,
      type: 'module',
      dependencies: {
        memvault: `file:${tarball}`,
        '@anthropic-ai/sdk': CONSUMER_SDK,
        '@aws-sdk/client-s3': CONSUMER_S3,
        '@types/node': '22.20.7',
      },
    }),
  );
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], project);
  await mkdir(join(project, 'src'));
  await copyFile(join(repo, 'test', 'package', 'consumer', 'app.ts'), join(project, 'src', 'app.ts'));
}, 600_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('memvault installed from its tarball into a consumer app', () => {
  it('peer ranges start at the versions this test installs', async () => {
    const pkg = (await import(join(repo, 'package.json'), { with: { type: 'json' } })) as {
      default: { peerDependencies: Record<string, string> };
    };
    expect(pkg.default.peerDependencies['@anthropic-ai/sdk']).toBe(`^${CONSUMER_SDK}`);
    expect(pkg.default.peerDependencies['@aws-sdk/client-s3']).toBe(`^${CONSUMER_S3}`);
  });

  it('npm ls shows one copy of each SDK: the app’s own', async () => {
    for (const [name, version] of [
      ['@anthropic-ai/sdk', CONSUMER_SDK],
      ['@aws-sdk/client-s3', CONSUMER_S3],
    ] as const) {
      const { stdout } = await sh('npm', ['ls', name, '--all', '--json'], project);
      const versions = new Set<string>();
      const walk = (node: { version?: string; dependencies?: Record<string, unknown> }, key?: string): void => {
        if (key === name && node.version) versions.add(node.version);
        for (const [k, child] of Object.entries(node.dependencies ?? {})) walk(child as typeof node, k);
      };
      walk(JSON.parse(stdout) as Parameters<typeof walk>[0]);
      expect([...versions], name).toEqual([version]);
    }
  });

  it('ships no source maps, a LICENSE, and no install-time build', async () => {
    const installed = join(project, 'node_modules', 'memvault');
    const files = await readdir(join(installed, 'dist'), { recursive: true });
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(existsSync(join(installed, 'LICENSE'))).toBe(true);
    const pkg = (await import(join(installed, 'package.json'), { with: { type: 'json' } })) as {
      default: { scripts?: Record<string, string> };
    };
    expect(pkg.default.scripts?.['prepare']).toBeUndefined();
    expect(pkg.default.scripts?.['postinstall']).toBeUndefined();
  });

  const settings: Array<[string, Record<string, unknown>]> = [
    ['NodeNext, esModuleInterop', { module: 'NodeNext', moduleResolution: 'NodeNext', esModuleInterop: true }],
    ['NodeNext, no esModuleInterop', { module: 'NodeNext', moduleResolution: 'NodeNext', esModuleInterop: false }],
    ['node16, no esModuleInterop', { module: 'node16', moduleResolution: 'node16', esModuleInterop: false }],
    ['bundler, esModuleInterop', { module: 'ESNext', moduleResolution: 'bundler', esModuleInterop: true }],
    ['bundler, no esModuleInterop', { module: 'ESNext', moduleResolution: 'bundler', esModuleInterop: false }],
  ];
  it.each(settings)(
    'the README example and memvault’s .d.ts typecheck strictly (%s)',
    async (_name, options) => {
      const config = {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          noEmit: true,
          // memvault's own declarations are checked; the SDKs' are theirs to keep.
          skipLibCheck: false,
          ...options,
        },
        files: [
          'src/app.ts',
          ...['index', 'chain', 'verify', 'pii'].map((entry) => `node_modules/memvault/dist/${entry}.d.ts`),
        ],
      };
      const file = `tsconfig.${String(options['moduleResolution'])}.${String(options['esModuleInterop'])}.json`;
      await writeFile(join(project, file), JSON.stringify(config));
      const result = await sh(process.execPath, [tsc, '-p', file], project).catch((e: { stdout?: string }) => ({
        stdout: e.stdout ?? String(e),
        stderr: '',
      }));
      const ours = result.stdout
        .split('\n')
        .filter((l) => l.includes('error TS') && (l.startsWith('src/') || l.includes('node_modules/memvault/')));
      expect(ours).toEqual([]);
    },
    120_000,
  );

  it('runs the README toolRunner example: every tool_result exact, the app’s S3Client sends', async () => {
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'out',
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['src/app.ts'],
      }),
    );
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], project);
    const { stdout } = await sh(process.execPath, ['out/app.js'], project);
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      runner: Array<{ tools: unknown; last: { role: string; content: unknown } }>;
      s3Commands: string[];
    };
    expect(out.runner).toHaveLength(4);
    expect(out.runner[0]!.tools).toEqual([
      { type: 'memory_20250818', name: 'memory', cache_control: { type: 'ephemeral' } },
    ]);
    expect(out.runner[1]!.last.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: 'File created successfully at: /memories/plan.md' },
    ]);
    const second = out.runner[2]!.last.content as Array<Record<string, unknown>>;
    expect(second[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 's1',
      content:
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tlaunch: monday',
    });
    expect(second[1]).toMatchObject({ tool_use_id: 'bad', is_error: true });
    expect(String(second[1]!['content'])).toMatch(/^Error: Invalid path "\/memories\/\.\.\/etc\/passwd"/);
    expect(second[2]).toEqual({
      type: 'tool_result',
      tool_use_id: 'missing',
      is_error: true,
      content: 'No replacement was performed, old_str `tuesday` did not appear verbatim in /memories/plan.md.',
    });
    const third = out.runner[3]!.last.content as Array<Record<string, unknown>>;
    expect(third).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'v1',
        content: "Here's the content of /memories/plan.md with line numbers:\n     1\tlaunch: monday",
      },
    ]);
    // The app's client, with its own middleware, is the one that sent memvault's first request.
    expect(out.s3Commands.length).toBeGreaterThan(0);
    expect(out.s3Commands[0]).toMatch(/Command$/);
  }, 120_000);

  it('the root exports what a host needs; the chain, verification and PII are on their subpaths', async () => {
    const script = [
      "const names = async (entry) => Object.keys(await import(entry)).sort().join(',');",
      'const out = {};',
      "for (const entry of ['memvault', 'memvault/chain', 'memvault/verify', 'memvault/pii']) out[entry] = await names(entry);",
      'process.stdout.write(JSON.stringify(out));',
    ].join('\n');
    const { stdout } = await sh(process.execPath, ['--input-type=module', '-e', script], project);
    const out = JSON.parse(stdout) as Record<string, string>;
    expect(out['memvault']?.split(',')).toEqual([
      'EXPORT_MANIFEST_FORMAT',
      'EXPORT_MANIFEST_NAME',
      'FileStore',
      'MemoryStore',
      'MemvaultError',
      'PreconditionFailedError',
      'createVault',
      'fromEnv',
      'openExistingStore',
      'openStore',
      'validateUserId',
    ]);
    expect(out['memvault/chain']?.split(',')).toEqual([
      'DEFAULT_QUOTA',
      'canonicalizePath',
      'compose',
      'createAuditLogger',
      'defaultChain',
      'piiRedactor',
      'quota',
      'redactForLog',
    ]);
    expect(out['memvault/verify']?.split(',')).toEqual([
      'collectFileChains',
      'collectStoreChains',
      'readCheckpointFile',
      'verifyChains',
    ]);
    expect(out['memvault/pii']?.split(',')).toEqual(['DEFAULT_PHONE_REGIONS', 'PII_TYPES', 'redact', 'scan']);
  });

  it('require("memvault") loads the ESM build on Node ≥ 22.12 (require of ES modules)', async () => {
    const script = "const m = require('memvault'); process.stdout.write(typeof m.createVault);";
    const result = await sh(process.execPath, ['-e', script], project).catch((e: { stderr?: string }) => ({
      stdout: '',
      stderr: e.stderr ?? '',
    }));
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if (major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19)) {
      expect(result.stdout).toBe('function');
    } else {
      expect(result.stderr).toMatch(/ERR_REQUIRE_ESM|ES Module/);
    }
  });
});
