// The OpenAI chat-completions wire as a driver's proxy sees it: an answer (server-sent `chat.completion.chunk`
// events, or one JSON body) assembled into the assistant message it carries — text, reasoning, tool calls
// sent in pieces, finish reason, usage — and a message written back in either form, for a recorded model.
// Pure apart from writing to the stream it is given. The Anthropic Messages counterpart is
// anthropic-messages.ts.
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { ChatMessage, ChatToolCall } from '../../replay/chat.js';
import { sendJson } from '../common/loopback.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  [key: string]: unknown;
}

export interface Assembled {
  message: Assistant | null;
  finish_reason: string | null;
  usage: ChatUsage | null;
  error?: string;
}

/**
 * Puts one answer back together as its bytes pass: SSE `data:` events are folded in as they complete (the
 * stream itself is not kept); a JSON answer is kept until it ends, then read.
 */
export class ChatAssembler {
  private status = 0;
  private sse = false;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private json: Buffer[] = [];
  private content = '';
  private reasoning = '';
  private readonly calls: ChatToolCall[] = [];
  private finishReason: string | null = null;
  private usage: ChatUsage | null = null;
  private sawDone = false;
  private sawChunk = false;
  private streamError: string | undefined;

  begin(status: number, sse: boolean): void {
    this.status = status;
    this.sse = sse && status < 400;
  }

  push(chunk: Buffer): void {
    if (!this.sse) {
      this.json.push(chunk);
      return;
    }
    this.pending += this.decoder.write(chunk);
    let newline = this.pending.indexOf('\n');
    while (newline !== -1) {
      this.line(this.pending.slice(0, newline).replace(/\r$/, ''));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
  }

  private line(line: string): void {
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      this.sawDone = true;
      return;
    }
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    if (event.error !== undefined) {
      this.streamError = `error in stream: ${JSON.stringify(event.error)}`;
      return;
    }
    this.sawChunk = true;
    if (event.usage && typeof event.usage === 'object') this.usage = event.usage as ChatUsage;
    const choice = (event.choices as Record<string, unknown>[] | undefined)?.find(
      (c) => (c.index ?? 0) === 0,
    );
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    if (typeof delta.content === 'string') this.content += delta.content;
    if (typeof delta.reasoning_content === 'string') this.reasoning += delta.reasoning_content;
    else if (typeof delta.reasoning === 'string') this.reasoning += delta.reasoning;
    for (const piece of (delta.tool_calls ?? []) as Record<string, unknown>[]) {
      const index = typeof piece.index === 'number' ? piece.index : this.calls.length;
      let call = this.calls[index];
      if (!call) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } };
        this.calls[index] = call;
      }
      const fn = (piece.function ?? {}) as { name?: unknown; arguments?: unknown };
      if (typeof piece.id === 'string' && piece.id) call.id = piece.id;
      if (typeof fn.name === 'string') call.function.name += fn.name;
      if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
    }
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
  }

  result(): Assembled {
    if (this.status === 0) return { message: null, finish_reason: null, usage: null };
    if (this.status >= 400) {
      const text = Buffer.concat(this.json).toString('utf8');
      return {
        message: null,
        finish_reason: null,
        usage: null,
        error: `HTTP ${this.status}: ${text.slice(0, 2000)}`,
      };
    }
    if (this.sse) {
      this.push(Buffer.from('\n'));
      const message: Assistant = { role: 'assistant', content: this.content === '' ? null : this.content };
      const calls = this.calls.filter(Boolean);
      if (calls.length > 0) message.tool_calls = calls;
      if (this.reasoning) message.reasoning_content = this.reasoning;
      const error =
        this.streamError ??
        (!this.sawChunk ? 'the stream held no chunks' : undefined) ??
        (this.finishReason === null && !this.sawDone
          ? 'the stream ended without a finish_reason'
          : undefined);
      return {
        message,
        finish_reason: this.finishReason,
        usage: this.usage,
        ...(error !== undefined ? { error } : {}),
      };
    }
    const text = Buffer.concat(this.json).toString('utf8');
    try {
      const value = JSON.parse(text) as {
        choices?: { index?: number; message?: Record<string, unknown>; finish_reason?: string | null }[];
        usage?: ChatUsage;
      };
      const choice = value.choices?.find((c) => (c.index ?? 0) === 0);
      if (!choice?.message)
        return { message: null, finish_reason: null, usage: null, error: 'no choices in the answer' };
      const reply = choice.message;
      const content = typeof reply.content === 'string' ? reply.content : null;
      const message: Assistant = { role: 'assistant', content };
      const calls = Array.isArray(reply.tool_calls) ? (reply.tool_calls as ChatToolCall[]) : [];
      if (calls.length > 0) {
        message.tool_calls = calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        }));
      }
      const reasoning =
        typeof reply.reasoning_content === 'string'
          ? reply.reasoning_content
          : typeof reply.reasoning === 'string'
            ? reply.reasoning
            : '';
      if (reasoning) message.reasoning_content = reasoning;
      return { message, finish_reason: choice.finish_reason ?? null, usage: value.usage ?? null };
    } catch {
      return { message: null, finish_reason: null, usage: null, error: 'the answer is not JSON' };
    }
  }
}

function finishReason(message: Assistant): string {
  return message.tool_calls?.length ? 'tool_calls' : 'stop';
}

/** The message as one `chat.completion` JSON answer. */
export function writeChatCompletion(
  res: ServerResponse,
  message: Assistant,
  model: string,
  usage?: { prompt_tokens: number; completion_tokens: number },
): void {
  sendJson(res, 200, {
    id: 'chatcmpl-recorded',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(message) }],
    usage: usageOf(usage),
  });
}

/** The answer as OpenAI streams one: role, reasoning, text, each tool call, the finish, the usage, [DONE]. */
export function writeChatStream(
  res: ServerResponse,
  message: Assistant,
  model: string,
  usage?: { prompt_tokens: number; completion_tokens: number },
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-recorded',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    })}\n\n`;
  let out = chunk({ role: 'assistant', content: '' });
  if (message.reasoning_content) out += chunk({ reasoning_content: message.reasoning_content });
  if (message.content) out += chunk({ content: message.content });
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    out += chunk({
      tool_calls: [
        {
          index,
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        },
      ],
    });
  }
  out += chunk({}, finishReason(message));
  out += `data: ${JSON.stringify({ id: 'chatcmpl-recorded', object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(usage) })}\n\n`;
  out += 'data: [DONE]\n\n';
  res.end(out);
}

function usageOf(usage?: { prompt_tokens: number; completion_tokens: number }) {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
