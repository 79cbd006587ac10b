import { isDeepStrictEqual } from 'node:util';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, ToolLoopAgent, type LanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTool } from '../../src/ai-sdk.js';
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

async function setUp(
  script: Script,
  store: ObjectStore = new MemoryStore(),
): Promise<{ api: FakeApi; vault: Vault; model: LanguageModel }> {
  const api = await startFakeApi(script);
  const { vault } = await memoryVault({ store });
  open.push(api, vault);
  return { api, vault, model: provider(api)('claude-sonnet-4-5') };
}
const provider = (api: FakeApi) => createAnthropic({ apiKey: 'test-key', baseURL: `${api.baseURL}/v1` });
const turn = (...content: Array<Record<string, unknown>>) => ({ stop_reason: 'tool_use' as const, content });

describe('memvault/ai-sdk memoryTool with the real AI SDK', () => {
  it('declares the provider tool and runs a turn of eight calls at once, every edit landing (generateText)', async () => {
    const create = turn(toolUse('c1', { command: 'create', path: '/memories/plan.md', file_text: PLAN }));
    const { api, vault, model } = await setUp([create, parallelTurn, DONE]);
    const counted = countingRuns(vault);
    const result = await generateText({
      model,
      prompt: 'Update my plan.',
      tools: { memory: memoryTool(counted.vault, 'user-1') },
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(result.text).toBe('Done.');
    expect(api.requests[0]!.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
    const results = api.toolResults();
    expect(results.map((r) => r.tool_use_id)).toEqual(['c1', 'e1', 'e2', 'e3', 'e4', 'i1', 'i2', 'i3', 'i4']);
    expect(results.every((r) => r.is_error === undefined)).toBe(true);
    expect(results.slice(5).map((r) => r.content)).toEqual(
      Array(4).fill('The file /memories/plan.md has been edited.'),
    );
    expect(counted.maxInFlight()).toBeGreaterThan(1);
    expect(await planLines(vault, 'user-1')).toEqual(PLAN_AFTER);
  });

  it('streams (streamText): errors as error results with the exact text, an image view as an image block', async () => {
    const script = [
      turn(
        toolUse('missing', { command: 'view', path: '/memories/nope.md' }),
        toolUse('outside', { command: 'view', path: '/etc/passwd' }),
        toolUse('image', { command: 'view', path: CONFORMANCE_IMAGE_PATH }),
        toolUse('no-new-str', { command: 'str_replace', path: '/memories/a.md', old_str: 'x' }),
      ),
      DONE,
    ];
    const { api, vault, model } = await setUp(script);
    await seedConformance(vault, 'user-1');
    const stream = streamText({
      model,
      prompt: 'Look around.',
      tools: { memory: memoryTool(vault, 'user-1') },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(await stream.text).toBe('Done.');
    expect(api.requests.every((r) => r.stream === true)).toBe(true);
    expect(api.toolResults()).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'missing',
        is_error: true,
        content: 'The path /memories/nope.md does not exist. Please provide a valid path.',
      },
      {
        type: 'tool_result',
        tool_use_id: 'outside',
        is_error: true,
        content: expect.stringMatching(/^Error: Invalid path "\/etc\/passwd": /) as unknown,
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
      // The protocol allows str_replace without new_str: memvault answers, not the SDK's schema.
      {
        type: 'tool_result',
        tool_use_id: 'no-new-str',
        is_error: true,
        content: 'Error: The path /memories/a.md does not exist. Please provide a valid path.',
      },
    ]);
  });

  it('binds the user when built: two users in two agents never see each other’s files', async () => {
    const secret = '/memories/alice-only.md';
    const script: Script = (i, request) => {
      // Each agent's first request creates (alice) or looks for (bob) the file; then it ends.
      const isAlice = JSON.stringify(request.messages[0]).includes('alice');
      if (request.messages.length > 1) return DONE;
      return isAlice
        ? turn(toolUse(`a${i}`, { command: 'create', path: secret, file_text: 'alice was here\n' }))
        : turn(
            toolUse(`b${i}`, { command: 'view', path: secret }),
            toolUse(`r${i}`, { command: 'view', path: '/memories', user_id: 'alice' }),
          );
    };
    const { api, vault, model } = await setUp(script);
    const agent = (user: string) =>
      new ToolLoopAgent({ model, tools: { memory: memoryTool(vault, user) }, stopWhen: stepCountIs(3) });
    await agent('alice').generate({ prompt: 'I am alice' });
    await agent('bob').generate({ prompt: 'I am bob' });
    const [created, bobView, bobList] = api.toolResults();
    expect(created).toMatchObject({ content: `File created successfully at: ${secret}` });
    expect(bobView).toMatchObject({ is_error: true, content: expect.stringMatching(/does not exist/) as unknown });
    // A user id in the model's input changes nothing: the listing is bob's own, empty.
    expect(bobList!.content).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
    );
    expect(await (await vault.files('bob')).read(secret)).toBeNull();
    expect(await (await vault.files('alice')).read(secret)).not.toBeNull();
  });

  it('an aborted call does not run; a bad user id or option is an error when the tool is built', async () => {
    const { vault } = await memoryVault();
    open.push(vault);
    const tool = memoryTool(vault, 'user-1');
    // A provider tool at run time, and typed so (Mastra's Agent takes it by its id).
    expect(tool).toMatchObject({ type: 'provider', id: 'anthropic.memory_20250818' });
    const controller = new AbortController();
    controller.abort(new Error('stopped by the host'));
    const input = { command: 'create' as const, path: '/memories/a.md', file_text: 'x' };
    await expect(
      tool.execute!(input, { toolCallId: 't1', messages: [], abortSignal: controller.signal, context: {} }),
    ).rejects.toThrow('stopped by the host');
    expect(await (await vault.files('user-1')).read('/memories/a.md')).toBeNull();
    // Run directly, an error result is thrown with the protocol's text (the SDK sends String(error)).
    const missing = tool.execute!(
      { command: 'view', path: '/memories/a.md' },
      { toolCallId: 't2', messages: [], context: {} },
    );
    await expect(missing).rejects.toSatisfy(
      (e: unknown) => String(e) === 'The path /memories/a.md does not exist. Please provide a valid path.',
    );

    // Mastra's agents call toModelOutput(output), the AI SDK toModelOutput({ output }): both are read.
    const answer = { content: 'File created successfully at: /memories/b.md', isError: false };
    const text = { type: 'text', value: answer.content };
    expect(await tool.toModelOutput!({ toolCallId: 't3', input: {} as never, output: answer })).toEqual(text);
    expect(await tool.toModelOutput!(answer as never)).toEqual(text);

    expect(() => memoryTool(vault, '')).toThrow(expect.objectContaining({ code: 'INVALID_USER' }) as Error);
    expect(() => memoryTool(vault, 'u', { needsAproval: true } as never)).toThrow(
      expect.objectContaining({
        code: 'CONFIG',
        message: expect.stringContaining("'needsAproval'") as string,
      }) as Error,
    );
    expect(() => memoryTool({} as Vault, 'u')).toThrow(/vault must be a Vault/);
    expect(memoryTool(vault, 'u', { needsApproval: true }).needsApproval).toBe(true);
  });

  it('execute’s abortSignal: a command stopped before its write changes nothing; a written one stands', async () => {
    // The host aborts generateText or streamText while the command reads (before its write) or writes.
    const cancel = async (at: StoreOp, stream: boolean) => {
      const store = new AbortingStore(new MemoryStore());
      const { api, vault, model } = await setUp([turn(editStep1), DONE], store);
      await vault.run('user-1', { command: 'create', path: '/memories/plan.md', file_text: PLAN });
      const before = await snapshot(store);
      const counted = countingRuns(vault);
      const controller = new AbortController();
      store.abortAt(at, controller);
      const options = {
        model,
        prompt: 'Update my plan.',
        tools: { memory: memoryTool(counted.vault, 'user-1') },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        abortSignal: controller.signal,
      };
      // The framework gets the host's abort; the model gets no further request, no tool_result.
      await expect(stream ? streamText(options).text : generateText(options)).rejects.toThrow('stopped by the host');
      expect(api.requests).toHaveLength(1);
      return { results: await counted.results(), unchanged: isDeepStrictEqual(await snapshot(store), before) };
    };
    for (const stream of [false, true])
      expect(await cancel('get', stream), `stream: ${stream}`).toEqual({ results: [ABORTED], unchanged: true });
    const written = await cancel('put', false);
    expect(written).toEqual({ results: [{ content: EDITED_STEP_1, isError: false }], unchanged: false });
  });
});
