/**
 * What the CDK construct gives the sweeper function: its environment (with the buckets' references
 * replaced by test locations) and the handler bundle esbuild wrote into the cloud assembly.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Command } from 'commander';
import { MemvaultStorage, type MemvaultStorageProps } from '../../infra/lib/index.js';
import { registerExpire } from '../../src/cli/commands/expire.js';
import type { SweeperContext, SweeperEvent, SweeperResult } from '../../src/lambda/handler.js';

export interface ConstructSweeper {
  /** The function's environment with `s3://<memory bucket>` and `s3://<audit bucket>` replaced. */
  environment(memoryBucket: string, auditBucket: string): Record<string, string>;
  /** The handler from the bundle in the assembly (dist/lambda/handler bundled by esbuild). */
  bundledHandler(): Promise<(event: SweeperEvent, context: SweeperContext) => Promise<SweeperResult>>;
  /** The assembly directory (delete it after the tests). */
  outdir: string;
}

type Token = string | { Ref: string } | { 'Fn::Join': [string, Token[]] };

function resolveToken(value: Token, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  if ('Ref' in value) {
    const resolved = refs[value.Ref];
    if (resolved === undefined) throw new Error(`unexpected reference ${value.Ref}`);
    return resolved;
  }
  const [separator, parts] = value['Fn::Join'];
  return parts.map((p) => resolveToken(p, refs)).join(separator);
}

export function synthSweeper(props: MemvaultStorageProps = {}): ConstructSweeper {
  const outdir = mkdtempSync(join(tmpdir(), 'memvault-lambda-cdk-'));
  const app = new App({ outdir, stackTraces: false });
  const stack = new Stack(app, 'SweeperUnderTest');
  const storage = new MemvaultStorage(stack, 'Storage', props);
  const assembly = app.synth();
  const template = JSON.parse(readFileSync(join(outdir, 'SweeperUnderTest.template.json'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: { Environment?: { Variables: Record<string, Token> } } }>;
  };
  const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function');
  if (!fn?.Properties.Environment) throw new Error('no sweeper function in the template');
  const variables = fn.Properties.Environment.Variables;
  const memoryId = stack.resolve(
    (storage.memoryBucket.node.defaultChild as unknown as { logicalId: string }).logicalId,
  ) as string;
  const auditId = stack.resolve(
    (storage.auditBucket.node.defaultChild as unknown as { logicalId: string }).logicalId,
  ) as string;
  const assets = JSON.parse(readFileSync(join(assembly.directory, 'SweeperUnderTest.assets.json'), 'utf8')) as {
    files: Record<string, { source: { path: string; packaging: string } }>;
  };
  const zip = Object.values(assets.files).find((f) => f.source.packaging === 'zip');
  if (!zip) throw new Error('no code asset');
  const bundle = join(assembly.directory, zip.source.path, 'index.mjs');
  return {
    outdir,
    environment: (memoryBucket, auditBucket) =>
      Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [
          k,
          resolveToken(v, { [memoryId]: memoryBucket, [auditId]: auditBucket }),
        ]),
      ),
    bundledHandler: async () => {
      const mod = (await import(pathToFileURL(bundle).href)) as {
        handler: (event: SweeperEvent, context: SweeperContext) => Promise<SweeperResult>;
      };
      return mod.handler;
    },
  };
}

/** `s3://<bucket>/memvault` from the construct, pointed at a file store: file:///dir + '/memvault'. */
export function asFileUrl(s3Url: string, root: string): string {
  const match = /^s3:\/\/([^/]+)(\/.*)?$/.exec(s3Url);
  if (!match) throw new Error(`not an s3 URL: ${s3Url}`);
  return pathToFileURL(join(root, match[1]!, match[2] ?? '')).href;
}

/** A Lambda context whose remaining time drops below the stop margin after `calls` questions. */
export function contextEndingAfter(calls: number, total = 900_000): SweeperContext & { asked: () => number } {
  let asked = 0;
  return {
    getRemainingTimeInMillis: () => (++asked > calls ? 1_000 : total),
    asked: () => asked,
  };
}

export const unlimited = (): SweeperContext => ({ getRemainingTimeInMillis: () => 900_000 });

/** `memvault expire --json` in-process, with the given environment and clock. */
export async function memvaultExpire(
  args: string[],
  env: NodeJS.ProcessEnv,
  now?: () => Date,
): Promise<{ out: string; err: string; code: number | undefined }> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const program = new Command().exitOverride();
  registerExpire(program, {
    env,
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    setExitCode: (c) => void (code = c),
    progress: false,
    ...(now ? { now } : {}),
  });
  await program.parseAsync(['node', 'memvault', 'expire', ...args]);
  return { out, err, code };
}
