// The OpenAI Responses wire as a driver's proxy sees it (Codex's only model wire since 0.1xx): an answer — the
// server-sent events `response.created`, `response.output_item.added`/`.done`, text, argument and reasoning
// deltas, `response.completed` with usage, or one JSON body — assembled into the response it carries, and a
// response written back in either form, for a recorded model. Pure apart from writing to the stream it is
// given. The chat-completions and Messages counterparts are openai-chat.ts and anthropic-messages.ts.
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { sendJson } from '../common/loopback.js';

export type ResponseItem = Record<string, unknown> & { type: string };

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
  total_tokens?: number;
}

/** A response as `response.completed` carries it (the parts a driver reads). */
export interface ResponseBody {
  id: string;
  model: string;
  status: string;
  output: ResponseItem[];
  usage?: ResponsesUsage | null;
  [key: string]: unknown;
}

/**
 * Puts one answer back together as its bytes pass: SSE events are folded in as they complete (the stream
 * itself is not kept); a JSON answer is kept until it ends, then read. The output is what the items' `.done`
 * events said, in output order — what Codex keeps of a response — with `response.completed`'s own list used
 * where no item event came.
 */
export class ResponsesAssembler {
  private sse = false;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private readonly json: Buffer[] = [];
  private readonly items = new Map<number, ResponseItem>();
  private completed: ResponseBody | undefined;
  private failure: string | undefined;

  begin(sse: boolean): void {
    this.sse = sse;
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
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line.slice(5).trim()) as Record<string, unknown>;
    } catch {
      return;
    }
    switch (event.type) {
      case 'response.output_item.done': {
        const item = event.item as ResponseItem | undefined;
        if (item && typeof item.type === 'string')
          this.items.set(Number(event.output_index ?? this.items.size), item);
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
        this.completed = event.response as ResponseBody;
        return;
      case 'response.failed': {
        const response = event.response as { error?: unknown } | undefined;
        this.failure = `the response failed: ${JSON.stringify(response?.error ?? event).slice(0, 1000)}`;
        return;
      }
      case 'error':
        this.failure = `error in stream: ${JSON.stringify(event).slice(0, 1000)}`;
        return;
      default:
        return;
    }
  }

  /** The response, or why there is none (a failed or cut-off stream, a body that is not a response). */
  end(): { response: ResponseBody } | { error: string } {
    if (!this.sse) {
      try {
        const body = JSON.parse(Buffer.concat(this.json).toString('utf8')) as ResponseBody;
        if (!Array.isArray(body.output)) return { error: 'an answer that is not a response' };
        return { response: body };
      } catch {
        return { error: 'an answer that is not JSON' };
      }
    }
    if (this.failure) return { error: this.failure };
    if (!this.completed) return { error: 'the stream ended without response.completed' };
    const output =
      this.items.size > 0
        ? [...this.items.entries()].sort((a, b) => a[0] - b[0]).map(([, item]) => item)
        : (this.completed.output ?? []);
    return { response: { ...this.completed, output } };
  }
}

/** The response as one JSON body. */
export function writeResponse(res: ServerResponse, response: ResponseBody): void {
  sendJson(res, 200, { object: 'response', ...response });
}

/**
 * The response as the API streams it: created, each item added (empty) then its text, arguments or reasoning
 * as one delta, then done, and completed with the whole output and usage.
 */
export function writeResponseStream(res: ServerResponse, response: ResponseBody): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>): void => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  };
  const base = { object: 'response', ...response };
  event('response.created', { response: { ...base, status: 'in_progress', output: [], usage: null } });
  response.output.forEach((item, index) => {
    const id = String(item.id ?? `item_${index}`);
    event('response.output_item.added', { output_index: index, item: emptied(item) });
    for (const [type, field, delta] of deltas(item))
      event(type, { output_index: index, item_id: id, ...field, delta });
    event('response.output_item.done', { output_index: index, item });
  });
  event('response.completed', { response: { ...base, status: 'completed' } });
  res.end();
}

/** An item as `output_item.added` announces it: its text still to come. */
function emptied(item: ResponseItem): ResponseItem {
  switch (item.type) {
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
    case 'custom_tool_call':
      return { ...item, status: 'in_progress', input: '' };
    case 'reasoning':
      return { ...item, summary: [] };
    default:
      return { ...item, status: 'in_progress' };
  }
}

/** The delta events that carry an item's text: [event type, where in the item, the text]. */
function deltas(item: ResponseItem): [string, Record<string, unknown>, string][] {
  const out: [string, Record<string, unknown>, string][] = [];
  if (item.type === 'message')
    for (const [index, part] of ((item.content as Record<string, unknown>[] | undefined) ?? []).entries())
      if (typeof part.text === 'string')
        out.push(['response.output_text.delta', { content_index: index }, part.text]);
  if (item.type === 'function_call' && typeof item.arguments === 'string')
    out.push(['response.function_call_arguments.delta', {}, item.arguments]);
  if (item.type === 'custom_tool_call' && typeof item.input === 'string')
    out.push(['response.custom_tool_call_input.delta', {}, item.input]);
  if (item.type === 'reasoning')
    for (const [index, part] of ((item.summary as Record<string, unknown>[] | undefined) ?? []).entries())
      if (typeof part.text === 'string')
        out.push(['response.reasoning_summary_text.delta', { summary_index: index }, part.text]);
  return out;
}
