/**
 * memvault as a platform engineer gets it: `npm pack`, the tarball installed into a fresh CDK app
 * (extracted to node_modules/memvault as npm does; its dependencies and the app's aws-cdk-lib,
 * constructs and esbuild are linked from this checkout's node_modules, so nothing is fetched), an
 * app that imports `memvault/infra` and synthesizes offline, with Docker unavailable and any network
 * access failing, and the sweeper bundle it produced run once. The app also typechecks against the
 * package's .d.ts files (strict, NodeNext).
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const repoModules = realpathSync(join(repo, 'node_modules'));

const APP = `
import { App, Stack } from 'aws-cdk-lib';
import { MemvaultStorage } from 'memvault/infra';

const app = new App({ outdir: process.argv[2], stackTraces: false });
const stack = new Stack(app, 'ConsumerStack');
const storage = new MemvaultStorage(stack, 'Memvault', { keyAlias: 'alias/consumer-memvault', ttlClasses: { default: 14 } });
const assembly = app.synth();
console.log(JSON.stringify({ stacks: assembly.stacks.map((s) => s.stackName), hasFunction: storage.sweeperFunction !== undefined }));
`;

// A CommonJS app, as `cdk init app --language typescript` makes: require() of the ES module (Node 20.19+, 22.12+).
const CJS_APP = `
const { App, Stack } = require('aws-cdk-lib');
const { MemvaultStorage } = require('memvault/infra');
const app = new App({ outdir: process.argv[2], stackTraces: false });
new MemvaultStorage(new Stack(app, 'CommonJsStack'), 'Memvault', { sweeper: false });
console.log(JSON.stringify(app.synth().stacks.map((s) => s.stackName)));
`;

const TYPED_APP = `
import { App, Stack } from 'aws-cdk-lib';
import { MemvaultStorage, type MemvaultStorageProps } from 'memvault/infra';
import { createSweeperHandler, type SweeperResult } from 'memvault/lambda';

const props: MemvaultStorageProps = { keyPolicy: 'application-only', sweeper: { continueSchedule: false } };
const storage: MemvaultStorage = new MemvaultStorage(new Stack(new App(), 'Typed'), 'M', props);
const url: string = storage.storeUrl;
const handler = createSweeperHandler({ env: {} });
const result: Promise<SweeperResult> = handler({ mode: 'continue' }, { getRemainingTimeInMillis: () => 1000 });
void url;
void result;
// @ts-expect-error keyPolicy takes two values only
const bad: MemvaultStorageProps = { keyPolicy: 'everyone' };
void bad;
`;

const RUN_BUNDLE = `
import { pathToFileURL } from 'node:url';
const [bundle, store] = process.argv.slice(2);
process.env.MEMVAULT_STORE = pathToFileURL(store).href;
process.env.MEMVAULT_TTL_DAYS = '14';
const { handler } = await import(pathToFileURL(bundle).href);
const result = await handler({ mode: 'start' }, { getRemainingTimeInMillis: () => 900000 });
console.error(JSON.stringify(result));
`;

describe('memvault/infra from the packed tarball in a fresh CDK app', () => {
  let work: string;
  let app: string;
  let outdir: string;
  let synthOutput: { stacks: string[]; hasFunction: boolean };
  const offlineEnv = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Any request would fail; Docker, should CDK reach for it, is a command that fails.
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    npm_config_offline: 'true',
    CDK_DOCKER: '/bin/false',
  });

  beforeAll(() => {
    // dist/ is fresh: npm test builds before vitest, and test/setup/built.ts compiles what is stale.
    work = mkdtempSync(join(tmpdir(), 'memvault-consumer-'));
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: repo, stdio: 'pipe' });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
    app = join(work, 'app');
    const modules = join(app, 'node_modules');
    mkdirSync(join(modules, 'memvault'), { recursive: true });
    execFileSync('tar', ['-xzf', join(work, tarball), '-C', join(modules, 'memvault'), '--strip-components=1']);
    for (const entry of readdirSync(repoModules)) {
      if (entry === 'memvault' || entry.startsWith('.')) continue;
      symlinkSync(join(repoModules, entry), join(modules, entry));
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }));
    writeFileSync(join(app, 'app.mjs'), APP);
    outdir = join(app, 'cdk.out');
    const out = execFileSync(process.execPath, ['app.mjs', outdir], { cwd: app, env: offlineEnv(), encoding: 'utf8' });
    synthOutput = JSON.parse(out.trim().split('\n').at(-1)!) as typeof synthOutput;
  }, 300_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships the construct, the handler and their types, and no sources', () => {
    const pkg = join(app, 'node_modules', 'memvault');
    for (const file of [
      'dist/infra/index.js',
      'dist/infra/index.d.ts',
      'dist/lambda/index.js',
      'dist/lambda/handler.js',
      'dist/lambda/index.d.ts',
    ]) {
      expect(existsSync(join(pkg, file)), file).toBe(true);
    }
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    expect(existsSync(join(pkg, 'infra'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(manifest.exports['./infra']).toEqual({
      types: './dist/infra/index.d.ts',
      import: './dist/infra/index.js',
      default: './dist/infra/index.js',
    });
    expect(manifest.exports['./lambda']).toEqual({
      types: './dist/lambda/index.d.ts',
      import: './dist/lambda/index.js',
      default: './dist/lambda/index.js',
    });
    for (const peer of ['aws-cdk-lib', 'constructs', 'esbuild'])
      expect(manifest.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
  });

  it('synthesizes offline, with the sweeper bundled from the installed package and no Docker', () => {
    expect(synthOutput).toEqual({ stacks: ['ConsumerStack'], hasFunction: true });
    const template = JSON.parse(readFileSync(join(outdir, 'ConsumerStack.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const types = Object.values(template.Resources).map((r) => r.Type);
    for (const type of [
      'AWS::Lambda::Function',
      'AWS::Events::Rule',
      'AWS::SQS::Queue',
      'AWS::CloudWatch::Alarm',
      'AWS::KMS::Alias',
      'AWS::Logs::LogGroup',
    ])
      expect(types).toContain(type);
    expect(types).not.toContain('AWS::EC2::VPC');
    const alias = Object.values(template.Resources).find((r) => r.Type === 'AWS::KMS::Alias')!;
    expect(alias.Properties.AliasName).toBe('alias/consumer-memvault');
    // No core package import of the CDK: the main entry stays loadable without it.
    const main = readFileSync(join(app, 'node_modules', 'memvault', 'dist', 'index.js'), 'utf8');
    expect(main).not.toContain('aws-cdk-lib');
  });

  it('loads from a CommonJS app too (require of the ES module)', () => {
    writeFileSync(join(app, 'app.cjs'), CJS_APP);
    const out = execFileSync(process.execPath, ['app.cjs', join(work, 'cjs.out')], {
      cwd: app,
      env: offlineEnv(),
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual(['CommonJsStack']);
  }, 180_000);

  it('produced a bundle that runs: one sweep of an empty file store', () => {
    const assets = JSON.parse(readFileSync(join(outdir, 'ConsumerStack.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging: string } }>;
    };
    const zip = Object.values(assets.files).find((f) => f.source.packaging === 'zip')!;
    const bundle = join(outdir, zip.source.path, 'index.mjs');
    writeFileSync(join(work, 'run-bundle.mjs'), RUN_BUNDLE);
    // Run from outside the app: the bundle needs no node_modules.
    const store = join(work, 'store');
    const out = execFileSync(process.execPath, [join(work, 'run-bundle.mjs'), bundle, store], {
      cwd: work,
      env: offlineEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const summary = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ event: 'memvault.sweep', complete: true, scanned: 0, errors: 0 });
  });

  it('typechecks a strict NodeNext consumer against the shipped .d.ts files', () => {
    writeFileSync(join(app, 'typed.ts'), TYPED_APP);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['typed.ts'],
      }),
    );
    const tsc = join(repoModules, 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout);
    }
    expect(output).toBe('');
  }, 240_000);
});
