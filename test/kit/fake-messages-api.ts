import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Messages API: answers each POST /v1/messages with the next scripted
 * assistant message (as JSON, or as server-sent events when the request asks to stream) and
 * records every request body, so a test can read the tool_result blocks a client (the SDK's
 * toolRunner, the AI SDK, LangChain) sent back.
 */
export interface ScriptedTurn {
  content: Array<Record<string, unknown>>;
  stop_reason: 'tool_use' | 'end_turn';
}

export interface RecordedRequest {
  messages: Array<{ role: string; content: unknown }>;
  tools?: unknown[];
  stream?: boolean;
}

/** A tool_result block as a client sends it back. */
export interface SentToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content?: unknown;
  is_error?: boolean;
}

export interface FakeApi {
  baseURL: string;
  requests: RecordedRequest[];
  /** Every tool_result block of every request's last user message, in order (each one once). */
  toolResults(): SentToolResult[];
  close(): Promise<void>;
}

/** The turns, or a function of the request's index and body (a turn per step of a long script). */
export type Script = ScriptedTurn[] | ((index: number, request: RecordedRequest) => ScriptedTurn);

export const toolUse = (id: string, input: Record<string, unknown>) => ({
  type: 'tool_use',
  id,
  name: 'memory',
  input,
});

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function message(i: number, turn: ScriptedTurn) {
  return {
    id: `msg_${i}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: turn.content,
    stop_reason: turn.stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** The turn as the streaming API sends it: one start, delta and stop per content block. */
function sendEvents(res: ServerResponse, i: number, turn: ScriptedTurn): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { ...message(i, turn), content: [], stop_reason: null } });
  turn.content.forEach((block, index) => {
    if (block['type'] === 'tool_use') {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block['input']) },
      });
    } else {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block['text'] } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: turn.stop_reason, stop_sequence: null }, usage: { output_tokens: 1 } });
  send('message_stop', {});
  res.end();
}

export async function startFakeApi(script: Script): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(text) as RecordedRequest;
      requests.push(request);
      const i = requests.length - 1;
      const turn = typeof script === 'function' ? script(i, request) : script[Math.min(i, script.length - 1)]!;
      if (request.stream) {
        sendEvents(res, i + 1, turn);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message(i + 1, turn)));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    toolResults: () => {
      const seen = new Set<string>();
      return requests.flatMap((request) => {
        const content = request.messages.at(-1)?.content;
        if (!Array.isArray(content)) return [];
        return (content as SentToolResult[]).filter((block) => {
          if (block.type !== 'tool_result' || seen.has(block.tool_use_id)) return false;
          seen.add(block.tool_use_id);
          return true;
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
