// The Anthropic Messages wire as a driver's proxy sees it: a streamed answer (server-sent events) assembled
// into the message it carries — text, thinking with its signature, tool_use with its input sent in pieces
// (`input_json_delta`), usage, stop reason — and a message written back as such a stream, for a recorded
// model. Pure apart from writing to the stream it is given.

import type { ServerResponse } from 'node:http';
import type { WireBlock } from '../../model/request.js';
import type { ChatMessage } from '../../replay/chat.js';

export interface AnthropicMessage {
  id: string;
  model: string;
  content: WireBlock[];
  stop_reason: string | null;
  usage: { input_tokens?: number; output_tokens?: number; [key: string]: unknown };
}

/**
 * Reads an event stream as it arrives (`push` each chunk, `end` once) and builds the message. Tolerates
 * chunks split anywhere, CRLF line ends and comment lines; an `error` event is kept as `error`.
 */
export class StreamAssembler {
  private buffer = '';
  private readonly inputs = new Map<number, string>();
  message: AnthropicMessage = { id: '', model: '', content: [], stop_reason: null, usage: {} };
  error?: string;

  push(chunk: string): void {
    this.buffer += chunk.replace(/\r\n/g, '\n');
    for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) this.take(data);
    }
  }

  end(): AnthropicMessage {
    if (this.buffer.trim()) this.push('\n\n');
    for (const [index, json] of this.inputs) {
      const block = this.message.content[index];
      if (!block) continue;
      try {
        block.input = json === '' ? {} : JSON.parse(json);
      } catch {
        // A torn input is kept as the text that came: the call is then a miss, never run.
        block.input = { raw: json };
      }
    }
    this.inputs.clear();
    return this.message;
  }

  private take(data: string): void {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'message_start': {
        const start = (event.message ?? {}) as Partial<AnthropicMessage>;
        this.message = {
          id: String(start.id ?? ''),
          model: String(start.model ?? ''),
          content: [],
          stop_reason: null,
          usage: { ...(start.usage ?? {}) },
        };
        break;
      }
      case 'content_block_start': {
        const block = { ...((event.content_block ?? {}) as WireBlock) };
        if (block.type === 'tool_use' || block.type === 'server_tool_use') this.inputs.set(index, '');
        this.message.content[index] = block;
        break;
      }
      case 'content_block_delta': {
        const block = this.message.content[index];
        const delta = (event.delta ?? {}) as Record<string, unknown>;
        if (!block) break;
        if (delta.type === 'text_delta') block.text = `${block.text ?? ''}${delta.text ?? ''}`;
        else if (delta.type === 'thinking_delta')
          block.thinking = `${block.thinking ?? ''}${delta.thinking ?? ''}`;
        else if (delta.type === 'signature_delta')
          block.signature = `${block.signature ?? ''}${delta.signature ?? ''}`;
        else if (delta.type === 'input_json_delta')
          this.inputs.set(index, `${this.inputs.get(index) ?? ''}${delta.partial_json ?? ''}`);
        break;
      }
      case 'message_delta': {
        const delta = (event.delta ?? {}) as Record<string, unknown>;
        if (typeof delta.stop_reason === 'string') this.message.stop_reason = delta.stop_reason;
        Object.assign(this.message.usage, (event.usage ?? {}) as object);
        break;
      }
      case 'error': {
        const error = (event.error ?? {}) as { message?: unknown };
        this.error = String(error.message ?? 'error event');
        break;
      }
    }
  }
}

/** A message as the event stream a server sends for it (what a recorded model answers with). */
export function writeMessageStream(res: ServerResponse, message: AnthropicMessage): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>): void => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  send('message_start', {
    message: {
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: message.usage.input_tokens ?? 0, output_tokens: 0 },
    },
  });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: String(block.text ?? '') } });
    } else if (block.type === 'thinking') {
      send('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'thinking_delta', thinking: String(block.thinking ?? '') },
      });
      if (typeof block.signature === 'string')
        send('content_block_delta', {
          index,
          delta: { type: 'signature_delta', signature: block.signature },
        });
    } else if (block.type === 'tool_use') {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) },
      });
    } else {
      // redacted_thinking and anything else: sent whole, as the API sends a block without deltas.
      send('content_block_start', { index, content_block: block });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: message.stop_reason ?? 'end_turn', stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens ?? 0 },
  });
  send('message_stop', {});
  res.end();
}

/** An Anthropic answer in the chat form pairs hold. */
export function chatCompletion(message: AnthropicMessage): Extract<ChatMessage, { role: 'assistant' }> {
  const text = message.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text ?? ''));
  const reasoning = message.content
    .filter((block) => block.type === 'thinking')
    .map((block) => String(block.thinking ?? ''))
    .join('\n');
  const calls = message.content
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({
      id: String(block.id),
      type: 'function' as const,
      function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
    }));
  return {
    role: 'assistant',
    content: text.length > 0 ? text.join('') : null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(reasoning ? { reasoning_content: reasoning } : {}),
  };
}

/** The chat-style finish reason of an Anthropic stop reason. */
export function finishReason(stop: string | null): string | null {
  const map: Record<string, string> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length' };
  return stop === null ? null : (map[stop] ?? stop);
}
