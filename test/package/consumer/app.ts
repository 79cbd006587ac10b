// A consumer's backend, as the README shows it: copied into a temporary project that installs the
// packed memvault tarball beside its own @anthropic-ai/sdk and @aws-sdk/client-s3 (versions other
// than the ones memvault develops against). test/package/consumer.test.ts typechecks this file
// under several strict module settings, runs it, and reads the JSON it prints.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { S3Client } from '@aws-sdk/client-s3';
import { createVault } from 'memvault';

type Turn = { stop_reason: 'tool_use' | 'end_turn'; content: Array<Record<string, unknown>> };
const toolUse = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A local stand-in for the Messages API: scripted assistant turns, every request body kept. */
async function fakeMessagesApi(turns: Turn[]) {
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
          model: 'claude-test',
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
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function toolRunnerExample(): Promise<unknown[]> {
  const api = await fakeMessagesApi([
    {
      stop_reason: 'tool_use',
      content: [toolUse('c1', { command: 'create', path: '/memories/plan.md', file_text: 'launch: friday\n' })],
    },
    {
      stop_reason: 'tool_use',
      content: [
        toolUse('s1', { command: 'str_replace', path: '/memories/plan.md', old_str: 'friday', new_str: 'monday' }),
        toolUse('bad', { command: 'view', path: '/memories/../etc/passwd' }),
        toolUse('missing', { command: 'str_replace', path: '/memories/plan.md', old_str: 'tuesday', new_str: 'x' }),
      ],
    },
    { stop_reason: 'tool_use', content: [toolUse('v1', { command: 'view', path: '/memories/plan.md' })] },
    { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] },
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'memvault-consumer-'));
  // The README's example, with the embedded store and a logger that is not pino.
  const vault = await createVault({ store: pathToFileURL(dir).href, logger: console });
  const client = new Anthropic({ apiKey: 'test-key', baseURL: api.baseURL, maxRetries: 0 });
  const userId = 'user-42';
  await client.beta.messages.toolRunner({
    model: 'claude-sonnet-5-5',
    max_tokens: 4096,
    messages: [{ role: 'user', content: 'Where did we leave the launch plan?' }],
    tools: [vault.tool(userId, { cache_control: { type: 'ephemeral' } })],
  });
  await vault.close();
  await api.close();
  return api.requests.map((r) => ({ tools: r.tools, last: r.messages.at(-1) }));
}

/** The app's own S3Client, with its own middleware: memvault must send through it. */
async function ownS3Client(): Promise<string[]> {
  const seen: string[] = [];
  const s3 = new S3Client({
    region: 'eu-west-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    credentials: { accessKeyId: 'app', secretAccessKey: 'app' },
    maxAttempts: 1,
  });
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      seen.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'consumerMarker' },
  );
  try {
    const vault = await createVault({
      store: 's3://consumer-bucket/app',
      s3,
      encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') },
    });
    await vault.run('user-42', { command: 'view', path: '/memories' });
    await vault.close();
  } catch {
    // Nothing listens on port 9: the point is who tried to send.
  }
  return seen;
}

const out = { runner: await toolRunnerExample(), s3Commands: await ownS3Client() };
process.stdout.write(JSON.stringify(out) + '\n');
