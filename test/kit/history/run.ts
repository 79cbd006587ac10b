/**
 * The history checker (docs/s3.md, "History checker"), for any store several processes can share:
 * child processes (test/kit/history/worker.ts, each its own vault instance: no shared in-process
 * locks or clients) run seeded random edits, creates, deletes, directory renames and deletes, views
 * that touch idle files, sweeps, re-keys and restores against one store, while the test either kills
 * one of them with SIGKILL at random points (and starts a fresh one in its place) or pauses it with
 * SIGSTOP for longer than `limits.resumeAfterMs` (its directory rename is then taken over) and lets
 * it go on with SIGCONT. Every operation is logged with its interval and answer; the final state,
 * the reads and the history (the user's export) are then checked against the rules in
 * test/kit/history/check.ts.
 *
 * Seeded and reproducible in its choices (the seed is printed, and named on failure):
 *   MEMVAULT_CHECKER_SEED=<n>        the seed (default: random)
 *   MEMVAULT_CHECKER_SECONDS=<s>     how long the workers run (default 20)
 *   MEMVAULT_CHECKER_PROCESSES=<n>   processes at once (default 4)
 *   MEMVAULT_CHECKER_LONG=1          the long run: 6 processes for 1,800 s (before each release;
 *                                    MEMVAULT_CHECKER_SECONDS shortens it)
 * Timing between processes is the machine's, so a seed fixes every process's operations and the
 * kill schedule, not the interleaving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault, type VaultOptions } from '../../../src/index.js';
import { checkHistory, checkKept, mergeLogs, type Violation } from './check.js';
import { DIRS, FILES, filePath, RESUME_AFTER_MS, rng, USER, type LogRecord } from './model.js';
import { keptTokens } from './kept.js';

const LONG = process.env.MEMVAULT_CHECKER_LONG === '1';
const SECONDS = Number(process.env.MEMVAULT_CHECKER_SECONDS ?? (LONG ? 1_800 : 20));
const PROCESSES = Number(process.env.MEMVAULT_CHECKER_PROCESSES ?? (LONG ? 6 : 4));
const SEED = Number(process.env.MEMVAULT_CHECKER_SEED ?? randomBytes(4).readUInt32BE(0));
const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** The store the processes share. */
export interface CheckerTarget {
  name: string;
  /** The store's URL for a run of `seed` (a fresh prefix or directory). */
  url(seed: number): string;
  /** createVault options besides the store and the key (an S3 client's settings). */
  vaultOptions: Partial<VaultOptions>;
  /** The workers' environment (the master key is added). */
  workerEnv(): NodeJS.ProcessEnv;
  /** Empties the store after the run (every vault opened on it is passed). */
  cleanup(vault: Vault): Promise<void>;
}

export function runHistoryChecker(target: CheckerTarget, skip: string | false = false): void {
  const opened: Vault[] = [];
  describe.skipIf(skip !== false)(
    `history checker on ${target.name}: ${PROCESSES} processes for ${SECONDS} s${skip !== false ? ` (skipped: ${skip})` : ''}`,
    () => {
      afterAll(async () => {
        for (const vault of opened) {
          await target.cleanup(vault);
          await vault.close();
        }
      }, 120_000);

      it(
        'every acknowledged operation holds: nothing lost, nothing back after a delete, one place per file',
        { timeout: (SECONDS + 120) * 1000 },
        async () => {
          console.info(`[history] ${target.name}: seed ${SEED} (MEMVAULT_CHECKER_SEED=${SEED} to repeat)`);
          const masterKey = randomBytes(32).toString('base64');
          const url = target.url(SEED);
          const setup = await createVault({ store: url, ...target.vaultOptions, encryption: { masterKey } });
          opened.push(setup);
          const seeded = new Map<string, string[]>();
          for (let d = 0; d < DIRS - 1; d++) {
            for (let f = 0; f < FILES; f++) {
              const id = `id:seed:${d}:${f}`;
              expect(
                await setup.run(USER, { command: 'create', path: filePath(d, f), file_text: `${id}\n` }),
              ).toMatchObject({ isError: false });
              seeded.set(filePath(d, f), [id]);
            }
          }

          const env = { ...target.workerEnv(), MEMVAULT_TEST_MASTER_KEY: masterKey };
          const logDir = mkdtempSync(join(tmpdir(), 'memvault-history-'));
          const random = rng(SEED);
          const stopFile = join(logDir, 'stop');
          const killedAt = new Map<string, number>();
          const logs: string[] = [];
          const running = new Map<number, { proc: string; child: ChildProcess; exited: Promise<void> }>();
          let generation = 0;
          const launch = (slot: number): void => {
            const proc = `p${slot}g${generation++}`;
            const log = join(logDir, `${proc}.jsonl`);
            logs.push(log);
            // node --import tsx: one process (the tsx CLI would run the worker in a child that a kill of it leaves running).
            const child = spawn(
              process.execPath,
              ['--import', 'tsx', worker, url, proc, String((SEED ^ (generation * 0x9e3779b1)) >>> 0), stopFile, log],
              {
                env,
                stdio: ['ignore', 'ignore', 'pipe'],
              },
            );
            let stderr = '';
            child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
            const exited = new Promise<void>((resolve) =>
              child.on('exit', (code, signal) => {
                if (code !== 0 && signal !== 'SIGKILL')
                  console.error(`[history] ${proc} exited with ${code ?? signal}: ${stderr}`);
                resolve();
              }),
            );
            running.set(slot, { proc, child, exited });
          };
          for (let slot = 0; slot < PROCESSES; slot++) launch(slot);
          // The clock starts once every first process has begun its work (starting tsx takes seconds).
          for (let waited = 0; !logs.every((log) => existsSync(log)) && waited < 120_000; waited += 200)
            await new Promise((resolve) => setTimeout(resolve, 200));
          const started = Date.now();
          const deadline = started + SECONDS * 1000;
          // The fault schedule: every 4 to 10 s one random process is killed and replaced by a fresh
          // one (a fresh process takes seconds to start on a loaded machine; killing more often leaves
          // little work), or paused past resumeAfterMs and let go on.
          let crashes = 0;
          let pauses = 0;
          for (let at = Date.now() + 4000 + random() * 6000; at < deadline - 2000; at += 4000 + random() * 6000) {
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
            const slot = Math.floor(random() * PROCESSES);
            const victim = running.get(slot)!;
            if (random() < 0.5) {
              victim.child.kill('SIGSTOP');
              await new Promise((resolve) => setTimeout(resolve, RESUME_AFTER_MS * (1.5 + random() * 1.5)));
              victim.child.kill('SIGCONT');
              pauses += 1;
              continue;
            }
            killedAt.set(victim.proc, Date.now());
            victim.child.kill('SIGKILL');
            await victim.exited;
            crashes += 1;
            launch(slot);
          }
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())));
          writeFileSync(stopFile, '');
          await Promise.all([...running.values()].map((r) => r.exited));
          const endOfRun = Date.now();

          const records: LogRecord[] = [];
          for (const log of logs) {
            if (!existsSync(log)) continue;
            for (const line of readFileSync(log, 'utf8').split('\n')) {
              if (line.trim() === '') continue;
              try {
                records.push(JSON.parse(line) as LogRecord);
              } catch {
                // a line cut by the kill: its operation has no answer
              }
            }
          }
          const ops = mergeLogs(records, killedAt, endOfRun);
          // The seed files count as acknowledged creates that ended before anything began.
          for (const [path, [id]] of seeded)
            ops.push({
              proc: 'seed',
              seq: 0,
              op: { kind: 'create', path, id: id! },
              start: 0,
              end: 0,
              acknowledged: true,
              ok: true,
            });

          const files = await setup.files(USER);
          const final = new Map<string, string[]>();
          // A file listed but refused on read (INTEGRITY: older than its history) is an acknowledged
          // write lost to every reader: a violation, named with its path, not a thrown test.
          const unreadable: Violation[] = [];
          for await (const f of files.listFiles('/memories')) {
            if (f.path.startsWith('/memories/.memvault/')) continue;
            const file = await files.read(f.path).catch((error: unknown) => {
              unreadable.push({ rule: 'every listed file reads', detail: `${f.path}: ${(error as Error).message}` });
              return null;
            });
            if (file)
              final.set(
                f.path,
                Buffer.from(file.data)
                  .toString('utf8')
                  .split('\n')
                  .filter((l) => l !== ''),
              );
          }
          // The history: every token of every kept version, through the user's export (the verified read).
          const kept = new Set<string>();
          for (const lines of final.values()) for (const line of lines) kept.add(line);
          const exported = await keptTokens(setup, USER).catch((error: unknown) => {
            unreadable.push({ rule: 'the export reads', detail: (error as Error).message });
            return new Set<string>();
          });
          for (const token of exported) kept.add(token);
          const violations = [...unreadable, ...checkHistory(ops, final), ...checkKept(ops, kept)];
          const count = (kind: string) => ops.filter((o) => o.proc !== 'seed' && o.op.kind === kind).length;
          const acknowledged = ops.filter((o) => o.proc !== 'seed' && o.acknowledged).length;
          const succeeded = ops.filter((o) => o.proc !== 'seed' && o.ok).length;
          console.info(
            `[history] seed ${SEED}: ${ops.length - seeded.size} operations (${acknowledged} answered, ${succeeded} succeeded; inserts ${count('insert')}, views ${count('view')}, creates ${count('create')}, ` +
              `renames ${count('rename')}, deletes ${count('delete')}, sweeps ${count('sweep')}, re-keys ${count('rekey')}, restores ${count('restore')}), ` +
              `${PROCESSES} processes at once (${generation} started), ${crashes} kill -9, ${pauses} SIGSTOP/SIGCONT, ` +
              `${final.size} files at the end, ${((endOfRun - started) / 1000).toFixed(1)} s, ${violations.length} violations`,
          );
          if (violations.length > 0) console.error(`[history] the workers' logs are kept in ${logDir}`);
          expect(violations, `seed ${SEED} (MEMVAULT_CHECKER_SEED=${SEED} to repeat)`).toEqual([]);
          expect(count('insert')).toBeGreaterThan(0);
          expect(succeeded).toBeGreaterThan(0);
        },
      );
    },
  );
}
