// The proxy between a replayed Codex and its model, on the OpenAI Responses wire. Every tool call was denied by
// the hook (environment.ts), so Codex's next request carries Codex's own "blocked by PreToolUse hook" output
// for it; the proxy puts the recorded output in its place — found by `call_id`, never by the deny text, on
// every request (Codex sends the whole input each time, `store: false`) — then sends the request on: to the
// recorded turns (`recorded`, answered here) or to a Responses endpoint. Its answer goes back to Codex as it
// streams (with backpressure) and is assembled on the way; before the stream ends, each call in it gets its
// answer (`answer`), so the next request finds it. Each exchange is reported (`onExchange`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { forward, relay } from '../common/upstream.js';
import {
  type ResponseBody,
  ResponsesAssembler,
  writeResponse,
  writeResponseStream,
} from '../wire/openai-responses.js';

/** What a request is: an agent step, Codex's compaction call, or a call without tools (a side call). */
export type ExchangeKind = 'step' | 'compaction' | 'side';

export type Item = Record<string, unknown>;

export interface CodexRequest {
  input: Item[];
  tools?: unknown[];
  model?: string;
  stream?: boolean;
  [key: string]: unknown;
}

export interface CodexExchange {
  kind: ExchangeKind;
  /** The request as it went upstream (outputs substituted). */
  request: CodexRequest;
  response?: ResponseBody;
  error?: string;
  /** Refused here (budget spent, --on-miss stop), never sent upstream. */
  refused?: boolean;
  /** The recorded turns had nothing left to answer with. */
  exhausted?: boolean;
  latencyMs: number;
}

/** A call the model made, as Codex will run (and the hook deny) it. */
export interface CodexCall {
  id: string;
  name: string;
  namespace?: string;
  /** A function call's arguments parsed; a free-form call's raw text as `{input}` (the form pairs use). */
  input: unknown;
  freeform: boolean;
}

export type CodexUpstream =
  /** Answers from the recording: `next` gives the response for this exchange, or undefined when none is left. */
  | { kind: 'recorded'; next: (kind: ExchangeKind) => ResponseBody | undefined }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface CodexProxyOptions {
  secret: string;
  upstream: CodexUpstream;
  /** The recorded output for a call the model made (what its output item's `output` becomes). */
  answer: (call: CodexCall) => string | Item[];
  /** A step not to send (budget, --on-miss stop): the reason, given to Codex as an error. */
  refuse?: (kind: ExchangeKind) => string | undefined;
  onExchange?: (exchange: CodexExchange) => void;
  timeoutMs?: number;
}

export interface CodexProxy {
  /** The provider's base URL for Codex, without `/v1`. */
  url: string;
  /** Outputs put in place so far (each counted once per call). */
  substituted(): number;
  close(): Promise<void>;
}

/** How Codex asks for a compaction (0.169): its prompt's opening, the last user item of the request. */
const compactionOpening = 'You are performing a CONTEXT CHECKPOINT COMPACTION.';

const outputTypes = new Set(['function_call_output', 'custom_tool_call_output']);

/** A step offers tools; a compaction says so in its turn metadata (or its prompt); anything else is a side call. */
export function kindOf(body: CodexRequest, metadata: string | undefined): ExchangeKind {
  try {
    if ((JSON.parse(metadata ?? '{}') as { request_kind?: unknown }).request_kind === 'compaction')
      return 'compaction';
  } catch {
    // Not JSON: the prompt decides.
  }
  const last = body.input.at(-1);
  const content = Array.isArray(last?.content) ? (last.content as Item[]) : [];
  if (
    last?.type === 'message' &&
    last.role === 'user' &&
    content.some((part) => typeof part.text === 'string' && part.text.startsWith(compactionOpening))
  )
    return 'compaction';
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'step' : 'side';
}

/** The input with every answered call's output put in place; every other item as Codex sent it. */
export function substitute(input: Item[], answers: ReadonlyMap<string, string | Item[]>): Item[] {
  return input.map((item) => {
    if (!outputTypes.has(String(item.type))) return item;
    const answered = answers.get(String(item.call_id));
    return answered === undefined ? item : { ...item, output: answered };
  });
}

/** The calls of a response's output, as the hook will see them. */
export function callsOf(response: ResponseBody): CodexCall[] {
  const calls: CodexCall[] = [];
  for (const item of response.output) {
    if (item.type === 'function_call') {
      let input: unknown;
      try {
        input = JSON.parse(String(item.arguments ?? '{}'));
      } catch {
        input = { raw: String(item.arguments ?? '') };
      }
      calls.push({
        id: String(item.call_id),
        name: String(item.name),
        ...(typeof item.namespace === 'string' ? { namespace: item.namespace } : {}),
        input,
        freeform: false,
      });
    } else if (item.type === 'custom_tool_call')
      calls.push({
        id: String(item.call_id),
        name: String(item.name),
        input: { input: String(item.input ?? '') },
        freeform: true,
      });
  }
  return calls;
}

function responsesError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: 'invalid_request_error', code: null, param: null } });
}

export async function startCodexProxy(options: CodexProxyOptions): Promise<CodexProxy> {
  const answers = new Map<string, string | Item[]>();
  const upstream = options.upstream;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    let body: CodexRequest;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8')) as CodexRequest;
      if (!Array.isArray(body.input)) throw new Error('no input');
    } catch (error) {
      responsesError(res, 400, `replay-history: not a Responses request (${(error as Error).message})`);
      return;
    }
    const metadata = req.headers['x-codex-turn-metadata'];
    const kind = kindOf(body, typeof metadata === 'string' ? metadata : undefined);
    const request: CodexRequest = { ...body, input: substitute(body.input, answers) };
    const report = (fields: Partial<CodexExchange>): void =>
      options.onExchange?.({ kind, request, latencyMs: Math.round(performance.now() - started), ...fields });

    const refusal = options.refuse?.(kind);
    if (refusal) {
      report({ error: refusal, refused: true });
      responsesError(res, 400, refusal);
      return;
    }
    /** Decides each call's answer before the stream ends: the next request may come at once. */
    const settle = (response: ResponseBody): void => {
      for (const call of callsOf(response))
        if (!answers.has(call.id)) answers.set(call.id, options.answer(call));
    };

    if (upstream.kind === 'recorded') {
      const response = upstream.next(kind);
      if (!response) {
        report({ error: 'the recording has no turn to answer with here', exhausted: true });
        responsesError(res, 400, 'replay-history: the recording has no turn to answer with here');
        return;
      }
      settle(response);
      report({ response });
      if (body.stream === false) writeResponse(res, response);
      else writeResponseStream(res, response);
      return;
    }

    const forwarded = await forward(res, {
      url: `${upstream.baseURL.replace(/\/$/, '')}/responses`,
      headers: {
        'content-type': 'application/json',
        accept: body.stream === false ? 'application/json' : 'text/event-stream',
        ...(upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
      },
      body: { ...request, model: upstream.model },
      timeoutMs: options.timeoutMs ?? 600_000,
      baseURL: upstream.baseURL,
      apiKey: upstream.apiKey,
      fail: (status, message) => responsesError(res, status, message),
      report: (error) => report({ error }),
    });
    if (!forwarded) return;
    const assembler = new ResponsesAssembler();
    assembler.begin(forwarded.type.includes('text/event-stream'));
    // The last piece is held until every call in the answer has its recorded output.
    const held = await relay(res, forwarded.body, (chunk) => {
      assembler.push(chunk);
      return chunk;
    });
    const assembled = assembler.end();
    if ('response' in assembled) {
      settle(assembled.response);
      report({ response: assembled.response });
    } else report({ error: assembled.error });
    res.end(held);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) responsesError(res, 500, `replay-history: ${(error as Error).message}`);
        else res.destroy();
      });
    },
    { secret: options.secret, routes: [{ method: 'POST', path: '/v1/responses' }] },
  );
  return { url: served.origin, substituted: () => answers.size, close: () => served.close() };
}
