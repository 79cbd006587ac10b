// A consumer's Mastra agent with memvault's AI SDK memory tool, as docs/frameworks.md shows it: copied
// into the temporary project of test/package/frameworks.test.ts (the packed tarball beside the low end
// of @ai-sdk/anthropic's range and @mastra/core), typechecked strictly and run through the whole
// conformance conversation and a turn of parallel edits (argv[2]: the turns and the image to seed).
// Prints the tool_result blocks the stand-in of the Messages API received, as JSON.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnthropic } from '@ai-sdk/anthropic';
import { Agent } from '@mastra/core/agent';
import { createVault } from 'memvault';
import { memoryTool } from 'memvault/ai-sdk';

interface Script {
  /** The model's turns: each one's memory calls (the tool_use ids and inputs). */
  turns: Array<Array<{ id: string; input: Record<string, unknown> }>>;
  seed: { path: string; base64: string };
}
const script = JSON.parse(await readFile(process.argv[2]!, 'utf8')) as Script;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The stand-in: request i gets turn i's tool_use blocks; after the last turn, a text turn. */
const requests: Array<{ messages: Array<{ role: string; content: unknown }>; tools?: unknown[] }> = [];
const server = createServer((req, res) => {
  void readBody(req).then((text) => {
    requests.push(JSON.parse(text) as (typeof requests)[number]);
    const turn = script.turns[requests.length - 1];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `msg_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: turn
          ? turn.map(({ id, input }) => ({ type: 'tool_use', id, name: 'memory', input }))
          : [{ type: 'text', text: 'Done.' }],
        stop_reason: turn ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const vault = await createVault({ store: 'memory:' });
const userId = 'user-42';
await (await vault.files(userId)).write(script.seed.path, Buffer.from(script.seed.base64, 'base64'));
const anthropic = createAnthropic({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${port}/v1` });

// The docs' example (the test checks the Agent's construction against docs/frameworks.md).
const agent = new Agent({
  id: 'assistant',
  name: 'assistant',
  instructions: 'Keep what you learn about the user in your memory directory.',
  model: anthropic('claude-sonnet-4-5'),
  tools: { memory: memoryTool(vault, userId) }, // one agent (or tool) per user
});
const { text } = await agent.generate('Where did we leave the launch plan?', { maxSteps: script.turns.length + 1 });

await vault.close();
await new Promise<void>((resolve) => server.close(() => resolve()));
const toolResults = requests.flatMap((request) => {
  const content = request.messages.at(-1)?.content;
  return Array.isArray(content) ? (content as Array<{ type?: string }>).filter((b) => b.type === 'tool_result') : [];
});
process.stdout.write(
  JSON.stringify({ text, requests: requests.length, tools: requests[0]?.tools, toolResults }) + '\n',
);
