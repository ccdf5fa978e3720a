// The recording proxy of an opencode replay: opencode's provider `baseURL` points here, every request is
// forwarded to the real model, and the answer goes back to opencode unchanged (status, headers, and the SSE
// bytes as they arrive). Each chat completion is also put back together and handed over as one exchange —
// request (messages, tools), assembled assistant message, usage, latency — tagged as an agent step or a side
// call (title generation, compaction summary). Recording here, not from opencode's events, because
// `opencode run` exits about 175 ms after `session.idle`. Only opencode may use it: every request must carry the
// run's secret as its API key (opencode's provider key in its private config), which is then replaced by the
// real key, or dropped, so it never goes upstream (see loopback.ts).
import {
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ChatMessage, ChatTool } from '../../replay/chat.js';
import { type Pair, pairSchema } from '../../replay/pairs.js';
import { readBody, redact, sendJson, serveLoopback } from '../common/loopback.js';
import { ChatAssembler, type ChatUsage } from '../wire/openai-chat.js';

export type ExchangeUsage = ChatUsage;

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * `step`: the request offers tools (an agent step). `title`: opencode's title generation (first system message
 * "You are a title generator. You output ONLY a thread title. …", then the user messages "Generate a title for
 * this conversation:\n" and the user's prompt; no tools, streamed). `summary`: compaction (first system message
 * "You are a context summarization agent. …"; recognised by that marker whether or not tools are sent).
 * `other`: any other chat request without tools. The markers are checked before the tools.
 */
export type ExchangeKind = 'step' | 'title' | 'summary' | 'other';

/** The system-prompt openings of opencode 1.18.33's side calls (strings found in its binary). */
export const sideCallMarkers = {
  title: 'You are a title generator',
  summary: 'You are a context summarization agent',
} as const;

/** One chat completion as it passed through the proxy. */
export interface Exchange {
  kind: ExchangeKind;
  /** The path under the proxy, e.g. `/v1/chat/completions`. */
  path: string;
  /** What the request asked for; `messages`/`tools` are empty when the body was not JSON. */
  request: { model: string | null; stream: boolean; messages: ChatMessage[]; tools: ChatTool[] };
  /** The HTTP status opencode got (502 when upstream could not be reached, 504 when it timed out). */
  status: number;
  /** The assistant message put back together; null when there was no (complete) answer. */
  message: Assistant | null;
  finish_reason: string | null;
  /** The `usage` object the model sent, if any. */
  usage: ExchangeUsage | null;
  /** From the request's arrival to the end of the answer. */
  latency_ms: number;
  startedAt: string;
  /** Set when the call failed: an HTTP error status, a connection failure, a timeout, a cut stream. */
  error?: string;
  /** Set when the proxy refused to forward it (see `refuse`). */
  refused?: boolean;
}

export interface RecordingProxyOptions {
  /** The run's secret: opencode's API key for the proxy. A request without it is refused (401), never forwarded. */
  secret: string;
  /** Listen on this Unix socket (opencode reaches it through the plugin's fetch) instead of a TCP port. */
  socket?: string;
  /** The real model's base URL, including `/v1` (e.g. `https://api.openai.com/v1`). */
  upstream: string;
  /** Reach `upstream` over this Unix socket (the recorded model in the private tree) rather than its host. */
  upstreamSocket?: string;
  /** The Authorization upstream gets instead of opencode's (the secret); without one, none is sent. */
  apiKey?: string;
  /** Called for every chat completion when its answer has been read, before its end reaches opencode. */
  onExchange: (exchange: Exchange) => void;
  /**
   * Asked before a chat completion is forwarded: a reason refuses it (HTTP 400 with that message, never sent
   * upstream, reported with `refused`). The driver ends a session this way: a step budget, --on-miss stop.
   */
  refuse?: (kind: ExchangeKind) => string | undefined;
  /** Upstream inactivity limit in ms (no response headers, or no bytes of a stream, for this long); default 10 min. */
  timeoutMs?: number;
}

export interface RecordingProxy {
  /** e.g. http://127.0.0.1:41234/v1 — opencode's provider `baseURL` (http://localhost:0/v1 over the socket). */
  url: string;
  /** The TCP port, when not on a socket. */
  port?: number;
  /** The Unix socket, when on one. */
  socket?: string;
  /** Requests the gate refused (wrong host, no secret, another route): none was forwarded or reported. */
  refused: { host: number; secret: number; route: number };
  /** How many chat completions were reported, by kind (only counts are kept, never the exchanges). */
  exchanges: Record<ExchangeKind, number> & { total: number; errors: number };
  /** Errors thrown by `onExchange` (the proxy keeps serving; the driver should fail the run on these). */
  handlerErrors: unknown[];
  /** Requests forwarded and not yet finished. */
  inFlight(): number;
  /** Resolves once no request is in flight (the last answer was delivered). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), plus those we set ourselves. */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const upstream = new URL(options.upstream);
  const basePath = upstream.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 600_000;
  const exchanges: RecordingProxy['exchanges'] = {
    step: 0,
    title: 0,
    summary: 0,
    other: 0,
    total: 0,
    errors: 0,
  };
  const handlerErrors: unknown[] = [];
  let inFlight = 0;
  let waiters: (() => void)[] = [];

  const settle = (): void => {
    inFlight--;
    if (inFlight === 0) {
      const ready = waiters;
      waiters = [];
      for (const resolve of ready) resolve();
    }
  };

  const report = (exchange: Exchange): void => {
    exchanges[exchange.kind]++;
    exchanges.total++;
    if (exchange.error !== undefined) exchanges.errors++;
    try {
      options.onExchange(exchange);
    } catch (error) {
      handlerErrors.push(error);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const body = await readBody(req);
    // Only POST /v1/chat/completions reaches this (the gate answers anything else).
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const query = url.slice(path.length);
    const parsed = parseRequest(body);
    // The assembler for this one answer: the only state kept per request.
    const assembler = new ChatAssembler();
    let done = false;
    const finish = (status: number, error?: string): void => {
      if (done) return;
      done = true;
      const outcome = assembler.result();
      const raw = error ?? outcome.error;
      // An upstream error may echo the headers it got: neither key is kept or printed.
      const failure = raw === undefined ? undefined : hide(raw);
      report({
        kind: parsed.kind,
        path,
        request: parsed.request,
        status,
        message: failure === undefined ? outcome.message : null,
        finish_reason: outcome.finish_reason,
        usage: outcome.usage,
        latency_ms: Math.round(performance.now() - started),
        startedAt,
        ...(failure !== undefined ? { error: failure } : {}),
      });
    };

    const refusal = options.refuse?.(parsed.kind);
    if (refusal !== undefined) {
      report({
        kind: parsed.kind,
        path,
        request: parsed.request,
        status: 400,
        message: null,
        finish_reason: null,
        usage: null,
        latency_ms: Math.round(performance.now() - started),
        startedAt,
        error: refusal,
        refused: true,
      });
      sendJson(res, 400, { error: { message: refusal, type: 'replay_stopped' } });
      return;
    }

    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || hopByHop.has(name) || name === 'content-length') continue;
      headers[name] = value;
    }
    // Plain bytes, so the proxy can read what it passes on (and opencode gets them the same).
    headers['accept-encoding'] = 'identity';
    // The gate took opencode's Authorization (the secret) off the request: only the real key goes on.
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (body.length > 0) headers['content-length'] = body.length;
    const rest = path.startsWith('/v1/') || path === '/v1' ? path.slice(3) : path;
    const target = `${upstream.origin}${basePath}${rest}${query}`;

    const send = upstream.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(target, {
      method: req.method ?? 'POST',
      headers,
      ...(options.upstreamSocket ? { socketPath: options.upstreamSocket } : {}),
    });
    outgoing.setTimeout(timeoutMs);

    const failBeforeReply = (status: number, message: string): void => {
      finish(status, message);
      if (res.destroyed) return;
      if (!res.headersSent) sendJson(res, status, { error: { message, type: 'replay_proxy_error' } });
      else res.destroy();
    };

    outgoing.on('timeout', () => {
      outgoing.destroy(new Error(`upstream timed out after ${timeoutMs} ms`));
    });
    outgoing.on('error', (error) => {
      const timedOut = /timed out/.test(error.message);
      failBeforeReply(timedOut ? 504 : 502, `replay-history proxy: upstream ${target}: ${error.message}`);
    });
    // opencode gave up (aborted the request): stop the upstream call too.
    res.on('close', () => {
      if (!res.writableFinished) {
        finish(res.statusCode || 499, 'the client closed the connection before the answer ended');
        outgoing.destroy();
      }
    });

    outgoing.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      const out: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !hopByHop.has(name)) out[name] = value;
      }
      res.writeHead(status, answer.statusMessage ?? '', out);
      const contentType = String(answer.headers['content-type'] ?? '');
      assembler.begin(status, contentType.includes('text/event-stream'));
      answer.on('data', (chunk: Buffer) => {
        assembler.push(chunk);
        // Backpressure: a slow reader holds the upstream stream back rather than filling memory.
        if (!res.write(chunk)) {
          answer.pause();
          res.once('drain', () => answer.resume());
        }
      });
      answer.on('end', () => {
        // Reported before opencode sees the end, so "opencode exited" implies "every answer recorded".
        finish(status);
        res.end();
      });
      answer.on('error', (error) => failBeforeReply(502, `upstream stream failed: ${error.message}`));
      answer.on('aborted', () => failBeforeReply(502, 'upstream closed the stream before it ended'));
    });
    outgoing.end(body);
  };

  const hide = (text: string): string => redact(text, options.secret, options.apiKey);
  const served = await serveLoopback(
    (req, res) => {
      inFlight++;
      res.on('close', settle);
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, { error: { message: hide(String(error)), type: 'replay_proxy_error' } });
        else res.destroy();
      });
    },
    {
      secret: options.secret,
      routes: [{ method: 'POST', path: '/v1/chat/completions' }],
      ...(options.socket ? { socket: options.socket } : {}),
    },
  );
  return {
    url: `${served.origin}/v1`,
    ...(served.port !== undefined ? { port: served.port } : {}),
    ...(served.socket !== undefined ? { socket: served.socket } : {}),
    refused: served.refused,
    exchanges,
    handlerErrors,
    inFlight: () => inFlight,
    idle: () =>
      inFlight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiters.push(resolve);
          }),
    close: () => served.close(),
  };
}

/** The first system message's text (string or parts). */
function systemText(messages: ChatMessage[]): string {
  const first = messages.find((message) => message.role === 'system');
  if (!first) return '';
  const content = first.content as unknown;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
  return '';
}

/** Tags a chat request: agent step (tools offered), title generation, compaction summary, or other. */
export function classifyRequest(request: { messages: ChatMessage[]; tools: ChatTool[] }): ExchangeKind {
  const system = systemText(request.messages);
  if (system.includes(sideCallMarkers.title)) return 'title';
  if (system.includes(sideCallMarkers.summary)) return 'summary';
  return request.tools.length > 0 ? 'step' : 'other';
}

function parseRequest(body: Buffer): { kind: ExchangeKind; request: Exchange['request'] } {
  let value: Record<string, unknown> = {};
  try {
    const json = JSON.parse(body.toString('utf8')) as unknown;
    if (json && typeof json === 'object' && !Array.isArray(json)) value = json as Record<string, unknown>;
  } catch {
    // Not JSON: forwarded as it is, recorded with an empty request.
  }
  const request: Exchange['request'] = {
    model: typeof value.model === 'string' ? value.model : null,
    stream: value.stream === true,
    messages: Array.isArray(value.messages) ? (value.messages as ChatMessage[]) : [],
    tools: Array.isArray(value.tools) ? (value.tools as ChatTool[]) : [],
  };
  return { kind: classifyRequest(request), request };
}

export interface PairContext {
  run: string;
  session: string;
  agent: string;
  turn: number;
  /** The model as the run names it; default the request's `model`. */
  model?: string;
  /** Default `free`: opencode drives from the user's messages, tool results come from the recording. */
  mode?: Pair['mode'];
}

export class ExchangeError extends Error {}

/**
 * An exchange as a pairs.jsonl line. `original` is null and `match` is `none`: the driver knows the recorded
 * step this one answers and fills both. Throws for an exchange without an answer (an error).
 */
export function pairFromExchange(exchange: Exchange, context: PairContext): Pair {
  if (!exchange.message || exchange.error !== undefined) {
    throw new ExchangeError(`no answer to make a pair from: ${exchange.error ?? 'empty'}`);
  }
  return {
    schema: pairSchema,
    run: context.run,
    session: context.session,
    agent: context.agent,
    turn: context.turn,
    mode: context.mode ?? 'free',
    model: context.model ?? exchange.request.model ?? '',
    messages: exchange.request.messages,
    tools: exchange.request.tools,
    completion: exchange.message,
    original: null,
    match: { tool_calls: 'none' },
    usage: {
      prompt_tokens: Number(exchange.usage?.prompt_tokens ?? 0),
      completion_tokens: Number(exchange.usage?.completion_tokens ?? 0),
    },
    latency_ms: exchange.latency_ms,
    finish_reason: exchange.finish_reason,
    // The real agent built this request: its own system prompt and tools, as it sent them.
    sources: { system: 'agent', tools: 'agent' },
  };
}
