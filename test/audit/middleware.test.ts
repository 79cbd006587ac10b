import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuditLogger, type AuditLogger } from '../../src/pipeline/audit-logger.js';
import type { AuditEntry } from '../../src/audit/record.js';
import { auditMiddleware, AuditUnavailableError } from '../../src/pipeline/audit.js';
import { compose } from '../../src/pipeline/compose.js';
import type { CommandDecisions, Middleware } from '../../src/pipeline/context.js';
import { canonicalContext, failed, fakeContext, ok, readRecords, tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
let logger: AuditLogger | undefined;
afterEach(async () => {
  await logger?.close();
  logger = undefined;
  cleanup?.();
});

async function openLogger(
  options: Parameters<typeof createAuditLogger>[0] = {},
): Promise<{ file: string; logger: AuditLogger }> {
  const temp = tempDir();
  cleanup = temp.cleanup;
  const file = join(temp.dir, 'audit.jsonl');
  logger = await createAuditLogger({ file, ...options });
  return { file, logger };
}

describe('audit middleware', () => {
  it('has the record in the file when the middleware returns (sync sink)', async () => {
    const { file, logger } = await openLogger();
    const ctx = canonicalContext({ command: 'view', path: '/memories/notes.md' });
    ctx.stats.bytesRead = 42;
    ctx.stats.requests.GET = 1;
    const result = await logger.middleware()(ctx, async () => ok('contents'));
    expect(result.content).toBe('contents');
    // Read right away, no flush: the write was synchronous.
    const last = readRecords(file).at(-1);
    expect(last).toMatchObject({
      type: 'command',
      requestId: ctx.requestId,
      uid: 'u_3f9a0c',
      command: 'view',
      path: '/memories/notes.md',
      outcome: 'ok',
      bytesRead: 42,
      bytesWritten: 0,
      requests: { GET: 1 },
    });
    expect(last?.latencyMs).toBeGreaterThanOrEqual(0);
    expect(last?.code).toBeUndefined();
  });

  it('records commands rejected inside the chain, without the raw path', async () => {
    const { file, logger } = await openLogger();
    const guard: Middleware = async (ctx) => {
      (ctx.decisions as Record<string, unknown>).pathGuard = { blocked: true, reason: 'traversal' };
      return failed('INVALID_PATH');
    };
    const chain = compose([logger.middleware(), guard]);
    const raw = { command: 'create', path: '/memories/../../etc/passwd', file_text: 'x' };
    const ctx = fakeContext({ input: raw, command: raw as never, pathsCanonical: false });
    const result = await chain(ctx, async () => ok());
    expect(result.isError).toBe(true);
    const last = readRecords(file).at(-1);
    expect(last).toMatchObject({
      command: 'create',
      outcome: 'error',
      code: 'INVALID_PATH',
      decisions: { pathGuard: { blocked: true, reason: 'traversal' } },
    });
    expect(last?.path).toBeUndefined();
    expect(readFileSync(file, 'utf8')).not.toContain('passwd');
  });

  it("records an unknown command name as 'unknown' and never copies it", async () => {
    const { file, logger } = await openLogger();
    const ctx = fakeContext({ input: { command: 'drop_tables_<script>', path: '/memories/x' } });
    await logger.middleware()(ctx, async () => failed('INVALID_INPUT'));
    expect(readRecords(file).at(-1)).toMatchObject({ command: 'unknown', code: 'INVALID_INPUT', outcome: 'error' });
    expect(readFileSync(file, 'utf8')).not.toContain('drop_tables');
  });

  it('records a throw below as INTERNAL and rethrows it', async () => {
    const { file, logger } = await openLogger();
    const boom = new Error('disk on fire');
    const ctx = canonicalContext({ command: 'delete', path: '/memories/a.md' });
    await expect(logger.middleware()(ctx, async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(readRecords(file).at(-1)).toMatchObject({ command: 'delete', outcome: 'error', code: 'INTERNAL' });
    expect(readFileSync(file, 'utf8')).not.toContain('disk on fire');
  });

  it('records both paths of a rename after redaction, and the raw user id only when configured', async () => {
    const { file, logger } = await openLogger({
      redactPath: (p) => p.replace(/[^/\s]+@[^/\s]+/g, '[EMAIL]'),
      includeUserId: true,
      rawUserIdOf: () => 'customer-7',
    });
    const ctx = canonicalContext({
      command: 'rename',
      old_path: '/memories/bob@example.com.md',
      new_path: '/memories/b.md',
    });
    await logger.middleware()(ctx, async () => ok());
    expect(readRecords(file).at(-1)).toMatchObject({
      path: '/memories/[EMAIL]',
      newPath: '/memories/b.md',
      userId: 'customer-7',
    });

    const withoutUserId = logger.middleware({ includeUserId: false });
    await withoutUserId(canonicalContext({ command: 'view', path: '/memories' }), async () => ok());
    expect(readRecords(file).at(-1)?.userId).toBeUndefined();
  });

  it('leaves the path out when the redactor throws', async () => {
    const { file, logger } = await openLogger({
      redactPath: () => {
        throw new Error('redactor broke');
      },
    });
    await logger.middleware()(canonicalContext({ command: 'view', path: '/memories/secret-name.md' }), async () =>
      ok(),
    );
    const last = readRecords(file).at(-1);
    expect(last?.command).toBe('view');
    expect(last?.path).toBeUndefined();
    expect(readFileSync(file, 'utf8')).not.toContain('secret-name');
  });

  it('refuses to run commands once the audit sink is unusable (fail closed)', async () => {
    let ran = false;
    const appender = { writable: false, append: (_entry: AuditEntry) => undefined };
    const mw = auditMiddleware(appender);
    await expect(
      mw(canonicalContext({ command: 'view', path: '/memories' }), async () => {
        ran = true;
        return ok();
      }),
    ).rejects.toBeInstanceOf(AuditUnavailableError);
    expect(ran).toBe(false);
  });

  it('never records file content, raw PII, raw paths or data smuggled into decisions', async () => {
    const { file, logger } = await openLogger({ redactPath: (p) => p.replace(/[^/\s]+@[^/\s]+/g, '[EMAIL]') });
    const secrets = {
      content: 'UNIQUE-CONTENT-7c1e9b',
      oldStr: 'UNIQUE-OLD-44ad01',
      newStr: 'UNIQUE-NEW-92bb3f',
      email: 'jane.unique.doe@example.org',
      phone: '+44 20 7946 0958',
      iban: 'DE89370400440532013000',
      rawPath: '/memories/../UNIQUE-RAW-PATH-55e0',
      key: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
    };
    const mw = logger.middleware();
    // A misbehaving host middleware: decisions of no declared shape (typed code cannot write them; a cast can).
    const decisions = {
      pii: {
        action: 'redacted',
        findings: { email: 1, phone: 1, iban: 1 },
        sample: secrets.email,
        text: `found ${secrets.phone}`,
      },
      quota: { blocked: false, usedBytes: 1200, note: secrets.iban },
      [secrets.email]: 1,
      key: secrets.key,
      nested: { deeper: { deepest: { content: secrets.content } } },
    };
    // Commands that passed the guard: canonical paths (with an e-mail in a file name), content fields.
    const commands = [
      {
        command: 'create',
        path: `/memories/${secrets.email}.md`,
        file_text: `${secrets.content} call ${secrets.phone}`,
      },
      {
        command: 'str_replace',
        path: '/memories/notes.md',
        old_str: secrets.oldStr,
        new_str: `${secrets.newStr} ${secrets.iban}`,
      },
      { command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: secrets.content },
    ] as const;
    for (const command of commands) {
      await mw(
        canonicalContext(command as never, { decisions: { ...decisions } as unknown as CommandDecisions }),
        async () => ok(secrets.content),
      );
    }
    // A command rejected by the guard: raw path, raw content.
    const rejected = { command: 'create', path: secrets.rawPath, file_text: secrets.content };
    await mw(
      fakeContext({
        input: rejected,
        command: rejected as never,
        decisions: { ...decisions } as unknown as CommandDecisions,
      }),
      async () => failed('INVALID_PATH', secrets.rawPath),
    );
    // A command that failed validation: no command at all.
    await mw(fakeContext({ input: { command: secrets.content, path: secrets.email } }), async () =>
      failed('INVALID_INPUT'),
    );

    const text = readFileSync(file, 'utf8');
    for (const [name, value] of Object.entries(secrets)) {
      expect(text, name).not.toContain(value);
    }
    expect(text).not.toContain('UNIQUE-');
    const records = readRecords(file).filter((r) => r.type === 'command');
    expect(records).toHaveLength(5);
    expect(records[0]?.path).toMatch(/^\/memories\/\[EMAIL\]/);
    expect(records[0]).toMatchObject({
      decisions: {
        pii: { action: 'redacted', findings: { email: 1, phone: 1, iban: 1 } },
        quota: { blocked: false, usedBytes: 1200 },
      },
    });
  });
});
