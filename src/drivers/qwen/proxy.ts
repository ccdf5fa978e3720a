// The proxy between a replayed Qwen Code and its model, on the OpenAI chat-completions wire. Every tool call was
// denied by the hook (environment.ts), so Qwen's next request carries a `tool` message whose text is the deny
// reason, under the call's `tool_call_id`; the proxy puts the recorded result in its place — found by
// `tool_call_id`, never by its text, on every request (Qwen sends the whole history each time, and a resumed
// session's history holds the deny texts of the runs before) — then sends the request on: to the recorded turns
// (`recorded`, answered here) or to an OpenAI-compatible endpoint. Its answer goes back to Qwen as it streams
// (with backpressure) and is assembled on the way; before the stream ends, each call in it gets its answer
// (`answer`), so the next request finds it. Each exchange is reported (`onExchange`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  Assistant,
  ExchangeKind,
  HeadlessCall,
  HeadlessExchange,
  HeadlessUpstream,
} from '../common/headless.js';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { forward, relay } from '../common/upstream.js';
import { ChatAssembler, type ChatUsage, writeChatCompletion, writeChatStream } from '../wire/openai-chat.js';

/** What a request is: an agent step, Qwen's compression summarizer, or a side call (the memory extractor). */
export type { ExchangeKind };

export type WireMessage = Record<string, unknown> & { role?: unknown; content?: unknown };

export interface QwenRequest {
  messages: WireMessage[];
  tools?: unknown[];
  model?: string;
  stream?: boolean;
  [key: string]: unknown;
}

export interface QwenExchange extends HeadlessExchange {
  /** The request as it went upstream (results substituted). */
  request: QwenRequest;
  usage?: ChatUsage | null;
}

/** A call the model made, as Qwen will schedule (and the hook deny) it. */
export type QwenCall = HeadlessCall;

export type QwenUpstream = HeadlessUpstream<QwenRequest>;

export interface QwenProxyOptions {
  secret: string;
  upstream: QwenUpstream;
  /** The recorded result for a call the model made: the text its `tool` message gets. */
  answer: (call: QwenCall) => string;
  /** A step not to send (budget, --on-miss stop): the reason, given to Qwen as an error. */
  refuse?: (kind: ExchangeKind) => string | undefined;
  onExchange?: (exchange: QwenExchange) => void;
  timeoutMs?: number;
}

export interface QwenProxy {
  /** The origin Qwen is given (`OPENAI_BASE_URL` is this plus `/v1`). */
  url: string;
  /** Results put in place so far (each counted once per call). */
  substituted(): number;
  close(): Promise<void>;
}

/** The openings of Qwen 0.24.4's side calls (seen in its requests: test/fixtures/real/qwen-code-0.24.4). */
export const sideCallMarkers = {
  /** The system prompt of the managed memory extractor (a sub-agent run after a turn). */
  memory: 'You are now acting as the managed memory extraction subagent',
  /** The last user message of the compression summarizer (the main system prompt and tools otherwise). */
  summarizer: 'You are the component that summarizes a conversation',
} as const;

/** A message's text: a string, or its text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
        ? (part as { text: string }).text
        : '',
    )
    .join('');
}

/** A summarizer by its last user message, the memory extractor by its system prompt, a step by its tools. */
export function kindOf(body: QwenRequest): ExchangeKind {
  const system = body.messages.find((message) => message.role === 'system');
  if (contentText(system?.content).startsWith(sideCallMarkers.memory)) return 'side';
  const lastUser = body.messages.findLast((message) => message.role === 'user');
  if (lastUser && contentText(lastUser.content).trimStart().startsWith(sideCallMarkers.summarizer))
    return 'compaction';
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'step' : 'side';
}

/** The messages with every answered call's `tool` message holding the recorded text, in the shape Qwen sent. */
export function substitute(messages: WireMessage[], answers: ReadonlyMap<string, string>): WireMessage[] {
  return messages.map((message) => {
    if (message.role !== 'tool') return message;
    const answered = answers.get(String(message.tool_call_id));
    if (answered === undefined) return message;
    return {
      ...message,
      content: Array.isArray(message.content) ? [{ type: 'text', text: answered }] : answered,
    };
  });
}

/** The calls of an answer, as the hook will see them. */
export function callsOf(message: Assistant): QwenCall[] {
  return (message.tool_calls ?? []).map((call) => {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      input = { raw: call.function.arguments };
    }
    return { id: call.id, name: call.function.name, input };
  });
}

function chatError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: 'invalid_request_error', code: null, param: null } });
}

export async function startQwenProxy(options: QwenProxyOptions): Promise<QwenProxy> {
  const answers = new Map<string, string>();
  const upstream = options.upstream;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    let body: QwenRequest;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8')) as QwenRequest;
      if (!Array.isArray(body.messages)) throw new Error('no messages');
    } catch (error) {
      chatError(res, 400, `replay-history: not a chat-completions request (${(error as Error).message})`);
      return;
    }
    const kind = kindOf(body);
    const request: QwenRequest = { ...body, messages: substitute(body.messages, answers) };
    const report = (fields: Partial<QwenExchange>): void =>
      options.onExchange?.({ kind, request, latencyMs: Math.round(performance.now() - started), ...fields });

    const refusal = options.refuse?.(kind);
    if (refusal) {
      report({ error: refusal, refused: true });
      chatError(res, 400, refusal);
      return;
    }
    /** Decides each call's answer before the stream ends: the next request may come at once. */
    const settle = (message: Assistant): void => {
      for (const call of callsOf(message))
        if (!answers.has(call.id)) answers.set(call.id, options.answer(call));
    };

    if (upstream.kind === 'recorded') {
      const answered = upstream.next(kind, request);
      if (!answered) {
        report({ error: 'the recording has no turn to answer with here', exhausted: true });
        chatError(res, 400, 'replay-history: the recording has no turn to answer with here');
        return;
      }
      if (kind === 'step') settle(answered.message);
      const finishReason = answered.message.tool_calls?.length ? 'tool_calls' : 'stop';
      report({ message: answered.message, usage: answered.usage ?? null, finishReason });
      const model = typeof body.model === 'string' ? body.model : 'recorded';
      if (body.stream === false) writeChatCompletion(res, answered.message, model, answered.usage);
      else writeChatStream(res, answered.message, model, answered.usage);
      return;
    }

    const forwarded = await forward(res, {
      url: `${upstream.baseURL.replace(/\/$/, '')}/chat/completions`,
      headers: {
        'content-type': 'application/json',
        accept: body.stream === false ? 'application/json' : 'text/event-stream',
        ...(upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
      },
      body: { ...request, model: upstream.model },
      timeoutMs: options.timeoutMs ?? 600_000,
      baseURL: upstream.baseURL,
      apiKey: upstream.apiKey,
      fail: (status, message) => chatError(res, status, message),
      report: (error) => report({ error }),
    });
    if (!forwarded) return;
    const assembler = new ChatAssembler();
    assembler.begin(200, forwarded.type.includes('text/event-stream'));
    // The last piece is held until every call in the answer has its recorded result.
    const held = await relay(res, forwarded.body, (chunk) => {
      assembler.push(chunk);
      return chunk;
    });
    const assembled = assembler.result();
    if (assembled.message && assembled.error === undefined) {
      if (kind === 'step') settle(assembled.message);
      report({ message: assembled.message, usage: assembled.usage, finishReason: assembled.finish_reason });
    } else report({ error: assembled.error ?? 'no answer' });
    res.end(held);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) chatError(res, 500, `replay-history: ${(error as Error).message}`);
        else res.destroy();
      });
    },
    { secret: options.secret, routes: [{ method: 'POST', path: '/v1/chat/completions' }] },
  );
  return { url: served.origin, substituted: () => answers.size, close: () => served.close() };
}
