import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Messages API: answers each POST /v1/messages with the next scripted
 * assistant message and records every request body, so a test can read the tool_result blocks
 * that the SDK's toolRunner sent back.
 */
export interface ScriptedTurn {
  content: Array<Record<string, unknown>>;
  stop_reason: 'tool_use' | 'end_turn';
}

export interface FakeApi {
  baseURL: string;
  requests: Array<{ messages: Array<{ role: string; content: unknown }>; tools?: unknown[] }>;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeApi(turns: ScriptedTurn[]): Promise<FakeApi> {
  const requests: FakeApi['requests'] = [];
  let i = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
        res.writeHead(404).end();
        return;
      }
      requests.push(JSON.parse(text) as FakeApi['requests'][number]);
      const turn = turns[Math.min(i, turns.length - 1)]!;
      i += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `msg_${i}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: turn.content,
          stop_reason: turn.stop_reason,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
