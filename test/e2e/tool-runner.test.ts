import Anthropic from '@anthropic-ai/sdk';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { startFakeApi, type FakeApi } from './fake-messages-api.js';

const toolUse = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

describe('the real @anthropic-ai/sdk toolRunner with vault.tool(user)', () => {
  let api: FakeApi | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs eight memory calls of one turn on one file and every edit lands', async () => {
    const edits = [
      ...[1, 2, 3, 4].map((i) =>
        toolUse(`e${i}`, {
          command: 'str_replace',
          path: '/memories/plan.md',
          old_str: `- step ${i}: todo`,
          new_str: `- step ${i}: done`,
        }),
      ),
      ...[1, 2, 3, 4].map((i) =>
        toolUse(`i${i}`, { command: 'insert', path: '/memories/plan.md', insert_line: 0, insert_text: `note ${i}` }),
      ),
    ];
    api = await startFakeApi([
      {
        stop_reason: 'tool_use',
        content: [
          toolUse('c1', {
            command: 'create',
            path: '/memories/plan.md',
            file_text: '- step 1: todo\n- step 2: todo\n- step 3: todo\n- step 4: todo\n',
          }),
        ],
      },
      { stop_reason: 'tool_use', content: edits },
      {
        stop_reason: 'tool_use',
        content: [
          toolUse('v1', { command: 'view', path: '/memories/plan.md' }),
          toolUse('bad', { command: 'view', path: '/memories/../etc/passwd' }),
        ],
      },
      { stop_reason: 'end_turn', content: [{ type: 'text', text: 'All done.' }] },
    ]);
    dir = await mkdtemp(join(tmpdir(), 'memvault-e2e-'));
    const vault = await createVault({ store: pathToFileURL(dir).href });
    const client = new Anthropic({ apiKey: 'test-key', baseURL: api.baseURL, maxRetries: 0 });
    const final = await client.beta.messages.toolRunner({
      model: 'claude-test',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Update my plan.' }],
      tools: [vault.tool('user-42')],
    });
    expect(final.content).toEqual([{ type: 'text', text: 'All done.' }]);
    expect(api.requests).toHaveLength(4);
    expect(api.requests[0]!.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);

    const resultsOf = (n: number) => {
      const last = api!.requests[n]!.messages.at(-1)!;
      expect(last.role).toBe('user');
      return last.content as Array<{ type: string; tool_use_id: string; content: unknown; is_error?: boolean }>;
    };
    expect(resultsOf(1)).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: 'File created successfully at: /memories/plan.md' },
    ]);
    const turn2 = resultsOf(2);
    expect(turn2.map((r) => r.tool_use_id)).toEqual(['e1', 'e2', 'e3', 'e4', 'i1', 'i2', 'i3', 'i4']);
    for (const r of turn2) {
      expect(r.is_error).toBeUndefined();
      expect(r.type).toBe('tool_result');
    }
    for (const r of turn2.slice(0, 4)) expect(String(r.content)).toMatch(/^The memory file has been edited\./);
    for (const r of turn2.slice(4)) expect(r.content).toBe('The file /memories/plan.md has been edited.');

    const [viewResult, badResult] = resultsOf(3);
    expect(badResult).toMatchObject({ tool_use_id: 'bad', is_error: true });
    expect(String(badResult!.content)).toMatch(/^Error: Invalid path "\/memories\/\.\.\/etc\/passwd"/);
    const viewed = String(viewResult!.content);
    const lines = viewed
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t')[1]);
    expect(lines.slice(4).sort()).toEqual(['- step 1: done', '- step 2: done', '- step 3: done', '- step 4: done']);
    expect(lines.slice(0, 4).sort()).toEqual(['note 1', 'note 2', 'note 3', 'note 4']);

    const file = await (await vault.files('user-42')).read('/memories/plan.md');
    expect(Buffer.from(file!.data).toString('utf8').split('\n').filter(Boolean)).toHaveLength(8);
    await vault.close();
  });
});
