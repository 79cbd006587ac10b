import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { createVault } from '../../src/index.js';
import { redact } from '../../src/pii/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { readRecords, tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('audit behind the whole vault', () => {
  it('records every command of a workload and none of its PII, contents or raw paths', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const file = join(temp.dir, 'audit.jsonl');
    // Paths opted into "PII-redacted" form (the default records pseudonymous path ids instead).
    const vault = await createVault({
      store: new MemoryStore(),
      audit: { file, redactPath: (path) => redact(path).text },
    });

    const userId = 'jane.unique.userid@example.com';
    const planted = {
      userId,
      content: 'UNIQUE-CONTENT-d41f0a',
      content2: 'UNIQUE-SECOND-83bc5e',
      inserted: 'UNIQUE-INSERTED-1a9f77',
      email: 'bob.unique.person@example.org',
      phone: '+1 415 555 0132',
      card: '4111 1111 1111 1111',
      traversal: '/memories/../../UNIQUE-TRAVERSAL-etc',
      emailInName: 'carol.unique.name@example.net',
    };
    const inputs: unknown[] = [
      {
        command: 'create',
        path: '/memories/notes.md',
        file_text: `${planted.content}\nmail ${planted.email}, call ${planted.phone}\n`,
      },
      {
        command: 'create',
        path: `/memories/${planted.emailInName}.md`,
        file_text: `${planted.content2} card ${planted.card}\n`,
      },
      { command: 'str_replace', path: '/memories/notes.md', old_str: planted.content, new_str: planted.content2 },
      { command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: `${planted.inserted}\n` },
      { command: 'view', path: '/memories/notes.md' },
      { command: 'view', path: '/memories' },
      { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/archive/notes.md' },
      { command: 'view', path: planted.traversal },
      { command: 'create', path: planted.traversal, file_text: planted.content },
      { command: `delete_${planted.content}`, path: '/memories/x' },
      { command: 'delete', path: '/memories/archive/notes.md' },
      { command: 'view', path: '/memories/archive/notes.md' },
    ];
    const outcomes = [];
    for (const input of inputs) outcomes.push(await vault.run(userId, input));
    await vault.close();

    const text = readFileSync(file, 'utf8');
    for (const [name, value] of Object.entries(planted)) expect(text, name).not.toContain(value);
    expect(text).not.toContain('UNIQUE-');

    const commands = readRecords(file).filter((r) => r.type === 'command');
    expect(commands).toHaveLength(inputs.length);
    expect(commands.map((r) => r.outcome)).toEqual(outcomes.map((o) => (o.isError ? 'error' : 'ok')));
    expect(commands.map((r) => r.command)).toEqual([
      'create',
      'create',
      'str_replace',
      'insert',
      'view',
      'view',
      'rename',
      'view',
      'create',
      'unknown',
      'delete',
      'view',
    ]);
    expect(commands[0]).toMatchObject({
      path: '/memories/notes.md',
      decisions: { pathGuard: { blocked: false }, pii: { action: 'redacted' } },
    });
    expect(commands[0]!.bytesWritten).toBeGreaterThan(0);
    expect(commands[4]!.bytesRead).toBeGreaterThan(0);
    expect(Object.keys(commands[0]!.requests ?? {})).not.toHaveLength(0);
    expect(commands[1]!.path).toMatch(/^\/memories\/.*REDACTED/);
    expect(commands[6]).toMatchObject({ path: '/memories/notes.md', newPath: '/memories/archive/notes.md' });
    expect(commands[7]).toMatchObject({
      outcome: 'error',
      code: 'INVALID_PATH',
      decisions: { pathGuard: { blocked: true } },
    });
    expect(commands[7]!.path).toBeUndefined();
    expect(commands[11]).toMatchObject({ outcome: 'error', code: 'NOT_FOUND' });
    expect(new Set(commands.map((r) => r.uid)).size).toBe(1);

    expect((await verifyChains(await collectFileChains([file]))).ok).toBe(true);
  });

  it('records pseudonymous path ids by default: stable per path, never the name', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const file = join(temp.dir, 'audit.jsonl');
    const vault = await createVault({ store: new MemoryStore(), audit: { file } });
    await vault.run('u', { command: 'create', path: '/memories/therapy-notes.md', file_text: 'x' });
    await vault.run('u', { command: 'view', path: '/memories/therapy-notes.md' });
    await vault.run('u', { command: 'view', path: '/memories/other.md' });
    await vault.close();
    expect(readFileSync(file, 'utf8')).not.toContain('therapy');
    const [created, viewed, other] = readRecords(file).filter((r) => r.type === 'command');
    expect(created!.path).toMatch(/^#[A-Za-z0-9_-]{22}$/);
    expect(viewed!.path).toBe(created!.path);
    expect(other!.path).not.toBe(created!.path);
  });
});
