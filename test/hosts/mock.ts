import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A scripted stand-in for the model APIs the host CLIs talk to, on 127.0.0.1: Anthropic's Messages
// API (Claude Code), OpenAI's Responses API (Codex) and the Gemini API (Gemini CLI), each streamed
// the way its client asks. Every request is kept, so a test reads what reached "the model".
//
// The model's turns are scripted: it runs the given shell commands one per turn, then answers with
// text at once. The turn is told by the tool results a request carries, so the script holds for
// every request a client makes (titles, routing and other side requests get plain text).

export interface ModelRequest {
  method: string;
  url: string;
  /** The parsed JSON body (null for none). */
  body: unknown;
  /** Milliseconds since the mock started, when the request arrived. */
  at: number;
}

export interface ModelMock {
  url: string;
  requests: ModelRequest[];
  /** The shell commands the model runs, one per turn, before it answers. */
  commands: string[];
  /** The requests of the agent's own loop (those that offer a shell tool), in order. */
  turns(): ModelRequest[];
  close(): Promise<void>;
}

const FINAL_TEXT = 'Done.';

export async function startModelMock(commands: string[] = []): Promise<ModelMock> {
  const started = performance.now();
  const mock: ModelMock = {
    url: '',
    requests: [],
    commands,
    turns: () => mock.requests.filter((r) => shellTool(r.body) !== null),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        body = text;
      }
      mock.requests.push({ method: req.method ?? '', url: req.url ?? '', body, at: performance.now() - started });
      answer(req, res, body, mock.commands);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.unref();
  return mock;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The shell tool a request offers the model (by each API's naming), or null. */
function shellTool(body: unknown): string | null {
  const b = obj(body);
  const names = [
    ...list(b.tools).map((t) => obj(t).name),
    ...list(b.tools).flatMap((t) => list(obj(t).functionDeclarations).map((d) => obj(d).name)),
  ];
  const shells = ['Bash', 'exec_command', 'shell_command', 'shell', 'run_shell_command'];
  return shells.find((n) => names.includes(n)) ?? null;
}

/** How many tool results the conversation holds so far: the index of the model's next turn. */
function toolResults(body: unknown): number {
  const b = obj(body);
  const anthropic = list(b.messages)
    .flatMap((m) => list(obj(m).content))
    .filter((c) => obj(c).type === 'tool_result');
  const openai = list(b.input).filter((i) => /_call_output$/.test(String(obj(i).type)));
  const gemini = list(b.contents)
    .flatMap((c) => list(obj(c).parts))
    .filter((p) => obj(p).functionResponse !== undefined);
  return anthropic.length + openai.length + gemini.length;
}

function answer(req: IncomingMessage, res: ServerResponse, body: unknown, commands: string[]): void {
  const url = req.url ?? '';
  const tool = shellTool(body);
  const turn = toolResults(body);
  const command = tool !== null && turn < commands.length ? commands[turn] : null;
  const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  if (req.method === 'POST' && /\/v1\/messages(\?|$)/.test(url)) return anthropic(res, obj(body), command, id);
  if (req.method === 'POST' && /\/responses(\?|$)/.test(url)) return openaiResponses(res, tool, command, id);
  if (req.method === 'POST' && /:(stream)?[gG]enerateContent/.test(url)) return gemini(res, url, command);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{}');
}

function sse(res: ServerResponse, events: [string | null, Obj][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`).join(''));
}

/** Messages API: a tool_use block for a Bash call, else a text block; streamed when asked. */
function anthropic(res: ServerResponse, body: Obj, command: string | null, id: string): void {
  const block =
    command === null
      ? { type: 'text', text: FINAL_TEXT }
      : { type: 'tool_use', id: `toolu_${id}`, name: 'Bash', input: { command, description: 'Run it' } };
  const stop = command === null ? 'end_turn' : 'tool_use';
  const usage = { input_tokens: 10, output_tokens: 5 };
  const model = body.model ?? 'mock';
  const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model, stop_sequence: null, usage };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content: [block], stop_reason: stop }));
    return;
  }
  const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
  const delta =
    block.type === 'text'
      ? { type: 'text_delta', text: FINAL_TEXT }
      : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
  const event = (type: string, data: Obj): [string, Obj] => [type, { type, ...data }];
  sse(res, [
    event('message_start', { message: { ...message, content: [], stop_reason: null } }),
    event('content_block_start', { index: 0, content_block: start }),
    event('content_block_delta', { index: 0, delta }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }),
    event('message_stop', {}),
  ]);
}

/** Responses API: a function call of the shell tool Codex offers, else an assistant message. */
function openaiResponses(res: ServerResponse, tool: string | null, command: string | null, id: string): void {
  const argv = ['bash', '-lc', command];
  const args = tool === 'exec_command' ? { cmd: command } : tool === 'shell' ? { command: argv } : { command };
  const item =
    command === null
      ? { type: 'message', id: `msg_${id}`, role: 'assistant', content: [{ type: 'output_text', text: FINAL_TEXT }] }
      : { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: tool, arguments: JSON.stringify(args) };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const event = (type: string, data: Obj): [string, Obj] => [type, { type, ...data }];
  sse(res, [
    event('response.created', { response: { id: `resp_${id}` } }),
    event('response.output_item.added', { output_index: 0, item }),
    event('response.output_item.done', { output_index: 0, item }),
    event('response.completed', { response: { id: `resp_${id}`, usage } }),
  ]);
}

/** Gemini API: a run_shell_command call, else text (a routing request without tools gets the JSON it expects). */
function gemini(res: ServerResponse, url: string, command: string | null): void {
  const call = { functionCall: { name: 'run_shell_command', args: { command, description: 'Run it' } } };
  const parts = command === null ? [{ text: FINAL_TEXT }] : [call];
  const routing = { complexity_reasoning: 'a scripted turn', complexity_score: 1 };
  const text = url.includes(':generateContent') ? [{ text: JSON.stringify(routing) }] : parts;
  const body = {
    candidates: [{ content: { role: 'model', parts: text }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'mock',
  };
  if (url.includes(':streamGenerateContent')) return sse(res, [[null, body]]);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Every string in a request body, joined by newlines: what the model read, escapes undone. */
export function textOf(body: unknown): string {
  if (typeof body === 'string') return body;
  if (Array.isArray(body)) return body.map(textOf).join('\n');
  if (body !== null && typeof body === 'object') return Object.values(body).map(textOf).join('\n');
  return '';
}
