import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext, CommandResult } from '../../src/pipeline/context.js';
import type { MemoryCommand } from '../../src/tool/types.js';
import type { UserFiles } from '../../src/vault/user-files.js';
import type { AuditRecord } from '../../src/audit/record.js';

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'memvault-audit-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let requestCounter = 0;

/** A context as the vault would build it; `files` is never touched by the audit middleware. */
export function fakeContext(overrides: Partial<CommandContext> & { input: unknown }): CommandContext {
  requestCounter++;
  return {
    requestId: `req-${requestCounter}`,
    uid: 'u_3f9a0c',
    pathsCanonical: false,
    files: {} as UserFiles,
    stats: { bytesRead: 0, bytesWritten: 0, requests: {} },
    decisions: {},
    ...overrides,
  };
}

export function canonicalContext(command: MemoryCommand, overrides: Partial<CommandContext> = {}): CommandContext {
  return fakeContext({ input: command, command, pathsCanonical: true, ...overrides });
}

export const ok = (text = 'ok'): CommandResult => ({ content: text, isError: false });
export const failed = (code: CommandResult['code'], text = 'Error: no'): CommandResult => ({ content: text, isError: true, code });

export function readRecords(file: string): AuditRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** A clock the test advances by hand, so record times are known. */
export function manualClock(startMs = Date.UTC(2026, 0, 1)): { now: () => number; advance: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
