/**
 * memvault/ai-sdk and memvault/langchain as a consumer gets them: the packed tarball installed into a
 * fresh strict TypeScript project beside the LOW end of each framework's peer range (the repo's own
 * tests, test/frameworks, run the high end). Asserts the ranges, one copy of each framework package,
 * .d.ts files that typecheck strictly, and one conversation per entry point with every tool_result exact;
 * and docs/frameworks.md's Mastra example (@mastra/core's Agent with memoryTool), strictly typed and run
 * through the whole conformance conversation, giving toolRunner's tool_results.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONFORMANCE_IMAGE_PATH,
  CONFORMANCE_PNG,
  CONFORMANCE_STEPS,
  conformanceMismatches,
  normaliseAnswer,
  runConformance,
  seedConformance,
  viaToolRunner,
  type ConformanceBlock,
} from '../kit/conformance.js';
import { memoryVault } from '../kit/vault.js';

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

/** The low ends of the framework peer ranges in package.json (checked below), and what they need. */
const LOW_ENDS = {
  '@ai-sdk/anthropic': '3.0.0',
  '@langchain/anthropic': '1.3.0',
  '@langchain/core': '1.1.5',
} as const;
const APP_DEPS = { ai: '6.0.0', '@anthropic-ai/sdk': '1.0.0', '@types/node': '22.20.7', zod: '4.1.8' };
/**
 * Mastra, whose agents take the AI SDK tool (docs/frameworks.md): the version the example is tested
 * with, installed by its test, after the npm ls check. Beside ai 6.0.0 it brings a second `ai` of its
 * own (its `chat` dependency's optional peer is ai ^6.0.182 || ^7), which memvault never loads.
 */
const MASTRA = '@mastra/core@1.71.0';

let project = '';
const STRICT = {
  target: 'ES2022',
  lib: ['ES2023'],
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  types: ['node'],
};

async function sh(cmd: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_loglevel: 'error' } });
}

beforeAll(async () => {
  if (!existsSync(join(repo, 'dist', 'ai-sdk.js'))) await sh('npm', ['run', 'build'], repo);
  project = await mkdtemp(join(tmpdir(), 'memvault-frameworks-'));
  const { stdout } = await sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], repo);
  const tarball = join(project, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'frameworks-app',
      private: true,
      type: 'module',
      dependencies: { memvault: `file:${tarball}`, ...LOW_ENDS, ...APP_DEPS },
    }),
  );
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], project);
  await mkdir(join(project, 'src'));
  await copyFile(join(repo, 'test', 'package', 'consumer', 'frameworks-app.ts'), join(project, 'src', 'app.ts'));
  await copyFile(
    join(repo, 'test', 'package', 'consumer', 'frameworks-mastra-app.ts'),
    join(project, 'src', 'mastra.ts'),
  );
}, 600_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('memvault/ai-sdk and memvault/langchain installed from the tarball', () => {
  it('the framework peers are optional and their ranges start at the versions installed here', async () => {
    const pkg = (await import(join(repo, 'package.json'), { with: { type: 'json' } })) as {
      default: {
        peerDependencies: Record<string, string>;
        peerDependenciesMeta: Record<string, { optional?: boolean }>;
      };
    };
    for (const [name, low] of Object.entries(LOW_ENDS)) {
      expect(pkg.default.peerDependencies[name], name).toMatch(new RegExp(`^\\^${low.replace(/\./g, '\\.')}( |$)`));
      expect(pkg.default.peerDependenciesMeta[name]?.optional, name).toBe(true);
    }
  });

  it('npm ls shows one copy of each framework package: the app’s own', async () => {
    const wanted = { ...LOW_ENDS, ai: APP_DEPS.ai };
    const { stdout } = await sh('npm', ['ls', ...Object.keys(wanted), '--all', '--json'], project);
    const versions = new Map<string, Set<string>>();
    const walk = (node: { version?: string; dependencies?: Record<string, unknown> }, key?: string): void => {
      if (key && key in wanted && node.version) versions.set(key, (versions.get(key) ?? new Set()).add(node.version));
      for (const [k, child] of Object.entries(node.dependencies ?? {})) walk(child as typeof node, k);
    };
    walk(JSON.parse(stdout) as Parameters<typeof walk>[0]);
    for (const [name, version] of Object.entries(wanted))
      expect([...(versions.get(name) ?? [])], name).toEqual([version]);
  });

  it('typechecks strictly and runs one conversation through each entry point: every tool_result exact', async () => {
    // One compiler run checks strictly (memvault's .d.ts included, other packages' left to them) and emits.
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...STRICT, skipLibCheck: false, outDir: 'out' },
        files: [
          'src/app.ts',
          'node_modules/memvault/dist/index.d.ts',
          'node_modules/memvault/dist/ai-sdk.d.ts',
          'node_modules/memvault/dist/langchain.d.ts',
        ],
      }),
    );
    const compiled = await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], project).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? String(e), stderr: '' }),
    );
    // The app and every memvault declaration it reaches, the root's included: @aws-sdk/client-s3 (an
    // optional peer) is not installed here, and none of them may need it.
    const ours = compiled.stdout
      .split('\n')
      .filter((l) => l.includes('error TS') && /^(src\/|node_modules\/memvault\/)/.test(l));
    expect(ours).toEqual([]);
    const { stdout } = await sh(process.execPath, ['out/app.js'], project);
    type Sent = { tools: unknown; last: { role: string; content: unknown } };
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, { text: unknown; requests: Sent[] }>;
    const edited =
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tlaunch: monday';
    const missing = 'The path /memories/nope.md does not exist. Please provide a valid path.';
    const noMatch = 'No replacement was performed, old_str `sunday` did not appear verbatim in /memories/plan.md.';
    const viewed = "Here's the content of /memories/plan.md with line numbers:\n     1\tlaunch: monday";
    for (const [entry, flag] of [
      ['aiSdk', { is_error: true }],
      // @langchain/anthropic sends no is_error (docs/frameworks.md): the text is the same.
      ['langChain', {}],
    ] as const) {
      const { text, requests } = out[entry]!;
      expect(text, entry).toBe('Done.');
      expect(requests, entry).toHaveLength(4);
      expect(requests[0]!.tools, entry).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
      const results = requests.slice(1).map((r) => r.last.content as Array<Record<string, unknown>>);
      expect(
        results.map((blocks) => blocks.map(({ cache_control: _, ...block }) => block)),
        entry,
      ).toEqual([
        [{ type: 'tool_result', tool_use_id: 'c1', content: 'File created successfully at: /memories/plan.md' }],
        [
          { type: 'tool_result', tool_use_id: 's1', content: edited },
          { type: 'tool_result', tool_use_id: 'missing', content: missing, ...flag },
          { type: 'tool_result', tool_use_id: 'nomatch', content: noMatch, ...flag },
        ],
        [{ type: 'tool_result', tool_use_id: 'v1', content: viewed }],
      ]);
    }
    // An image view reaches the API as an image block at the low ends too (@langchain/anthropic 1.3.0
    // drops an Anthropic image block given as is: the adapter hands it an image_url data URL).
    const image = {
      type: 'tool_result',
      tool_use_id: 'img',
      content: [
        { type: 'text', text: "Here's the image at /memories/pixel.png:" },
        {
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: CONFORMANCE_PNG.toString('base64') },
        },
      ],
    };
    const images = out['images'] as unknown as Record<
      string,
      { role: string; content: Array<Record<string, unknown>> }
    >;
    for (const entry of ['aiSdk', 'langChain']) {
      const blocks = images[entry]!.content.map(({ cache_control: _, ...block }) => block);
      expect(blocks, entry).toEqual([image]);
    }
  }, 120_000);

  it('Mastra: the docs’ Agent with memoryTool typechecks strictly and gives toolRunner’s whole conformance conversation', async () => {
    // The example as docs/frameworks.md shows it, from `new Agent({` to its `});`.
    await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', MASTRA], project);
    const docs = await readFile(join(repo, 'docs', 'frameworks.md'), 'utf8');
    const example = /\nconst agent = new Agent\(\{\n[^]*?\n\}\);\n/.exec(docs.slice(docs.indexOf('## Mastra')));
    expect(await readFile(join(project, 'src', 'mastra.ts'), 'utf8')).toContain(example?.[0]);
    // Strict on the app (memvault's declarations are checked above; Mastra's own are left to Mastra).
    const options = { ...STRICT, skipLibCheck: true, outDir: 'out-mastra' };
    await writeFile(
      join(project, 'tsconfig.mastra.json'),
      JSON.stringify({ compilerOptions: options, files: ['src/mastra.ts'] }),
    );
    const compiled = await sh(process.execPath, [tsc, '-p', 'tsconfig.mastra.json'], project).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? String(e) }),
    );
    expect(compiled.stdout).toBe('');

    // The conformance conversation, one call a turn; then four inserts into one file in one turn, and a view.
    const todo = '/memories/notes/todo.md';
    const inserts = [1, 2, 3, 4].map((i) => ({
      id: `insert-${i}`,
      input: { command: 'insert', path: todo, insert_line: 0, insert_text: `note ${i}` },
    }));
    const script = {
      turns: [
        ...CONFORMANCE_STEPS.map(({ step, input }) => [{ id: step, input }]),
        inserts,
        [{ id: 'view-notes', input: { command: 'view', path: todo } }],
      ],
      seed: { path: CONFORMANCE_IMAGE_PATH, base64: CONFORMANCE_PNG.toString('base64') },
    };
    await writeFile(join(project, 'conformance.json'), JSON.stringify(script));
    const { stdout } = await run(process.execPath, ['out-mastra/mastra.js', 'conformance.json'], {
      cwd: project,
      env: { ...process.env, MASTRA_TELEMETRY_DISABLED: '1' },
    });
    type Sent = { type: string; tool_use_id: string; content: string | ConformanceBlock[]; is_error?: boolean };
    const out = JSON.parse(stdout) as { text: string; requests: number; tools: unknown; toolResults: Sent[] };
    expect(out.text).toBe('Done.');
    expect(out.requests).toBe(CONFORMANCE_STEPS.length + 3);
    expect(out.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
    // Mastra adds nothing to a tool_result; is_error only on errors, as the AI SDK sends it.
    expect(out.toolResults.filter((r) => Object.keys(r).some((key) => !RESULT_KEYS.includes(key)))).toEqual([]);
    expect(out.toolResults.filter((r) => r.is_error === false)).toEqual([]);
    const [viewNotes, ...inserted] = out.toolResults.splice(CONFORMANCE_STEPS.length).reverse();
    expect(inserted.map((r) => [r.tool_use_id, r.content])).toEqual(
      [4, 3, 2, 1].map((i) => [`insert-${i}`, `The file ${todo} has been edited.`]),
    );
    // Every insert landed (Mastra runs a turn's calls one at a time; memvault would serialise them anyway).
    for (const i of [1, 2, 3, 4]) expect(viewNotes!.content).toMatch(new RegExp(`^ +\\d\tnote ${i}$`, 'm'));
    const viaMastra = out.toolResults.map((r) =>
      normaliseAnswer(r.tool_use_id, { content: r.content, isError: r.is_error === true }),
    );
    expect(conformanceMismatches(viaMastra)).toEqual([]);
    const { vault } = await memoryVault();
    await seedConformance(vault, 'user-42');
    const viaToolRunnerOutcomes = await runConformance(viaToolRunner(vault, 'user-42'));
    await vault.close();
    // Every step's text and error flag, the image view's base64 included.
    expect(viaMastra).toEqual(viaToolRunnerOutcomes);
  }, 300_000);
});

const RESULT_KEYS = ['type', 'tool_use_id', 'content', 'is_error'];
