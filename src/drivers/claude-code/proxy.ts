// The proxy between a replayed Claude Code and its model, on the Anthropic Messages wire. Every tool call was
// denied by the hook (environment.ts), so Claude Code's next request carries an error `tool_result` for it;
// the proxy puts the recorded result in its place — found by `tool_use_id`, never by the deny text, on every
// request (Claude Code sends the whole history each time) — in the order the calls were made, then sends the
// request on: to the recorded turns (`recorded`, answered here) or to an Anthropic-wire endpoint. Its answer
// goes back to Claude Code as it streams and is assembled on the way; before the stream ends, each tool call in
// it gets its answer (`answer`), so the next request finds it. Each exchange is reported (`onExchange`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireBlock, WireMessage } from '../../model/request.js';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { forward, relay } from '../common/upstream.js';
import { type AnthropicMessage, StreamAssembler, writeMessageStream } from '../wire/anthropic-messages.js';

/** What a request is: an agent step, Claude Code's compaction call, or a call without tools (a side call). */
export type ExchangeKind = 'step' | 'compaction' | 'side';

export interface ClaudeExchange {
  kind: ExchangeKind;
  /** Whose request it is: `main`, or a sub-agent running in place (see `classify`). */
  conversation: string;
  /** The request as it went upstream (results substituted). */
  request: Record<string, unknown> & { messages: WireMessage[] };
  message?: AnthropicMessage;
  error?: string;
  /** Refused here (budget spent, --on-miss stop), never sent upstream. */
  refused?: boolean;
  /** The recorded turns had nothing left to answer with. */
  exhausted?: boolean;
  latencyMs: number;
  /** The `anthropic-beta` header's values, as Claude Code sent them. */
  betas: string[];
  /** What still differs from the turn's recorded request: `system`, `tools`, `messages[i]` (harness.ts). */
  differs?: string[];
}

export type ClaudeUpstream =
  /** Answers from the recording: `next` gives the message for this exchange, or undefined when none is left. */
  | { kind: 'recorded'; next: (kind: ExchangeKind, conversation: string) => AnthropicMessage | undefined }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface ClaudeProxyOptions {
  secret: string;
  upstream: ClaudeUpstream;
  /** The recorded result for a tool call the model made (a `tool_result` block with that id). */
  answer: (call: { id: string; name: string; input: unknown }, conversation: string) => Answered;
  /** Whose request this is (`main` unless a sub-agent's); default: always `main`. */
  classify?: (request: { messages: WireMessage[] }) => string;
  /** A step not to send (budget, --on-miss stop): the reason, given to Claude Code as an error. */
  refuse?: (kind: ExchangeKind, conversation: string) => string | undefined;
  onExchange?: (exchange: ClaudeExchange) => void;
  /** Harness text taken from the turn's recorded request, for a step (harness.ts); undefined: none recorded. */
  rewrite?: (
    request: ClaudeExchange['request'],
    conversation: string,
  ) => { request: ClaudeExchange['request']; differs: string[] } | undefined;
  timeoutMs?: number;
}

export interface ClaudeProxy {
  /** ANTHROPIC_BASE_URL for Claude Code. */
  url: string;
  /** Results put in place so far (each counted once per call). */
  substituted(): number;
  close(): Promise<void>;
}

/** How Claude Code asks for a compaction (2.1.328): its last user text starts so. */
const compactionPrompt = /^CRITICAL: Respond with TEXT ONLY\. Do NOT call any tools\./;

export function kindOf(body: { tools?: unknown; messages?: WireMessage[] }): ExchangeKind {
  const last = body.messages?.at(-1);
  const blocks =
    typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
  if (blocks.some((block) => block.type === 'text' && compactionPrompt.test(String(block.text ?? ''))))
    return 'compaction';
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'step' : 'side';
}

/** A call's answer: the recorded `tool_result` block, and where the recording had it among all its results. */
export interface Answered {
  block: WireBlock;
  /** Results of one turn are put in this order: Claude Code's own completion order when it was recorded. */
  order: number;
}

/**
 * The messages with every answered call's result put in place, and the results of one turn in the order the
 * recording had them (Claude Code lists them as they complete, which the denied calls do in another order).
 * Blocks that are not results stay where they were; a result keeps Claude Code's cache breakpoint.
 */
export function substitute(messages: WireMessage[], answers: ReadonlyMap<string, Answered>): WireMessage[] {
  return messages.map((message) => {
    if (message.role !== 'user' || !Array.isArray(message.content)) return message;
    const content = message.content;
    const slots = content.flatMap((block, index) => (block.type === 'tool_result' ? [index] : []));
    if (!slots.some((index) => answers.has(String((content[index] as WireBlock).tool_use_id))))
      return message;
    const results = slots.map((index, at) => {
      const live = content[index] as WireBlock;
      const answered = answers.get(String(live.tool_use_id));
      if (!answered) return { block: live, order: Number.MAX_SAFE_INTEGER, at };
      const block =
        live.cache_control !== undefined
          ? { ...answered.block, cache_control: live.cache_control }
          : answered.block;
      return { block, order: answered.order, at };
    });
    results.sort((a, b) => a.order - b.order || a.at - b.at);
    // A breakpoint marks a position (the end of the message), not a result: it stays where Claude Code put it.
    const marks = slots.map((index) => (content[index] as WireBlock).cache_control);
    const out = content.slice();
    slots.forEach((index, i) => {
      const { cache_control: _mark, ...block } = (results[i] as { block: WireBlock }).block;
      out[index] = marks[i] !== undefined ? { ...block, cache_control: marks[i] } : (block as WireBlock);
    });
    return { ...message, content: out };
  });
}

function anthropicError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { type: 'error', error: { type: 'invalid_request_error', message } });
}

export async function startClaudeProxy(options: ClaudeProxyOptions): Promise<ClaudeProxy> {
  const answers = new Map<string, Answered>();
  const upstream = options.upstream;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    let body: ClaudeExchange['request'];
    try {
      body = JSON.parse((await readBody(req)).toString('utf8')) as ClaudeExchange['request'];
      if (!Array.isArray(body.messages)) throw new Error('no messages');
    } catch (error) {
      anthropicError(res, 400, `replay-history: not a Messages request (${(error as Error).message})`);
      return;
    }
    const kind = kindOf(body);
    const conversation = options.classify?.(body) ?? 'main';
    let request: ClaudeExchange['request'] = { ...body, messages: substitute(body.messages, answers) };
    let differs: string[] | undefined;
    if (kind === 'step') {
      const rewritten = options.rewrite?.(request, conversation);
      if (rewritten) ({ request, differs } = rewritten);
    }
    const beta = req.headers['anthropic-beta'];
    const betas = typeof beta === 'string' ? beta.split(',').filter(Boolean) : [];
    const report = (fields: Partial<ClaudeExchange>): void =>
      options.onExchange?.({
        kind,
        conversation,
        request,
        betas,
        latencyMs: Math.round(performance.now() - started),
        ...(differs ? { differs } : {}),
        ...fields,
      });

    const refusal = options.refuse?.(kind, conversation);
    if (refusal) {
      report({ error: refusal, refused: true });
      anthropicError(res, 400, refusal);
      return;
    }
    /** Decides each call's answer before the stream ends: the next request may come at once. */
    const settle = (message: AnthropicMessage): void => {
      for (const block of message.content) {
        if (block.type !== 'tool_use') continue;
        const id = String(block.id);
        if (!answers.has(id))
          answers.set(id, options.answer({ id, name: String(block.name), input: block.input }, conversation));
      }
    };

    if (upstream.kind === 'recorded') {
      const message = upstream.next(kind, conversation);
      if (!message) {
        report({ error: 'the recording has no turn to answer with here', exhausted: true });
        anthropicError(res, 400, 'replay-history: the recording has no turn to answer with here');
        return;
      }
      settle(message);
      report({ message });
      writeMessageStream(res, message);
      return;
    }

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'anthropic-version': String(req.headers['anthropic-version'] ?? '2023-06-01'),
      ...(typeof req.headers['anthropic-beta'] === 'string'
        ? { 'anthropic-beta': req.headers['anthropic-beta'] }
        : {}),
      ...(upstream.apiKey ? { 'x-api-key': upstream.apiKey } : {}),
    };
    const forwarded = await forward(res, {
      url: `${upstream.baseURL.replace(/\/$/, '')}/v1/messages`,
      headers,
      body: { ...request, model: upstream.model },
      timeoutMs: options.timeoutMs ?? 600_000,
      baseURL: upstream.baseURL,
      apiKey: upstream.apiKey,
      fail: (status, message) => anthropicError(res, status, message),
      report: (error) => report({ error }),
    });
    if (!forwarded) return;
    const streamed = forwarded.type.includes('text/event-stream');
    const assembler = new StreamAssembler();
    const decoder = new TextDecoder();
    let whole = '';
    // The last piece is held until every call in the answer has its recorded result.
    const held = await relay(res, forwarded.body, (chunk) => {
      const text = decoder.decode(chunk, { stream: true });
      if (streamed) assembler.push(text);
      else whole += text;
      return chunk;
    });
    let message: AnthropicMessage | undefined;
    if (streamed) message = assembler.end();
    else {
      try {
        message = JSON.parse(whole) as AnthropicMessage;
      } catch {
        message = undefined;
      }
    }
    if (message) settle(message);
    report(
      message && !assembler.error
        ? { message }
        : { error: assembler.error ?? 'an answer that is not a message' },
    );
    res.end(held);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) anthropicError(res, 500, `replay-history: ${(error as Error).message}`);
        else res.destroy();
      });
    },
    {
      secret: options.secret,
      credential: { header: 'x-api-key' },
      routes: [{ method: 'POST', path: '/v1/messages' }],
    },
  );
  return { url: served.origin, substituted: () => answers.size, close: () => served.close() };
}
