/**
 * Another memvault instance in a process of its own, for the scenarios that kill one (kill -9)
 * part-way through a command: `node --import tsx <script> <args>` (node itself, not the tsx
 * wrapper, whose SIGKILL would leave its node child running). The worker tells its parent where it
 * is by words on its standard output ("started", "paused", "stopped", "finished").
 */
import { spawn } from 'node:child_process';

export interface WorkerProcess {
  /** Resolves once the worker has printed `word` (at once when it has already). */
  printed(word: string): Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** kill -9, then waits for the exit; resolves with everything the worker printed. */
  kill(): Promise<string>;
}

/** Starts `script` with `args`; resolves once it printed `ready` (it fails when it exits first or stays silent for a minute). */
export async function startWorker(
  script: string,
  args: readonly string[],
  options: { ready: string; env?: NodeJS.ProcessEnv },
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  // Registered first, so that every listener added later sees each chunk already appended.
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const printed = (word: string) =>
    new Promise<void>((resolve) => {
      if (out.includes(word)) return resolve();
      child.stdout.on('data', () => out.includes(word) && resolve());
    });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the worker never printed "${options.ready}": ${out} ${err}`)),
      60_000,
    );
    void printed(options.ready).then(() => {
      clearTimeout(timer);
      resolve();
    });
    child.on('exit', () => reject(new Error(`the worker exited before it printed "${options.ready}": ${out} ${err}`)));
  });
  return {
    printed,
    exited,
    async kill() {
      child.kill('SIGKILL');
      await exited;
      return out;
    },
  };
}
