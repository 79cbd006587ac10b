/**
 * POST /v1/memory against in-process vault.run, on the same file store, in one run.
 *   npx tsx bench/serve.ts [seconds per cell]
 * A `memvault serve` process (the real CLI, its own process as deployed, a service API key, rate
 * limits off) and this process's own vault share one encrypted file store under a temp directory.
 * The command mix is half `view` of a 4 KiB file, half `str_replace` on it (flipping one word back
 * and forth, so the size stays), each client on its own file. At 1, 16 and 64 concurrent clients,
 * each cell runs for a fixed time; the columns alternate in-process and HTTP per level. The HTTP
 * client is node:http with keep-alive (one socket per client), in this process.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
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

const fileOf = (client: number) => `/memories/bench/c${client}.md`;
function inputOf(client: number, i: number): Record<string, unknown> {
  if (viewsOnly || i % 2 === 0) return { command: 'view', path: fileOf(client) };
  const [from, to] = i % 4 === 1 ? ['first line', 'FIRST line'] : ['FIRST line', 'first line'];
  return { command: 'str_replace', path: fileOf(client), old_str: from, new_str: to };
}

interface Cell {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** Each client's next step, kept across cells so that its str_replace always finds the word it flips. */
const nextStep: number[] = [];

async function measure(clients: number, run: (client: number, i: number) => Promise<boolean>): Promise<Cell> {
  const latencies: number[] = [];
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < until) {
        const i = (nextStep[client] = (nextStep[client] ?? -1) + 1);
        const t0 = performance.now();
        if (!(await run(client, i))) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

function startServe(store: string, keysFile: string): Promise<{ url: URL; stop: () => void }> {
  const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
  const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
  const env = { ...process.env, MEMVAULT_MASTER_KEY: MASTER_KEY, MEMVAULT_LOG_LEVEL: 'error' };
  const child = spawn(
    tsx,
    [main, 'serve', '--store', store, '--api-keys', keysFile, '--port', '0', '--rate-limit', '100000000'],
    { env },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ url: new URL(match[1]!), stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`memvault serve exited ${code}`)));
  });
}

function httpRunner(url: URL, key: string, clients: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const headers = { authorization: `Bearer ${key}`, 'memvault-user': USER, 'content-type': 'application/json' };
  return (client: number, i: number) =>
    new Promise<boolean>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: '/v1/memory', method: 'POST', agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve(
              res.statusCode === 200 &&
                !(JSON.parse(Buffer.concat(chunks).toString()) as { is_error: boolean }).is_error,
            ),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(inputOf(client, i)));
    });
}

const dir = await mkdtemp(join(tmpdir(), 'memvault-bench-serve-'));
const store = `file://${join(dir, 'store')}`;
let vault: Vault | undefined;
let server: { url: URL; stop: () => void } | undefined;
try {
  const { key, entry } = newApiKey('bench');
  const keysFile = join(dir, 'keys.json');
  await writeFile(keysFile, JSON.stringify({ keys: [entry] }));
  vault = await createVault({ store, encryption: { masterKey: MASTER_KEY } });
  for (let c = 0; c < Math.max(...LEVELS); c++)
    await vault.run(USER, { command: 'create', path: fileOf(c), file_text: NOTE_4K });
  server = await startServe(store, keysFile);
  const direct = vault;
  const rows: Array<Array<string | number>> = [];
  for (const clients of LEVELS) {
    const http = httpRunner(server.url, key, clients);
    await measure(clients, http); // warm up the sockets and the server's key cache
    const inProcess = await measure(
      clients,
      async (client, i) => !(await direct.run(USER, inputOf(client, i))).isError,
    );
    const overHttp = await measure(clients, http);
    rows.push([
      String(clients),
      inProcess.rps,
      overHttp.rps,
      overHttp.rps / inProcess.rps,
      inProcess.p50,
      overHttp.p50,
      overHttp.p50 - inProcess.p50,
      inProcess.p99,
      overHttp.p99,
      inProcess.errors + overHttp.errors,
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
      'in-process p50 ms',
      'HTTP p50 ms',
      'p50 added ms',
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
