/**
 * The whole memvault path (validation, path guard, PII, quota, commands, encryption, S3Store) on a
 * real S3 server, in one run:
 *   (a) requests per command, in 'check-first' mode (RGW) and 'native' mode (AWS S3);
 *   (b) median latency per command against a bare PutObject / GetObject of the same size (ratio),
 *       measured interleaved, round by round, so drift in the server hits both sides alike;
 *   (c) throughput (commands/s) with 1, 16 and 64 concurrent users on one vault;
 *   (d) the requests the quota check costs (default quota against `quota: false`).
 *
 *   npx tsx bench/s3.ts                                   # starts scripts/rgw.sh itself
 *   MEMVAULT_S3_ENDPOINT=http://127.0.0.1:7480 npx tsx bench/s3.ts
 *   BENCH_ROUNDS=50 BENCH_FILE_BYTES=4096 BENCH_MIX_COMMANDS=640 (defaults)
 *
 * RGW on a small shared machine is a correctness target, not a speed reference: read the request
 * counts and the ratios, not the absolute figures.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { freePort } from '../test/setup/ports.js';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3ClientConfig } from '@aws-sdk/client-s3';
import { createVault, type Vault, type VaultOptions } from '../src/index.js';
import { withRequestCounter, type RequestCounter } from '../src/store/accounting.js';
import { listAll } from '../src/store/port.js';
import { buildS3Client, createS3Store, type ConditionChecks } from '../src/store/s3.js';
import { median } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const FILE_BYTES = Number(process.env.BENCH_FILE_BYTES ?? 4096);
const MIX_COMMANDS = Number(process.env.BENCH_MIX_COMMANDS ?? 640);
const BUCKET = process.env.MEMVAULT_S3_BUCKET ?? 'memvault-bench';
const DIR_FILES = 10;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const masterKey = randomBytes(32).toString('base64');

function formatCounts(counter: RequestCounter, divisor = 1): string {
  const order = ['GET', 'HEAD', 'LIST', 'PUT', 'COPY', 'DELETE', 'DELETE_MANY'];
  const entries = Object.entries(counter).sort(
    ([a], [b]) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99),
  );
  const total = entries.reduce((n, [, v]) => n + v, 0) / divisor;
  const parts = entries.map(
    ([type, n]) => `${Number.isInteger(n / divisor) ? n / divisor : (n / divisor).toFixed(2)} ${type}`,
  );
  return `${Number.isInteger(total) ? total : total.toFixed(2)} (${parts.join(' + ')})`;
}

function table(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(headers));
  console.log(`|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

/** Text of about `bytes` bytes in lines, with `tokens` unique placeholders `<t-i>` to replace. */
function textOf(bytes: number, tokens = 0): string {
  const lines: string[] = [];
  for (let i = 0; i < tokens; i++) lines.push(`token <t-${i}>`);
  let size = lines.reduce((n, l) => n + l.length + 1, 0);
  for (let i = 0; size < bytes; i++) {
    const line = `line ${i}: a remembered fact about the project and its conventions`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

interface Step {
  name: string;
  /** What the command is compared with: a bare GetObject or PutObject of FILE_BYTES. */
  baseline: 'GET' | 'PUT';
  /** Untimed preparation for round i (e.g. the file a rename moves). */
  prepare?(vault: Vault, user: string, i: number): Promise<void>;
  input(i: number): Record<string, unknown>;
}

const body = textOf(FILE_BYTES);
const STEPS: Step[] = [
  { name: 'view file', baseline: 'GET', input: () => ({ command: 'view', path: '/memories/read.md' }) },
  { name: 'view /memories', baseline: 'GET', input: () => ({ command: 'view', path: '/memories' }) },
  {
    name: `view directory (${DIR_FILES} files)`,
    baseline: 'GET',
    input: () => ({ command: 'view', path: '/memories/dir' }),
  },
  {
    name: 'create',
    baseline: 'PUT',
    input: (i) => ({ command: 'create', path: `/memories/new/c-${i}.md`, file_text: body }),
  },
  {
    name: 'create (overwrite)',
    baseline: 'PUT',
    input: () => ({ command: 'create', path: '/memories/over.md', file_text: body }),
  },
  {
    name: 'str_replace',
    baseline: 'PUT',
    input: (i) => ({ command: 'str_replace', path: '/memories/edit.md', old_str: `<t-${i}>`, new_str: `<done-${i}>` }),
  },
  {
    name: 'insert',
    baseline: 'PUT',
    input: (i) => ({ command: 'insert', path: '/memories/insert.md', insert_line: 0, insert_text: `inserted ${i}` }),
  },
  {
    name: 'rename file',
    baseline: 'PUT',
    prepare: async (vault, user, i) =>
      void (await vault.run(user, { command: 'create', path: `/memories/mv/a-${i}.md`, file_text: body })),
    input: (i) => ({ command: 'rename', old_path: `/memories/mv/a-${i}.md`, new_path: `/memories/mv/b-${i}.md` }),
  },
  {
    name: 'delete file',
    baseline: 'PUT',
    prepare: async (vault, user, i) =>
      void (await vault.run(user, { command: 'create', path: `/memories/rm/f-${i}.md`, file_text: body })),
    input: (i) => ({ command: 'delete', path: `/memories/rm/f-${i}.md` }),
  },
  {
    name: `rename directory (${DIR_FILES} files)`,
    baseline: 'PUT',
    prepare: async (vault, user, i) => {
      const files = await vault.files(user);
      await Promise.all(
        Array.from({ length: DIR_FILES }, (_, j) =>
          files.write(`/memories/rd-${i}/f${j}.md`, new TextEncoder().encode(body)),
        ),
      );
    },
    input: (i) => ({ command: 'rename', old_path: `/memories/rd-${i}`, new_path: `/memories/rd-moved-${i}` }),
  },
  {
    name: `delete directory (${DIR_FILES} files)`,
    baseline: 'PUT',
    input: (i) => ({ command: 'delete', path: `/memories/rd-moved-${i}` }),
  },
];

async function seedUser(vault: Vault, user: string, rounds: number): Promise<void> {
  const ok = async (input: Record<string, unknown>): Promise<void> => {
    const r = await vault.run(user, input);
    if (r.isError) throw new Error(`seed failed: ${JSON.stringify(r.content)}`);
  };
  await ok({ command: 'create', path: '/memories/read.md', file_text: body });
  await ok({ command: 'create', path: '/memories/over.md', file_text: body });
  await ok({ command: 'create', path: '/memories/edit.md', file_text: textOf(FILE_BYTES, rounds) });
  await ok({ command: 'create', path: '/memories/insert.md', file_text: body });
  const files = await vault.files(user);
  await Promise.all(
    Array.from({ length: DIR_FILES }, (_, j) => files.write(`/memories/dir/f${j}.md`, new TextEncoder().encode(body))),
  );
}

async function main(): Promise<void> {
  let endpoint = process.env.MEMVAULT_S3_ENDPOINT;
  let workdir: string | undefined;
  if (!endpoint) {
    workdir = mkdtempSync(join(tmpdir(), 'memvault-rgw-bench-'));
    const env = {
      ...process.env,
      MEMVAULT_RGW_PORT: String(await freePort()),
      MEMVAULT_RGW_MON_PORT: String(await freePort()),
    };
    const started = performance.now();
    execFileSync('bash', [join(repoRoot, 'scripts/rgw.sh'), 'start', workdir], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
    endpoint = readFileSync(join(workdir, 'endpoint'), 'utf8').trim();
    console.log(`radosgw started in ${((performance.now() - started) / 1000).toFixed(1)} s at ${endpoint}`);
  }
  const config: S3ClientConfig = {
    endpoint,
    region: process.env.MEMVAULT_S3_REGION ?? 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
    },
  };
  const bare = buildS3Client(config);
  await bare.send(new CreateBucketCommand({ Bucket: BUCKET })).catch(() => undefined);
  const runPrefix = `bench-s3-${Date.now().toString(36)}`;
  const vaults: Vault[] = [];
  const open = async (
    name: string,
    options: VaultOptions = {},
    conditionChecks: ConditionChecks = 'check-first',
  ): Promise<Vault> => {
    const vault = await createVault({
      store: `s3://${BUCKET}/${runPrefix}/${name}`,
      s3: config,
      s3Options: { conditionChecks },
      encryption: { masterKey },
      ...options,
    });
    vaults.push(vault);
    return vault;
  };

  try {
    console.log(
      `\nmemvault on S3 (${endpoint}), encrypted, PII redactor and quota on (the defaults); ${FILE_BYTES}-byte files, ${ROUNDS} rounds`,
    );

    // (a) + (b): every step once per round, interleaved with the bare baselines.
    const user = 'bench-user';
    const modes: ConditionChecks[] = ['check-first', 'native'];
    const vaultsByMode = new Map<ConditionChecks, Vault>();
    for (const mode of modes) {
      const vault = await open(`latency-${mode}`, {}, mode);
      await seedUser(vault, user, ROUNDS);
      vaultsByMode.set(mode, vault);
    }
    const samples = new Map<string, number[]>();
    const requests = new Map<string, RequestCounter>();
    const record = async (name: string, fn: () => Promise<unknown>, timed = true): Promise<void> => {
      const counter: RequestCounter = {};
      const start = performance.now();
      await withRequestCounter(counter, fn);
      const ms = performance.now() - start;
      if (timed) (samples.get(name) ?? samples.set(name, []).get(name)!).push(ms);
      const total = requests.get(name) ?? requests.set(name, {}).get(name)!;
      for (const [type, n] of Object.entries(counter)) total[type] = (total[type] ?? 0) + n;
    };
    const payload = Buffer.from(body);
    for (let w = 0; w < 5; w++)
      await bare.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `${runPrefix}/bare/warm-${w}`,
          Body: payload,
          ContentLength: payload.byteLength,
        }),
      );
    for (let i = 0; i < ROUNDS; i++) {
      await record('bare PutObject', () =>
        bare.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `${runPrefix}/bare/${i}`,
            Body: payload,
            ContentLength: payload.byteLength,
          }),
        ),
      );
      await record('bare GetObject', async () => {
        const out = await bare.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${runPrefix}/bare/${i}` }));
        await out.Body!.transformToByteArray();
      });
      for (const mode of modes) {
        const vault = vaultsByMode.get(mode)!;
        for (const step of STEPS) {
          await step.prepare?.(vault, user, i);
          await record(
            `${mode}:${step.name}`,
            async () => {
              const r = await vault.run(user, step.input(i));
              if (r.isError) throw new Error(`${step.name}: ${JSON.stringify(r.content)}`);
            },
            mode === 'check-first',
          );
        }
      }
    }
    const bareMs = { GET: median(samples.get('bare GetObject')!), PUT: median(samples.get('bare PutObject')!) };
    console.log(
      '\n(a) requests per command (mean per command over the rounds; the quota adds a LIST every 20 writes, see (d))',
    );
    table(
      ['command', "requests, 'check-first' (RGW default)", "requests, 'native' (AWS)"],
      STEPS.map((s) => [
        s.name,
        formatCounts(requests.get(`check-first:${s.name}`)!, ROUNDS),
        formatCounts(requests.get(`native:${s.name}`)!, ROUNDS),
      ]),
    );
    console.log(
      `\n(b) median latency, full memvault path ('check-first') vs bare SDK calls of ${FILE_BYTES} bytes (bare GetObject ${bareMs.GET.toFixed(1)} ms, bare PutObject ${bareMs.PUT.toFixed(1)} ms)`,
    );
    table(
      ['command', 'median ms', 'baseline', 'ratio', 'ms per request'],
      STEPS.map((s) => {
        const ms = median(samples.get(`check-first:${s.name}`)!);
        const perCommand = Object.values(requests.get(`check-first:${s.name}`)!).reduce((a, b) => a + b, 0) / ROUNDS;
        return [
          s.name,
          ms.toFixed(1),
          `bare ${s.baseline}`,
          `${(ms / bareMs[s.baseline]).toFixed(2)}x`,
          (ms / perCommand).toFixed(1),
        ];
      }),
    );

    // (c) throughput: N users at once on one vault (one process, one S3 client), a command mix.
    console.log(
      `\n(c) throughput, ${MIX_COMMANDS} commands per row (mix: view file, view dir, str_replace, insert, create), one vault, distinct users`,
    );
    const mixRows: string[][] = [];
    for (const users of [1, 16, 64]) {
      const vault = await open(`throughput-${users}`);
      const ids = Array.from({ length: users }, (_, u) => `user-${u}`);
      const perUser = Math.ceil(MIX_COMMANDS / users);
      await Promise.all(ids.map((id) => seedUser(vault, id, perUser + users)));
      const mix = (i: number): Record<string, unknown> => {
        switch (i % 5) {
          case 0:
            return { command: 'view', path: '/memories/read.md' };
          case 1:
            return { command: 'view', path: '/memories/dir' };
          case 2:
            return { command: 'str_replace', path: '/memories/edit.md', old_str: `<t-${i}>`, new_str: `<done-${i}>` };
          case 3:
            return { command: 'insert', path: '/memories/insert.md', insert_line: 0, insert_text: `mix ${i}` };
          default:
            return { command: 'create', path: `/memories/new/m-${i}.md`, file_text: body };
        }
      };
      const counter: RequestCounter = {};
      let errors = 0;
      const start = performance.now();
      await withRequestCounter(counter, () =>
        Promise.all(
          ids.map(async (id, u) => {
            // Each user starts the mix at a different command, so that every row runs the same mix.
            for (let i = 0; i < perUser; i++) if ((await vault.run(id, mix(i + u))).isError) errors += 1;
          }),
        ),
      );
      const seconds = (performance.now() - start) / 1000;
      const commands = perUser * users;
      const total = Object.values(counter).reduce((a, b) => a + b, 0);
      mixRows.push([
        String(users),
        String(commands),
        seconds.toFixed(2),
        (commands / seconds).toFixed(1),
        (total / seconds).toFixed(0),
        (total / commands).toFixed(2),
        String(errors),
      ]);
    }
    table(
      ['concurrent users', 'commands', 'seconds', 'commands/s', 'requests/s', 'requests/command', 'errors'],
      mixRows,
    );

    // (d) what the quota check costs: the same commands with the default quota and with quota: false.
    console.log('\n(d) requests the quota check costs (default quota vs quota: false, check-first)');
    const quotaRows: string[][] = [];
    const withQuota = await open('quota-on');
    const withoutQuota = await open('quota-off', { quota: false });
    const sequence: Array<[string, (i: number) => Record<string, unknown>]> = [
      [
        "user's first write in a process (create)",
        () => ({ command: 'create', path: '/memories/first.md', file_text: body }),
      ],
      ['create (new file)', (i) => ({ command: 'create', path: `/memories/q/c-${i}.md`, file_text: body })],
      ['create (overwrite)', () => ({ command: 'create', path: '/memories/first.md', file_text: body })],
      [
        'str_replace',
        () => ({ command: 'str_replace', path: '/memories/first.md', old_str: 'line 1:', new_str: 'line 1:' }),
      ],
      ['insert', (i) => ({ command: 'insert', path: '/memories/first.md', insert_line: 0, insert_text: `q ${i}` })],
      [
        'rename file',
        (i) => ({ command: 'rename', old_path: `/memories/q/c-${i}.md`, new_path: `/memories/q/d-${i}.md` }),
      ],
      ['delete file', (i) => ({ command: 'delete', path: `/memories/q/d-${i}.md` })],
      ['view file', () => ({ command: 'view', path: '/memories/first.md' })],
    ];
    for (const vault of [withQuota, withoutQuota])
      await vault.run('quota-user', { command: 'view', path: '/memories' }); // load the key
    for (const [name, input] of sequence) {
      const cells: string[] = [];
      for (const vault of [withQuota, withoutQuota]) {
        const counter: RequestCounter = {};
        const r = await withRequestCounter(counter, () => vault.run('quota-user', input(1)));
        if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
        cells.push(formatCounts(counter));
      }
      quotaRows.push([name, ...cells]);
    }
    // The usage refresh: one LIST per 1,000 files every 20 admitted writes (or 60 s) per user.
    for (const [label, vault] of [
      ['quota on', withQuota],
      ['quota off', withoutQuota],
    ] as const) {
      const counter: RequestCounter = {};
      await withRequestCounter(counter, async () => {
        for (let i = 0; i < 40; i++)
          await vault.run('quota-user', {
            command: 'insert',
            path: '/memories/first.md',
            insert_line: 0,
            insert_text: `r ${i}`,
          });
      });
      if (label === 'quota on') quotaRows.push(['40 inserts in a row', formatCounts(counter), '']);
      else quotaRows[quotaRows.length - 1]![2] = formatCounts(counter);
    }
    table(['command', 'requests, default quota', 'requests, quota: false'], quotaRows);
  } finally {
    const sweeper = createS3Store({ url: `s3://${BUCKET}/${runPrefix}`, s3: config });
    const keys: string[] = [];
    for await (const info of listAll(sweeper, '')) keys.push(info.key);
    await sweeper.deleteMany(keys);
    await sweeper.close();
    for (const vault of vaults) await vault.close();
    bare.destroy();
    if (workdir)
      execFileSync('bash', [join(repoRoot, 'scripts/rgw.sh'), 'stop', workdir], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
  }
}

await main();
