import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Built by npm test before vitest, or by test/setup/built.ts when stale.
const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** The environment of a CLI run: none of the test runner's MEMVAULT_* settings leak in. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('MEMVAULT_') || k === 'ANTHROPIC_API_KEY') delete base[k];
  return { ...base, ...extra };
}

/** Runs `memvault ARGS` as the operator would: a separate process of the built CLI. */
export function runCli(
  args: string[],
  options: { cwd: string; input?: string; env?: Record<string, string> },
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main, ...args], { cwd: options.cwd, env: cliEnv(options.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ stdout, stderr, code: code ?? -1 }));
    child.stdin.end(options.input ?? '');
  });
}

/** One line on stderr, no stack trace. */
export const ONE_LINE = /^memvault: [^\n]+\n$/;
