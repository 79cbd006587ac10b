// A consumer's backend on the Vercel AI SDK and on LangChain.js, as the README shows them: copied into
// a temporary project that installs the packed memvault tarball beside the LOW end of each
// framework's peer range. test/package/frameworks.test.ts typechecks it strictly, runs it, and
// reads the JSON it prints: the tool_result blocks each framework sent back, per conversation.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { generateText, stepCountIs } from 'ai';
import { createVault } from 'memvault';
import { memoryTool as aiSdkMemoryTool } from 'memvault/ai-sdk';
import { memoryTool as langChainMemoryTool } from 'memvault/langchain';

type Turn = { stop_reason: 'tool_use' | 'end_turn'; content: Array<Record<string, unknown>> };
const toolUse = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

/** One conversation: a create; an edit, a bad view and a failed edit at once; a view; then done. */
const TURNS: Turn[] = [
  {
    stop_reason: 'tool_use',
    content: [toolUse('c1', { command: 'create', path: '/memories/plan.md', file_text: 'launch: friday\n' })],
  },
  {
    stop_reason: 'tool_use',
    content: [
      toolUse('s1', { command: 'str_replace', path: '/memories/plan.md', old_str: 'friday', new_str: 'monday' }),
      toolUse('missing', { command: 'view', path: '/memories/nope.md' }),
      // No new_str: the protocol allows it (memvault answers, not the framework's input schema).
      toolUse('nomatch', { command: 'str_replace', path: '/memories/plan.md', old_str: 'sunday' }),
    ],
  },
  { stop_reason: 'tool_use', content: [toolUse('v1', { command: 'view', path: '/memories/plan.md' })] },
  { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] },
];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A local stand-in for the Messages API: the scripted turns, every request's last message kept. */
async function fakeMessagesApi(turns: Turn[] = TURNS) {
  const requests: Array<{ messages: Array<{ role: string; content: unknown }>; tools?: unknown[] }> = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      requests.push(JSON.parse(text) as (typeof requests)[number]);
      const turn = turns[Math.min(requests.length - 1, turns.length - 1)]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `msg_${requests.length}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: turn.content,
          stop_reason: turn.stop_reason,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    sent: () => requests.map((r) => ({ tools: r.tools, last: r.messages.at(-1) })),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function aiSdkExample(): Promise<unknown> {
  const api = await fakeMessagesApi();
  const vault = await createVault({ store: 'memory:' });
  const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${api.baseURL}/v1` });
  // The README's example.
  const { text } = await generateText({
    model: anthropic('claude-sonnet-4-5'),
    prompt: 'Where did we leave the launch plan?',
    tools: { memory: aiSdkMemoryTool(vault, 'user-42') },
    stopWhen: stepCountIs(10),
  });
  await vault.close();
  await api.close();
  return { text, requests: api.sent() };
}

async function langChainExample(): Promise<unknown> {
  const api = await fakeMessagesApi();
  const vault = await createVault({ store: 'memory:' });
  // The README's example: ChatAnthropic with the tool bound, the tool calls run by the app.
  const memory = langChainMemoryTool(vault, 'user-42');
  const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'test-key', anthropicApiUrl: api.baseURL });
  const withMemory = model.bindTools([memory]);
  const messages: BaseMessage[] = [new HumanMessage('Where did we leave the launch plan?')];
  for (;;) {
    const reply = await withMemory.invoke(messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) break;
    messages.push(...(await Promise.all(reply.tool_calls.map((call) => memory.invoke(call)))));
  }
  await vault.close();
  await api.close();
  return { text: messages.at(-1)!.content, requests: api.sent() };
}

/** A view of an image (a 1x1 PNG the host wrote) through each entry point: the tool_result sent back. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const IMAGE_TURNS: Turn[] = [
  { stop_reason: 'tool_use', content: [toolUse('img', { command: 'view', path: '/memories/pixel.png' })] },
  { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] },
];
async function imageViews(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const entry of ['aiSdk', 'langChain'] as const) {
    const api = await fakeMessagesApi(IMAGE_TURNS);
    const vault = await createVault({ store: 'memory:' });
    await (await vault.files('user-42')).write('/memories/pixel.png', Buffer.from(PNG, 'base64'));
    if (entry === 'aiSdk') {
      const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `${api.baseURL}/v1` });
      const tools = { memory: aiSdkMemoryTool(vault, 'user-42') };
      await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'Look.', tools, stopWhen: stepCountIs(3) });
    } else {
      const memory = langChainMemoryTool(vault, 'user-42');
      const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'test-key', anthropicApiUrl: api.baseURL });
      const messages: BaseMessage[] = [new HumanMessage('Look.')];
      const reply = await model.bindTools([memory]).invoke(messages);
      messages.push(reply, ...(await Promise.all(reply.tool_calls!.map((call) => memory.invoke(call)))));
      await model.bindTools([memory]).invoke(messages);
    }
    results[entry] = api.sent()[1]?.last;
    await vault.close();
    await api.close();
  }
  return results;
}

const out = { aiSdk: await aiSdkExample(), langChain: await langChainExample(), images: await imageViews() };
process.stdout.write(JSON.stringify(out) + '\n');
