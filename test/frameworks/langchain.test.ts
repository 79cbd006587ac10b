import { isDeepStrictEqual } from 'node:util';
import { ToolMessage } from '@langchain/core/messages';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { createAgent } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTool } from '../../src/langchain.js';
import type { Vault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { CONFORMANCE_IMAGE_PATH, CONFORMANCE_PNG, seedConformance } from '../kit/conformance.js';
import { startFakeApi, toolUse, type FakeApi, type Script } from '../kit/fake-messages-api.js';
import { snapshot, type StoreOp } from '../kit/stores.js';
import { memoryVault } from '../kit/vault.js';
import {
  ABORTED,
  AbortingStore,
  chatModel,
  countingRuns,
  DONE,
  EDITED_STEP_1,
  editStep1,
  parallelTurn,
  PLAN,
  PLAN_AFTER,
  planLines,
} from './conversation.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

async function setUp(script: Script, store: ObjectStore = new MemoryStore()): Promise<{ api: FakeApi; vault: Vault }> {
  const api = await startFakeApi(script);
  const { vault } = await memoryVault({ store });
  open.push(api, vault);
  return { api, vault };
}
const turn = (...content: Array<Record<string, unknown>>) => ({ stop_reason: 'tool_use' as const, content });
const go = { messages: [{ role: 'user', content: 'Go.' }] };

describe('memvault/langchain memoryTool with the real LangChain packages', () => {
  it('bound to ChatAnthropic in createAgent: the provider tool, a turn of eight calls at once, every edit landing', async () => {
    const create = turn(toolUse('c1', { command: 'create', path: '/memories/plan.md', file_text: PLAN }));
    const { api, vault } = await setUp([create, parallelTurn, DONE]);
    const counted = countingRuns(vault);
    const agent = createAgent({ model: chatModel(api), tools: [memoryTool(counted.vault, 'user-1')] });
    const result = await agent.invoke(go);
    expect(result.messages.at(-1)!.content).toBe('Done.');
    expect(api.requests[0]!.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
    const results = api.toolResults();
    expect(results.map((r) => r.tool_use_id)).toEqual(['c1', 'e1', 'e2', 'e3', 'e4', 'i1', 'i2', 'i3', 'i4']);
    expect(results.slice(5).map((r) => r.content)).toEqual(
      Array(4).fill('The file /memories/plan.md has been edited.'),
    );
    expect(counted.maxInFlight()).toBeGreaterThan(1);
    expect(await planLines(vault, 'user-1')).toEqual(PLAN_AFTER);
  });

  it('in createReactAgent (LangGraph): exact error text (status error), an image view as an image block', async () => {
    const script = [
      turn(
        toolUse('missing', { command: 'view', path: '/memories/nope.md' }),
        toolUse('image', { command: 'view', path: CONFORMANCE_IMAGE_PATH }),
        toolUse('no-new-str', { command: 'str_replace', path: '/memories/a.md', old_str: 'x' }),
      ),
      DONE,
    ];
    const { api, vault } = await setUp(script);
    await seedConformance(vault, 'user-1');
    const agent = createReactAgent({ llm: chatModel(api), tools: [memoryTool(vault, 'user-1')] });
    const result = await agent.invoke(go);
    const statuses = result.messages.filter((m) => m instanceof ToolMessage).map((m) => (m as ToolMessage).status);
    expect(statuses).toEqual(['error', 'success', 'error']);
    // @langchain/anthropic sends no is_error for a ToolMessage of status 'error': the text is exact.
    expect(api.toolResults()).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'missing',
        content: 'The path /memories/nope.md does not exist. Please provide a valid path.',
      },
      {
        type: 'tool_result',
        tool_use_id: 'image',
        content: [
          { type: 'text', text: `Here's the image at ${CONFORMANCE_IMAGE_PATH}:` },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: CONFORMANCE_PNG.toString('base64') },
          },
        ],
      },
      {
        type: 'tool_result',
        tool_use_id: 'no-new-str',
        content: 'Error: The path /memories/a.md does not exist. Please provide a valid path.',
      },
    ]);
  });

  it('binds the user when built: two users’ agents never see each other’s files', async () => {
    const secret = '/memories/alice-only.md';
    const script: Script = (i, request) => {
      if (request.messages.length > 1) return DONE;
      return JSON.stringify(request.messages[0]).includes('alice')
        ? turn(toolUse(`a${i}`, { command: 'create', path: secret, file_text: 'alice was here\n' }))
        : turn(toolUse(`b${i}`, { command: 'view', path: secret, user_id: 'alice' }));
    };
    const { api, vault } = await setUp(script);
    for (const user of ['alice', 'bob']) {
      const agent = createAgent({ model: chatModel(api), tools: [memoryTool(vault, user)] });
      await agent.invoke({ messages: [{ role: 'user', content: `I am ${user}` }] });
    }
    expect(api.toolResults().map((r) => r.content)).toEqual([
      `File created successfully at: ${secret}`,
      `The path ${secret} does not exist. Please provide a valid path.`,
    ]);
    expect(await (await vault.files('bob')).read(secret)).toBeNull();
  });

  it('a call whose input has a `type: "tool_call"` field runs that input, as vault.run does', async () => {
    // LangChain's call() takes input with type 'tool_call' for a tool call and would run its `args`
    // (or reject input without them): extra fields must not change the command the model sent.
    const decoy = { command: 'delete', path: '/memories/plan.md' };
    const inputs = [
      { command: 'view', path: '/memories/plan.md', type: 'tool_call', args: decoy, id: 'forged' },
      { command: 'view', path: '/memories/plan.md', type: 'tool_call' },
    ];
    const script = [turn(...inputs.map((input, i) => toolUse(`t${i}`, input))), DONE];
    const { api, vault } = await setUp(script);
    await vault.run('user-1', { command: 'create', path: '/memories/plan.md', file_text: PLAN });
    const expected = await Promise.all(inputs.map(async (input) => (await vault.run('user-1', input)).content));
    const agent = createAgent({ model: chatModel(api), tools: [memoryTool(vault, 'user-1')] });
    await agent.invoke(go);
    expect(api.toolResults().map((r) => [r.tool_use_id, r.content])).toEqual([
      ['t0', expected[0]],
      ['t1', expected[1]],
    ]);
    expect(await planLines(vault, 'user-1')).toEqual(PLAN.trimEnd().split('\n'));
  });

  it('invoked directly: content, or a throw with the exact text; an aborted call does not run; bad arguments throw', async () => {
    const { vault } = await memoryVault();
    open.push(vault);
    const tool = memoryTool(vault, 'user-1', { tags: ['memory'] });
    expect(tool.tags).toEqual(['memory']);
    await expect(tool.invoke({ command: 'create', path: '/memories/a.md', file_text: 'hello' })).resolves.toBe(
      'File created successfully at: /memories/a.md',
    );
    await expect(tool.invoke({ command: 'view', path: '/memories/b.md' })).rejects.toThrow(
      /^The path \/memories\/b\.md does not exist\. Please provide a valid path\.$/,
    );
    const call = {
      type: 'tool_call' as const,
      id: 'call-1',
      name: 'memory',
      args: { command: 'delete', path: '/memories/a.md' },
    };
    await expect(tool.invoke(call, { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(await (await vault.files('user-1')).read('/memories/a.md')).not.toBeNull();
    const message = (await tool.invoke(call)) as unknown as ToolMessage;
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message).toMatchObject({
      tool_call_id: 'call-1',
      status: 'success',
      content: 'Successfully deleted /memories/a.md',
    });

    expect(() => memoryTool(vault, ' ')).toThrow(expect.objectContaining({ code: 'INVALID_USER' }) as Error);
    expect(() => memoryTool(vault, 'u', { tag: ['x'] } as never)).toThrow(
      expect.objectContaining({ code: 'CONFIG' }) as Error,
    );
  });

  it('the run’s signal reaches the tool: a command stopped before its write changes nothing; a written one stands', async () => {
    // The host aborts agent.invoke while the command reads (before its write) or writes.
    const cancel = async (at: StoreOp) => {
      const store = new AbortingStore(new MemoryStore());
      const { api, vault } = await setUp([turn(editStep1), DONE], store);
      await vault.run('user-1', { command: 'create', path: '/memories/plan.md', file_text: PLAN });
      const before = await snapshot(store);
      const counted = countingRuns(vault);
      const controller = new AbortController();
      store.abortAt(at, controller);
      const agent = createAgent({ model: chatModel(api), tools: [memoryTool(counted.vault, 'user-1')] });
      // LangChain rejects at the abort, not waiting for the tool: the command's own result is awaited.
      await expect(agent.invoke(go, { signal: controller.signal })).rejects.toThrow('stopped by the host');
      expect(api.requests).toHaveLength(1);
      return { results: await counted.results(), unchanged: isDeepStrictEqual(await snapshot(store), before) };
    };
    expect(await cancel('get')).toEqual({ results: [ABORTED], unchanged: true });
    expect(await cancel('put')).toEqual({ results: [{ content: EDITED_STEP_1, isError: false }], unchanged: false });
  });
});
