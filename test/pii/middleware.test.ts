import { describe, expect, it } from 'vitest';
import type { CommandContext, CommandResult } from '../../src/pipeline/context.js';
import { piiRedactor, redactForLog } from '../../src/pipeline/pii-redactor.js';
import type { PiiDecision } from '../../src/pipeline/pii-redactor.js';
import type { MemoryCommand } from '../../src/tool/types.js';
import type { TreeFiles } from '../../src/vault/tree-files.js';

const EMAIL = 'jane.doe@example.com';
const CARD = '4111 1111 1111 1111';
const TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';

function fakeContext(command: MemoryCommand | undefined): CommandContext {
  return {
    requestId: 'req-1',
    uid: 'u-hash',
    input: command,
    command,
    pathsCanonical: true,
    // The redactor never touches files; a test that reached them would throw here.
    files: new Proxy(
      {},
      {
        get: () => {
          throw new Error('files must not be used');
        },
      },
    ) as TreeFiles,
    stats: { bytesRead: 0, bytesWritten: 0, requests: {} },
    decisions: {},
  };
}

const OK: CommandResult = { content: 'ok', isError: false };

/** Runs the middleware and records what the rest of the chain would have received. */
async function run(command: MemoryCommand | undefined, options?: Parameters<typeof piiRedactor>[0]) {
  const ctx = fakeContext(command);
  let nextCalls = 0;
  let seen: MemoryCommand | undefined;
  const result = await piiRedactor(options)(ctx, () => {
    nextCalls++;
    seen = ctx.command;
    return Promise.resolve(OK);
  });
  return { ctx, result, nextCalls, seen, decision: ctx.decisions.pii as PiiDecision | undefined };
}

describe('piiRedactor', () => {
  it('redacts create.file_text and counts findings by type', async () => {
    const text = `Contact ${EMAIL}, card ${CARD}, also ${EMAIL.replace('jane', 'john')}`;
    const { result, nextCalls, seen, decision } = await run({
      command: 'create',
      path: '/memories/a.md',
      file_text: text,
    });
    expect(result).toEqual(OK);
    expect(nextCalls).toBe(1);
    expect(seen).toEqual({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'Contact [REDACTED:EMAIL], card [REDACTED:CREDIT_CARD], also [REDACTED:EMAIL]',
    });
    expect(decision).toEqual({ action: 'redacted', findings: { EMAIL: 2, CREDIT_CARD: 1 } });
  });

  it('leaves str_replace and insert as written and hands the command a write filter instead', async () => {
    for (const command of [
      {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: `email: ${EMAIL}`,
        new_str: `email: ${EMAIL} (work), token ${TOKEN}`,
      },
      { command: 'insert', path: '/memories/a.md', insert_line: 3, insert_text: 'ip 10.1.2.3\n' },
    ] as MemoryCommand[]) {
      const { ctx, seen, nextCalls } = await run(command);
      expect(seen).toBe(command);
      expect(nextCalls).toBe(1);
      expect(ctx.writeFilter).toBeDefined();
    }
  });

  it('the write filter redacts the file the edit produces and records counts', async () => {
    const { ctx, decision } = await run({ command: 'str_replace', path: '/memories/a.md', old_str: 'x', new_str: '@' });
    // "jane.doe" + "@" + "example.com": the fragment holds no address, the result does.
    const stored = ctx.writeFilter!.edited(
      '/memories/a.md',
      'mail jane.doexexample.com\n',
      'mail jane.doe@example.com\n',
    );
    // The address reaches into text the file held before the edit: the stored file held it in pieces.
    expect(stored).toEqual({ text: 'mail [REDACTED:EMAIL]\n', redactedStored: true });
    expect(decision).toEqual({ action: 'redacted', findings: { EMAIL: 1 }, redactedStored: true });
    // An address the edit brings in whole redacts nothing that was stored.
    expect(ctx.writeFilter!.edited('/memories/a.md', 'mail x\n', 'mail jane.doe@example.com\n')).toEqual({
      text: 'mail [REDACTED:EMAIL]\n',
      redactedStored: false,
    });
    expect(decision).toEqual({ action: 'redacted', findings: { EMAIL: 1 } });
    expect(ctx.writeFilter!.storedForm(`mail ${EMAIL}`)).toBe('mail [REDACTED:EMAIL]');
    expect(ctx.writeFilter!.storedForm('no data here')).toBeUndefined();
  });

  it('passes clean text through untouched with action none', async () => {
    const command: MemoryCommand = {
      command: 'create',
      path: '/memories/a.md',
      file_text: 'Likes tea. v1.2.3 on 2024-01-02.',
    };
    const { seen, decision } = await run(command);
    expect(seen).toBe(command);
    expect(decision).toEqual({ action: 'none', findings: {} });
  });

  it('does not inspect view, delete or rename with ordinary paths, and calls next once', async () => {
    for (const command of [
      { command: 'view', path: '/memories/notes' },
      { command: 'delete', path: '/memories/x.md' },
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' },
    ] as MemoryCommand[]) {
      const { seen, nextCalls, decision, ctx } = await run(command);
      expect(seen).toBe(command);
      expect(nextCalls).toBe(1);
      expect(decision).toBeUndefined();
      expect(ctx.writeFilter).toBeUndefined();
    }
  });

  it('calls next when there is no parsed command', async () => {
    const { nextCalls, result, decision } = await run(undefined);
    expect(nextCalls).toBe(1);
    expect(result).toEqual(OK);
    expect(decision).toBeUndefined();
  });

  it('rejects by policy: error names the kind of data, never the data, and next is not called', async () => {
    const text = `Write to ${EMAIL} and use ${TOKEN}`;
    const { result, nextCalls, decision } = await run(
      { command: 'create', path: '/memories/a.md', file_text: text },
      { policy: { EMAIL: 'reject', SECRET: 'reject' } },
    );
    expect(nextCalls).toBe(0);
    expect(result.isError).toBe(true);
    expect(result.code).toBe('PII_REJECTED');
    expect(result.content).toMatch(/^Error: /);
    expect(result.content).toContain('an e-mail address');
    expect(result.content).toContain('a secret');
    expect(result.content).not.toContain(EMAIL);
    expect(result.content).not.toContain(TOKEN);
    expect(decision).toEqual({ action: 'rejected', findings: { EMAIL: 1, SECRET: 1 }, rejected: ['EMAIL', 'SECRET'] });
  });

  it('rejects an edit whose result has a rejected type, never because of old_str', async () => {
    const options = { policy: { EMAIL: 'reject' as const } };
    const { ctx, nextCalls, decision } = await run(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'x', new_str: '@' },
      options,
    );
    expect(nextCalls).toBe(1);
    expect(() => ctx.writeFilter!.edited('/memories/a.md', 'jane.doexexample.com', 'jane.doe@example.com')).toThrow(
      /an e-mail address/,
    );
    expect(decision).toMatchObject({ action: 'rejected', rejected: ['EMAIL'] });
    // Removing an address (old_str held it) is fine.
    expect(ctx.writeFilter!.edited('/memories/a.md', `mail ${EMAIL}`, 'mail removed')).toEqual({
      text: 'mail removed',
      redactedStored: false,
    });
    expect(decision).toEqual({ action: 'none', findings: {} });
  });

  it('allow policy and allow-list let values through', async () => {
    const { seen, decision } = await run(
      { command: 'create', path: '/memories/a.md', file_text: `help@acme.io, 10.0.0.1, ${EMAIL}` },
      { policy: { IP_ADDRESS: 'allow' }, allowList: ['help@acme.io'] },
    );
    expect(seen).toMatchObject({ file_text: 'help@acme.io, 10.0.0.1, [REDACTED:EMAIL]' });
    expect(decision).toEqual({ action: 'redacted', findings: { EMAIL: 1 } });
  });

  it('decisions hold counts only, nothing of the data', async () => {
    const { ctx } = await run({ command: 'create', path: '/memories/a.md', file_text: `${EMAIL} ${CARD} ${TOKEN}` });
    const serialized = JSON.stringify(ctx.decisions);
    for (const value of [EMAIL, CARD, TOKEN, '4111']) expect(serialized).not.toContain(value);
  });
});

describe('redactForLog', () => {
  it('replaces PII in paths for audit records and logs', () => {
    expect(redactForLog(`/memories/clients/${EMAIL}/notes.md`)).toBe('/memories/clients/[REDACTED:EMAIL]/notes.md');
    expect(redactForLog('/memories/calls/+49 171 2345678.md')).toBe('/memories/calls/[REDACTED:PHONE].md');
  });
  it('leaves ordinary paths alone', () => {
    expect(redactForLog('/memories/2024-03-15 standup v1.2.md')).toBe('/memories/2024-03-15 standup v1.2.md');
  });
});
