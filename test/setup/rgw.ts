/**
 * vitest globalSetup: a real S3 server (Ceph radosgw) for the S3 suites under test/s3/.
 *
 * 1. MEMVAULT_S3_ENDPOINT set: use that server (credentials MEMVAULT_S3_ACCESS_KEY_ID /
 *    MEMVAULT_S3_SECRET_ACCESS_KEY, default test/test; bucket MEMVAULT_S3_BUCKET, default
 *    memvault-test).
 * 2. Else radosgw installed: `scripts/rgw.sh start` on 127.0.0.1, stopped again in teardown.
 * 3. Else under CI (CI set): fail the run; a CI that silently skips S3 proves nothing.
 * 4. Else: print a loud banner and let the S3 suites skip.
 *
 * The server is only started when the run includes an S3 suite that needs it (a run of other
 * test files does not pay the ~15 s start). Tests read the connection with `inject('memvaultS3')`
 * (see test/s3/helpers.ts). Every S3 test file appends its pass count to `.tmp/s3-suite-ran`,
 * which this setup clears first, so that CI can check the suites really ran.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort, portFree } from './ports.js';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { TestProject } from 'vitest/node';

export interface S3TestConnection {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Who runs the server: 'env' (MEMVAULT_S3_ENDPOINT) or 'rgw.sh' (started here). */
  source: 'env' | 'rgw.sh';
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null: no S3 server; the S3 suites skip (never under CI). */
    memvaultS3: S3TestConnection | null;
    memvaultS3SkipReason: string;
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const S3_MARKER = join(repoRoot, '.tmp', 's3-suite-ran');
const RGW_SCRIPT = join(repoRoot, 'scripts', 'rgw.sh');
const START_TIMEOUT_MS = 240_000;

function banner(lines: string[]): void {
  const width = Math.max(...lines.map((l) => l.length)) + 4;
  const bar = '!'.repeat(width);
  console.warn(['', bar, ...lines.map((l) => `! ${l.padEnd(width - 4)} !`), bar, ''].join('\n'));
}

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, binary)));
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runScript(args: string[], env: NodeJS.ProcessEnv): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolveRun) => {
    execFile(
      'bash',
      [RGW_SCRIPT, ...args],
      { env, timeout: START_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolveRun({ ok: !error, output: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * Does this run include a suite that needs the server? Those are the files under test/s3/ that
 * call recordS3SuiteRun (the mock and retry suites there need none). Unknown -> yes.
 */
async function runIncludesS3(project: TestProject): Promise<boolean> {
  try {
    // The CLI's file filters; internal to vitest, hence the defensive read.
    const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
    const { testFiles } = await project.globTestFiles(filters && filters.length > 0 ? filters : undefined);
    return testFiles.some(
      (file) =>
        file.replaceAll('\\', '/').includes('/test/s3/') && readFileSync(file, 'utf8').includes('recordS3SuiteRun('),
    );
  } catch {
    return true;
  }
}

async function ensureBucket(connection: S3TestConnection): Promise<void> {
  const client = new S3Client({
    endpoint: connection.endpoint,
    region: connection.region,
    forcePathStyle: true,
    credentials: { accessKeyId: connection.accessKeyId, secretAccessKey: connection.secretAccessKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: connection.bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  } finally {
    client.destroy();
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  rmSync(S3_MARKER, { force: true });
  const unavailable = (reason: string): undefined => {
    project.provide('memvaultS3', null);
    project.provide('memvaultS3SkipReason', reason);
    return undefined;
  };

  if (!(await runIncludesS3(project))) return unavailable('this run includes no S3 suite');

  const bucket = process.env.MEMVAULT_S3_BUCKET ?? 'memvault-test';
  const region = process.env.MEMVAULT_S3_REGION ?? 'us-east-1';
  const accessKeyId = process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test';
  const secretAccessKey = process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test';

  if (process.env.MEMVAULT_S3_ENDPOINT) {
    const connection: S3TestConnection = {
      endpoint: process.env.MEMVAULT_S3_ENDPOINT,
      bucket,
      region,
      accessKeyId,
      secretAccessKey,
      source: 'env',
    };
    await ensureBucket(connection);
    project.provide('memvaultS3', connection);
    project.provide('memvaultS3SkipReason', '');
    return undefined;
  }

  if (!onPath('radosgw') || !onPath('ceph-mon') || !onPath('ceph-osd')) {
    const reason =
      'Ceph radosgw is not installed (apt-get install -y radosgw ceph-mon ceph-osd) and MEMVAULT_S3_ENDPOINT is unset';
    if (process.env.CI) throw new Error(`S3 suites cannot run under CI: ${reason}`);
    banner([
      'S3 SUITES SKIPPED: no S3 server.',
      reason + '.',
      'Install the packages, or point MEMVAULT_S3_ENDPOINT at an S3 server, to run them.',
    ]);
    return unavailable(reason);
  }

  // One shared default workdir, so that a run killed before its teardown is cleaned up by the next
  // (rgw.sh stops leftovers it recorded there). If another live vitest owns it, take a private
  // workdir and free ports instead of killing that run's server.
  const sharedDir = join(tmpdir(), 'memvault-rgw-vitest');
  const ownerFile = `${sharedDir}.owner`;
  const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8').trim()) : NaN;
  const shared = !(Number.isInteger(owner) && owner !== process.pid && pidAlive(owner));
  const workdir = shared ? sharedDir : `${sharedDir}-${process.pid}`;
  if (shared) writeFileSync(ownerFile, String(process.pid));

  const wantedPort = Number(process.env.MEMVAULT_RGW_PORT ?? 7480);
  const wantedMonPort = Number(process.env.MEMVAULT_RGW_MON_PORT ?? 6789);
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A leftover of our own shared workdir is stopped by the script before it checks ports.
  if (!shared || !existsSync(join(sharedDir, 'pids'))) {
    if (!(await portFree(wantedPort))) env.MEMVAULT_RGW_PORT = String(await freePort());
    if (!(await portFree(wantedMonPort))) env.MEMVAULT_RGW_MON_PORT = String(await freePort());
  }

  const started = Date.now();
  const result = await runScript(['start', workdir], env);
  if (!result.ok) {
    throw new Error(`scripts/rgw.sh start failed; its output:\n${result.output}`);
  }
  const endpoint = readFileSync(join(workdir, 'endpoint'), 'utf8').trim();
  console.info(
    `[s3] Ceph radosgw ready at ${endpoint} in ${((Date.now() - started) / 1000).toFixed(1)} s (workdir ${workdir})`,
  );
  const connection: S3TestConnection = {
    endpoint,
    bucket,
    region,
    accessKeyId: 'test',
    secretAccessKey: 'test',
    source: 'rgw.sh',
  };
  await ensureBucket(connection);
  project.provide('memvaultS3', connection);
  project.provide('memvaultS3SkipReason', '');
  mkdirSync(dirname(S3_MARKER), { recursive: true });

  return async () => {
    const stopped = await runScript(['stop', workdir], env);
    if (!stopped.ok) console.warn(`[s3] scripts/rgw.sh stop failed:\n${stopped.output}`);
    if (shared) rmSync(ownerFile, { force: true });
  };
}
