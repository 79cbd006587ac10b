/**
 * POST /v1/memory against in-process vault.run, on the same file store, in one run.
 *   npx tsx bench/serve.ts [seconds per cell]      (MIX=view: views only)
 * A `memvault serve` process (the real CLI, its own process as deployed, a service API key, rate
 * limits off) and this process's own vault share one encrypted file store under a temp directory.
 * The command mix is half `view` of a 4 KiB file, half `str_replace` on it (flipping one word back
 * and forth, so the size stays), each client on its own file. At 1, 16 and 64 concurrent clients,
 * each cell runs for a fixed time after a warm-up of both paths; in-process and HTTP alternate per
 * level. The HTTP client is node:http with keep-alive (one socket per client), in this process.
 *
 * Latency is reported per command: the mix is bimodal (a view is a read, a str_replace a locked,
 * versioned write), so one p50 over both lands on the slowest view or the fastest write depending
 * on a count's parity, which is what made an earlier run read "+4.67 ms". `GET /healthz` over the
 * same sockets is the floor: a loopback round trip through Node's HTTP stack and Fastify, no vault.
 * CPU ms per request (this process's, plus the serve process's from /proc for the HTTP cells) says
 * what the HTTP layer costs in work, which a busy machine's scheduling does not blur as it does latency.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVault, type Vault } from '../src/index.js';
import { newApiKey } from '../src/serve.js';
import { NOTE_4K, printTable } from './stats.js';

const seconds = Number(process.argv[2] ?? 4);
/** MIX=view measures views only (no disk writes: the HTTP layer's own cost stands out). */
const viewsOnly = process.env['MIX'] === 'view';
const LEVELS = [1, 16, 64];
const MASTER_KEY = Buffer.alloc(32, 5).toString('base64');
const USER = 'bench-user';
/** Linux's USER_HZ: the unit of /proc/<pid>/stat's CPU times (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

const fileOf = (client: number) => `/memories/bench/c${client}.md`;
const HTTP_FIRST = 1000;
function inputOf(client: number, i: number): Record<string, unknown> {
  if (viewsOnly || i % 2 === 0) return { command: 'view', path: fileOf(client) };
  const [from, to] = i % 4 === 1 ? ['first line', 'FIRST line'] : ['FIRST line', 'first line'];
  return { command: 'str_replace', path: fileOf(client), old_str: from, new_str: to };
}

interface Cell {
  rps: number;
  /** CPU ms per request, of every process `cpu` names (this one, the server). */
  cpuMs: number;
  /** p50 of each command kind in the mix, in ms. */
  p50: Record<string, number>;
  p99: number;
  errors: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/**
 * Each client's next step, kept across cells so that its str_replace always finds the word it flips.
 * HTTP clients are numbered from HTTP_FIRST: each path edits files of its own, so neither meets the
 * other's history (a file's kept versions grow with every edit, and with them the cost of the next).
 */
const nextStep: number[] = [];

async function measure(
  clients: number,
  run: (client: number, i: number) => Promise<boolean>,
  kindOf: (client: number, i: number) => string = (client, i) => String(inputOf(client, i)['command']),
  forSeconds = seconds,
  cpu: () => number = ownCpuSeconds,
  first = 0,
): Promise<Cell> {
  const cpuBefore = cpu();
  const latencies: number[] = [];
  const byKind = new Map<string, number[]>();
  let errors = 0;
  const until = performance.now() + forSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, index) => {
      const client = first + index;
      while (performance.now() < until) {
        const i = (nextStep[client] = (nextStep[client] ?? -1) + 1);
        const t0 = performance.now();
        if (!(await run(client, i))) errors++;
        const ms = performance.now() - t0;
        latencies.push(ms);
        const kind = kindOf(client, i);
        (byKind.get(kind) ?? byKind.set(kind, []).get(kind)!).push(ms);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const p50: Record<string, number> = {};
  for (const [kind, list] of byKind)
    p50[kind] = percentile(
      list.sort((a, b) => a - b),
      50,
    );
  const cpuMs = ((cpu() - cpuBefore) * 1000) / latencies.length;
  return { rps: latencies.length / elapsed, cpuMs, p50, p99: percentile(latencies, 99), errors };
}

interface Served {
  url: URL;
  /** CPU seconds (user + system) the serve process has used so far. */
  cpuSeconds: () => number;
  stop: () => void;
}

/** The serve process: node with tsx's loader, one process (no tsx wrapper), so its CPU can be read. */
function startServe(store: string, keysFile: string): Promise<Served> {
  const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
  const env = { ...process.env, MEMVAULT_MASTER_KEY: MASTER_KEY, MEMVAULT_LOG_LEVEL: 'error' };
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      main,
      'serve',
      '--store',
      store,
      '--api-keys',
      keysFile,
      '--port',
      '0',
      '--rate-limit',
      '100000000',
    ],
    { env },
  );
  const cpuSeconds = () => {
    // /proc/<pid>/stat: utime and stime (fields 14 and 15) in clock ticks, after the ")" of comm.
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ url: new URL(match[1]!), cpuSeconds, stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`memvault serve exited ${code}`)));
  });
}

/** This process's CPU seconds (every thread: the event loop and libuv's pool). */
const ownCpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

function httpRunner(url: URL, key: string, clients: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const headers = { authorization: `Bearer ${key}`, 'memvault-user': USER, 'content-type': 'application/json' };
  const send = (method: string, path: string, body: string | undefined) =>
    new Promise<boolean>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path, method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return resolve(false);
          const answer = JSON.parse(Buffer.concat(chunks).toString()) as { is_error?: boolean };
          resolve(answer.is_error !== true);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  return {
    memory: (client: number, i: number) => send('POST', '/v1/memory', JSON.stringify(inputOf(client, i))),
    health: () => send('GET', '/healthz', undefined),
  };
}

const dir = await mkdtemp(join(tmpdir(), 'memvault-bench-serve-'));
const store = `file://${join(dir, 'store')}`;
let vault: Vault | undefined;
let server: Served | undefined;
try {
  const { key, entry } = newApiKey('bench');
  const keysFile = join(dir, 'keys.json');
  await writeFile(keysFile, JSON.stringify({ keys: [entry] }));
  vault = await createVault({ store, encryption: { masterKey: MASTER_KEY } });
  for (let c = 0; c < Math.max(...LEVELS); c++)
    for (const id of [c, HTTP_FIRST + c])
      await vault.run(USER, { command: 'create', path: fileOf(id), file_text: NOTE_4K });
  server = await startServe(store, keysFile);
  const direct = vault;
  const rows: Array<Array<string | number>> = [];
  const kinds = viewsOnly ? ['view'] : ['view', 'str_replace'];
  for (const [level, clients] of LEVELS.entries()) {
    const http = httpRunner(server.url, key, clients);
    const served = server;
    const httpCpu = () => ownCpuSeconds() + served.cpuSeconds();
    const inProcessRun = async (client: number, i: number) => !(await direct.run(USER, inputOf(client, i))).isError;
    // Warm up both paths: sockets, the server's key cache and JIT, this process's JIT.
    await measure(clients, http.memory, undefined, Math.min(2, seconds), undefined, HTTP_FIRST);
    await measure(clients, inProcessRun, undefined, Math.min(2, seconds));
    // Alternate which path goes first, so that neither always meets a busier disk or a longer history.
    const runInProcess = () => measure(clients, inProcessRun);
    const runHttp = () => measure(clients, http.memory, undefined, seconds, httpCpu, HTTP_FIRST);
    let inProcess: Cell;
    let overHttp: Cell;
    if (level % 2 === 0) {
      inProcess = await runInProcess();
      overHttp = await runHttp();
    } else {
      overHttp = await runHttp();
      inProcess = await runInProcess();
    }
    const floor = await measure(clients, http.health, () => 'healthz', Math.min(2, seconds), undefined, 2 * HTTP_FIRST);
    rows.push([
      String(clients),
      inProcess.rps,
      overHttp.rps,
      overHttp.rps / inProcess.rps,
      ...kinds.flatMap((kind) => [
        inProcess.p50[kind]!,
        overHttp.p50[kind]!,
        overHttp.p50[kind]! - inProcess.p50[kind]!,
      ]),
      floor.p50['healthz']!,
      inProcess.cpuMs,
      overHttp.cpuMs,
      inProcess.p99,
      overHttp.p99,
      inProcess.errors + overHttp.errors + floor.errors,
    ]);
  }
  const mix = viewsOnly ? 'views of a 4 KiB file' : 'half view / half str_replace of a 4 KiB file';
  console.log(`POST /v1/memory vs vault.run, file store (encrypted, history on), ${seconds} s per cell, ${mix}`);
  printTable(
    [
      'clients',
      'in-process req/s',
      'HTTP req/s',
      'HTTP/in-process',
      ...kinds.flatMap((kind) => [`${kind} p50 in-process ms`, `${kind} p50 HTTP ms`, `${kind} p50 added ms`]),
      'GET /healthz p50 ms',
      'CPU ms/req in-process',
      'CPU ms/req HTTP (client + server)',
      'in-process p99 ms',
      'HTTP p99 ms',
      'errors',
    ],
    rows,
  );
} finally {
  server?.stop();
  await vault?.close();
  await rm(dir, { recursive: true, force: true });
}
