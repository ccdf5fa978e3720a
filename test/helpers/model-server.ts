// A scripted model server for tests, speaking the real wire protocols: OpenAI chat completions
// (`/v1/chat/completions`), the OpenAI Responses API (`/v1/responses`) and the Anthropic Messages API
// (`/v1/messages`), streamed (SSE) or not. Agents and
// replay talk to it over HTTP; it answers from a script and records every request it got.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool call the scripted model makes. `arguments` is sent as JSON text (a string is sent as it is). */
export interface ScriptedToolCall {
  name: string;
  arguments: unknown;
  /** Default: `call_<n>` numbered across the server's life. */
  id?: string;
  /** On the Responses wire: a free-form `custom_tool_call` whose input is `arguments` (a string). */
  custom?: boolean;
}

export interface ScriptedUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

/** One model answer: text, reasoning, tool calls, or an HTTP error. */
export interface ScriptedReply {
  text?: string;
  /** Sent as `delta.reasoning_content` (what OpenAI-compatible servers such as vLLM and DeepSeek use). */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Default: counted from the request and reply sizes (about four characters a token). */
  usage?: ScriptedUsage;
  /** Answer with this HTTP status and an error body instead; `retryAfter` (seconds) sets Retry-After. */
  error?: { status: number; message: string; retryAfter?: number };
  /** Wait this long before answering (a slow model, or one that times out). */
  delayMs?: number;
}

/** A request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined for a GET or a body that is not JSON). */
  body: ChatRequest | undefined;
  /** The body as it arrived. */
  raw: string;
  /** Which reply answered it (undefined for non-chat requests). */
  reply?: ScriptedReply;
}

/** The parts of a chat-completions request the tests look at. */
export interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  [key: string]: unknown;
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/**
 * Decides the reply to one chat request. Return undefined to fall through to the queue of scripted turns.
 * `index` counts chat requests from 0.
 */
export type Responder = (request: ChatRequest, index: number) => ScriptedReply | undefined;

export interface ModelServerOptions {
  /** Replies given in order to the chat requests that no responder answered. */
  turns?: ScriptedReply[];
  /** Consulted first, for every chat request (e.g. side calls such as title generation). */
  responders?: Responder[];
  /** Answer when the turns run out; default: an HTTP 500 saying the script is exhausted. */
  exhausted?: ScriptedReply;
  /** Model ids listed by GET /v1/models; default: ['scripted']. */
  models?: string[];
  /** Characters per streamed text chunk (default 16), so clients see several deltas. */
  chunkSize?: number;
}

export interface ModelServer {
  /** e.g. http://127.0.0.1:41234/v1 — what a client takes as its base URL. */
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /** Chat requests only, in arrival order. */
  chatRequests(): RecordedRequest[];
  /** Replies queued but not used yet. */
  remaining(): number;
  /** Queue more turns (e.g. for the next user message of a conversation). */
  push(...turns: ScriptedReply[]): void;
  /** Add responders, consulted after those given at start. */
  respondWith(...responders: Responder[]): void;
  close(): Promise<void>;
}

/** Requests that carry no tools: agents' side calls (titles, summaries) rather than agent steps. */
export const withoutTools =
  (reply: ScriptedReply | ((request: ChatRequest) => ScriptedReply)): Responder =>
  (request) =>
    request.tools === undefined || request.tools.length === 0
      ? typeof reply === 'function'
        ? reply(request)
        : reply
      : undefined;

/** The text of a chat message's content, whether a string or a list of parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part?.text === 'string' ? (part.text as string) : ''))
    .filter(Boolean)
    .join('\n');
}

/** Starts the server on 127.0.0.1 on a free port. The caller must close() it. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const queue = [...(options.turns ?? [])];
  const responders = [...(options.responders ?? [])];
  const models = options.models ?? ['scripted'];
  const chunkSize = options.chunkSize ?? 16;
  const requests: RecordedRequest[] = [];
  let chatCount = 0;
  let callCount = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    let body: ChatRequest | undefined;
    try {
      body = raw.length > 0 ? (JSON.parse(raw) as ChatRequest) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, raw };
    requests.push(recorded);

    if (req.method === 'GET' && /\/models$/.test(path)) {
      sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })),
      });
      return;
    }
    const anthropic = /\/messages$/.test(path);
    const responses = /\/responses$/.test(path);
    const gemini = /\/v1beta\/models\/[^/]+:(generateContent|streamGenerateContent)$/.exec(path);
    if (
      req.method !== 'POST' ||
      !(anthropic || responses || gemini || /\/chat\/completions$/.test(path)) ||
      !body
    ) {
      sendJson(res, 404, { error: { message: `no route for ${req.method} ${path}`, type: 'not_found' } });
      return;
    }
    const index = chatCount++;
    let reply: ScriptedReply | undefined;
    for (const responder of responders) {
      reply = responder(body, index);
      if (reply) break;
    }
    reply ??= queue.shift() ??
      options.exhausted ?? { error: { status: 500, message: 'scripted model: no turns left in the script' } };
    recorded.reply = reply;
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (res.destroyed) return;
    if (reply.error) {
      if (reply.error.retryAfter !== undefined) res.setHeader('retry-after', String(reply.error.retryAfter));
      const type = anthropic ? 'error' : 'scripted_error';
      sendJson(
        res,
        reply.error.status,
        anthropic
          ? { type: 'error', error: { type: 'api_error', message: reply.error.message } }
          : { error: { message: reply.error.message, type } },
      );
      return;
    }
    const calls = (reply.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++callCount}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      ...(call.custom ? { custom: true } : {}),
    }));
    const finish = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    const usage = usageOf(reply, body);
    const id = `chatcmpl-${index + 1}`;
    const model = body.model ?? models[0] ?? 'scripted';
    if (anthropic) {
      messagesReply(res, {
        id: `msg_${index + 1}`,
        model,
        reply,
        calls,
        usage,
        stream: body.stream === true,
      });
      return;
    }
    if (gemini) {
      geminiReply(res, { reply, calls, usage, stream: gemini[1] === 'streamGenerateContent', model });
      return;
    }
    if (responses) {
      responsesReply(res, {
        id: `resp_${index + 1}`,
        model,
        reply,
        calls,
        usage,
        stream: body.stream === true,
      });
      return;
    }
    if (body.stream === true) {
      stream(res, { id, model, reply, calls, finish, usage, chunkSize });
      return;
    }
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text ?? null,
            ...(reply.reasoning !== undefined ? { reasoning_content: reply.reasoning } : {}),
            ...(calls.length > 0
              ? {
                  tool_calls: calls.map((call) => ({
                    id: call.id,
                    type: 'function',
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
          },
          finish_reason: finish,
        },
      ],
      usage,
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: 'server_error' } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((request) => request.reply !== undefined),
    remaining: () => queue.length,
    push: (...turns) => {
      queue.push(...turns);
    },
    respondWith: (...more) => {
      responders.push(...more);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

function usageOf(reply: ScriptedReply, request: ChatRequest): Usage {
  const given = reply.usage;
  const prompt = given?.promptTokens ?? Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
  const completion =
    given?.completionTokens ??
    Math.ceil(
      ((reply.text ?? '').length +
        (reply.reasoning ?? '').length +
        JSON.stringify(reply.toolCalls ?? []).length) /
        4,
    );
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (given?.cachedTokens !== undefined) usage.prompt_tokens_details = { cached_tokens: given.cachedTokens };
  if (given?.reasoningTokens !== undefined)
    usage.completion_tokens_details = { reasoning_tokens: given.reasoningTokens };
  return usage;
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

/** Server-sent events as OpenAI streams them: role, deltas, finish_reason, a usage chunk, then [DONE]. */
function stream(
  res: ServerResponse,
  args: {
    id: string;
    model: string;
    reply: ScriptedReply;
    calls: { id: string; name: string; arguments: string }[];
    finish: string;
    usage: Usage;
    chunkSize: number;
  },
): void {
  const { id, model, reply, calls, finish, usage, chunkSize } = args;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const created = Math.floor(Date.now() / 1000);
  const send = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
    );
  };
  const delta = (value: Record<string, unknown>): void =>
    send([{ index: 0, delta: value, finish_reason: null }]);

  delta({ role: 'assistant', content: '' });
  for (const piece of pieces(reply.reasoning ?? '', chunkSize)) delta({ reasoning_content: piece });
  for (const piece of pieces(reply.text ?? '', chunkSize)) delta({ content: piece });
  calls.forEach((call, index) => {
    delta({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const piece of pieces(call.arguments, chunkSize))
      delta({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  send([{ index: 0, delta: {}, finish_reason: finish }]);
  send([], { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

/** The Anthropic Messages API answer, whole or as its event stream. */
function messagesReply(
  res: ServerResponse,
  args: {
    id: string;
    model: string;
    reply: ScriptedReply;
    calls: { id: string; name: string; arguments: string }[];
    usage: Usage;
    stream: boolean;
  },
): void {
  const { id, model, reply, calls, usage } = args;
  const content: Record<string, unknown>[] = [];
  if (reply.reasoning) content.push({ type: 'thinking', thinking: reply.reasoning, signature: 'scripted' });
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const call of calls)
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.arguments) });
  const stopReason = reply.finishReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
  const tokens = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
  if (!args.stream) {
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: tokens,
    });
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const send = (event: string, data: Record<string, unknown>): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  };
  send('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: tokens.input_tokens, output_tokens: 0 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces(String(block.text), 16))
        send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    } else if (block.type === 'thinking') {
      send('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'thinking_delta', thinking: String(block.thinking) },
      });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'scripted' } });
    } else {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      for (const piece of pieces(JSON.stringify(block.input), 16)) {
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: tokens.output_tokens },
  });
  send('message_stop', {});
  res.end();
}

/**
 * A Responses API answer: output items (reasoning with its summary, the message, each function call), whole
 * or as the events the API streams (created, each item added and done with its text deltas, completed).
 */
function responsesReply(
  res: ServerResponse,
  args: {
    id: string;
    model: string;
    reply: ScriptedReply;
    calls: { id: string; name: string; arguments: string; custom?: boolean }[];
    usage: Usage;
    stream: boolean;
  },
): void {
  const { id, model, reply, calls, usage } = args;
  const output: Record<string, unknown>[] = [];
  if (reply.reasoning !== undefined)
    output.push({
      type: 'reasoning',
      id: `rs_${id}`,
      summary: [{ type: 'summary_text', text: reply.reasoning }],
    });
  if (reply.text !== undefined)
    output.push({
      type: 'message',
      id: `msg_${id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    });
  for (const call of calls)
    output.push(
      call.custom
        ? {
            type: 'custom_tool_call',
            id: `ctc_${call.id}`,
            call_id: call.id,
            name: call.name,
            input: call.arguments,
            status: 'completed',
          }
        : {
            type: 'function_call',
            id: `fc_${call.id}`,
            call_id: call.id,
            name: call.name,
            arguments: call.arguments,
            status: 'completed',
          },
    );
  const response = (status: string, items: Record<string, unknown>[]) => ({
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output: items,
    usage: {
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens,
    },
  });
  if (!args.stream) {
    sendJson(res, 200, response('completed', output));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  event('response.created', { response: response('in_progress', []) });
  output.forEach((item, index) => {
    event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } });
    if (item.type === 'message')
      event('response.output_text.delta', {
        output_index: index,
        item_id: item.id,
        content_index: 0,
        delta: reply.text,
      });
    if (item.type === 'custom_tool_call')
      event('response.custom_tool_call_input.delta', {
        output_index: index,
        item_id: item.id,
        delta: item.input,
      });
    if (item.type === 'function_call')
      event('response.function_call_arguments.delta', {
        output_index: index,
        item_id: item.id,
        delta: item.arguments,
      });
    event('response.output_item.done', { output_index: index, item });
  });
  event('response.completed', { response: response('completed', output) });
  res.end();
}

/**
 * A Gemini API answer: the candidate's parts (thought text, text, each function call with its args), whole or as
 * the server-sent chunks `:streamGenerateContent?alt=sse` sends (text in pieces, calls whole, usage last).
 */
function geminiReply(
  res: ServerResponse,
  args: {
    reply: ScriptedReply;
    calls: { id: string; name: string; arguments: string }[];
    usage: Usage;
    stream: boolean;
    model: string;
  },
): void {
  const { reply, calls, usage } = args;
  const parts: Record<string, unknown>[] = [];
  if (reply.reasoning !== undefined) parts.push({ text: reply.reasoning, thought: true });
  if (reply.text !== undefined) parts.push({ text: reply.text });
  for (const call of calls)
    parts.push({ functionCall: { name: call.name, args: JSON.parse(call.arguments) } });
  const usageMetadata = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: usage.completion_tokens,
    totalTokenCount: usage.total_tokens,
  };
  const chunk = (content: Record<string, unknown>[], last: boolean) => ({
    candidates: [
      { content: { parts: content, role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) },
    ],
    ...(last ? { usageMetadata } : {}),
    modelVersion: args.model,
  });
  if (!args.stream) {
    sendJson(res, 200, chunk(parts, true));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [index, part] of parts.entries())
    res.write(`data: ${JSON.stringify(chunk([part], index === parts.length - 1))}\r\n\r\n`);
  if (parts.length === 0) res.write(`data: ${JSON.stringify(chunk([], true))}\r\n\r\n`);
  res.end();
}
