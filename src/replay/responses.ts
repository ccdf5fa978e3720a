// A Codex turn's request on the OpenAI Responses wire, rebuilt from the stored context: the `input` items Codex
// sends — developer and user messages with their parts, reasoning with its summary, raw content and encrypted
// content, assistant messages with their `phase`, function calls with their `namespace`, free-form (custom)
// tool calls with their raw input, tool_search calls and the tools they found, outputs by kind — so that a pair
// holds what the model received in the form it received it, item for item in content. The item ids and
// statuses Codex also sends are not stored, so not rebuilt. Pure: no I/O.

import type { Message, Part, ToolCall, ToolResult } from '../model/session.js';
import { messagesOfItems } from '../sources/codex/parse.js';
import type { ToolSpec } from './catalogue/types.js';
import { type ChatMessage, type ChatTool, chatMessages } from './chat.js';

export interface ResponsesWire {
  api: 'openai-responses';
  /** `conversation`: rebuilt from the stored messages; `agent`: what a real Codex sent (the driver's proxy). */
  source: 'conversation' | 'agent';
  body: { input: Record<string, unknown>[]; tools: unknown[] };
}

/** What the model received, as Responses input items, and the tools it was offered. */
export function responsesWire(context: readonly Message[], tools: unknown[]): ResponsesWire {
  const calls = new Map<string, ToolCall>();
  const input: Record<string, unknown>[] = [];
  for (const message of context) {
    if (message.role === 'assistant') {
      for (const part of message.parts) {
        if (part.type === 'tool_call') calls.set(part.id, part);
        const item = modelItem(part);
        if (item) input.push(item);
      }
    } else if (message.role === 'tool') {
      for (const part of message.parts)
        if (part.type === 'tool_result') input.push(outputItem(part, calls.get(part.callId)));
    } else input.push(...inputItems(message));
  }
  return { api: 'openai-responses', source: 'conversation', body: { input, tools } };
}

/** A developer/system or user message; a compaction kept as Codex's opaque item is that item again. */
function inputItems(message: Message): Record<string, unknown>[] {
  const opaque = message.parts.find(
    (part) => part.type === 'reasoning' && part.redacted === true && part.signature !== undefined,
  );
  if (message.compaction && opaque?.type === 'reasoning')
    return [{ type: 'compaction', encrypted_content: opaque.signature }];
  const content = message.parts.flatMap((part): Record<string, unknown>[] => {
    if (part.type === 'text') return [{ type: 'input_text', text: part.text }];
    if (part.type === 'image')
      return [{ type: 'input_image', image_url: `data:${part.mediaType};base64,${part.data}` }];
    return [];
  });
  return [{ type: 'message', role: message.role === 'system' ? 'developer' : 'user', content }];
}

/** One part of a model turn as the item it was: reasoning, an assistant message, a call. */
function modelItem(part: Part): Record<string, unknown> | undefined {
  switch (part.type) {
    case 'reasoning': {
      const summary = (part.summary ?? (part.text !== '' && !part.redacted ? [part.text] : [])).map(
        (text) => ({
          type: 'summary_text',
          text,
        }),
      );
      const content = part.summary ? [{ type: 'reasoning_text', text: part.text }] : null;
      return {
        type: 'reasoning',
        summary,
        content,
        ...(part.signature !== undefined ? { encrypted_content: part.signature } : {}),
      };
    }
    case 'text':
      return {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: part.text, annotations: [], logprobs: [] }],
        ...(part.phase !== undefined ? { phase: part.phase } : {}),
      };
    case 'tool_call':
      return callItem(part);
    default:
      return undefined;
  }
}

function callItem(call: ToolCall): Record<string, unknown> | undefined {
  if (call.freeform)
    return { type: 'custom_tool_call', name: call.name, input: call.input, call_id: call.id };
  switch (call.name) {
    case 'tool_search':
      return { type: 'tool_search_call', call_id: call.id, execution: 'client', arguments: call.input };
    case 'web_search':
      // Run by the provider; its result is not an item of the input.
      return { type: 'web_search_call', action: call.input };
    case 'local_shell':
      return { type: 'local_shell_call', call_id: call.id, action: call.input };
    default:
      return {
        type: 'function_call',
        name: call.name,
        ...(call.namespace !== undefined ? { namespace: call.namespace } : {}),
        arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}),
        call_id: call.id,
      };
  }
}

/** A result as the output item of its call's kind. */
function outputItem(result: ToolResult, call: ToolCall | undefined): Record<string, unknown> {
  const output = outputValue(result.output);
  if (call?.freeform) return { type: 'custom_tool_call_output', call_id: result.callId, output };
  if (call?.name === 'tool_search') {
    let found: unknown = output;
    try {
      if (typeof output === 'string') found = JSON.parse(output);
    } catch {
      // Not the JSON the reader wrote: kept as it is.
    }
    return { type: 'tool_search_output', call_id: result.callId, execution: 'client', tools: found };
  }
  return { type: 'function_call_output', call_id: result.callId, output };
}

/** A result's output as an output item carries it: its text, or its blocks as input parts. */
export function outputValue(output: ToolResult['output']): string | Record<string, unknown>[] {
  return typeof output === 'string'
    ? output
    : output.map((block) =>
        block.type === 'text'
          ? { type: 'input_text', text: block.text }
          : { type: 'input_image', image_url: `data:${block.mediaType};base64,${block.data}` },
      );
}

/** A recorded model turn as the output items of a response (for a recorded model): ids numbered by `prefix`. */
export function outputItems(message: Message, prefix: string): Record<string, unknown>[] {
  return message.parts.flatMap((part, index) => {
    const item = modelItem(part);
    if (!item) return [];
    const id = `${({ reasoning: 'rs', message: 'msg', custom_tool_call: 'ctc' } as Record<string, string>)[String(item.type)] ?? 'fc'}_${prefix}_${index}`;
    return [{ id, ...item, ...(item.type === 'message' ? { status: 'completed' } : {}) }];
  });
}

/**
 * A request on the Responses wire in the chat form pairs take: its input items as messages (read as the Codex
 * reader reads a rollout's items), its tools as functions — a free-form tool as the function `{input}` it is
 * offered as in pairs, a hosted or client-run one by its name with the parameters it declares —, and the calls
 * whose result was an error.
 */
export function chatFromResponses(body: {
  input: readonly Record<string, unknown>[];
  tools: readonly unknown[];
}): {
  messages: ChatMessage[];
  tools: ChatTool[];
  errors: string[];
} {
  const { messages } = messagesOfItems(body.input, 'request');
  const errors = messages.flatMap((message) =>
    message.parts.flatMap((part) => (part.type === 'tool_result' && part.isError ? [part.callId] : [])),
  );
  return { messages: chatMessages(messages), tools: body.tools.map(chatTool), errors };
}

function chatTool(raw: unknown): ChatTool {
  const tool = (raw ?? {}) as Record<string, unknown>;
  const name = String(tool.name ?? tool.type ?? 'tool');
  const description = typeof tool.description === 'string' ? tool.description : '';
  if (tool.type === 'custom')
    return {
      type: 'function',
      function: {
        name,
        description,
        parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
      },
    };
  const parameters =
    tool.parameters && typeof tool.parameters === 'object'
      ? (tool.parameters as Record<string, unknown>)
      : { type: 'object', properties: {} };
  return { type: 'function', function: { name, description, parameters } };
}

/**
 * Our tool specs as Responses tools: each in its own wire form where the list keeps one (Codex 0.169's
 * free-form apply_patch, hosted web_search and tool_search, as its requests carried them), else a function.
 */
export function responsesTools(tools: readonly ToolSpec[]): unknown[] {
  return tools.map(
    (tool) =>
      tool.wire ?? {
        type: 'function',
        name: tool.name,
        description: tool.description,
        strict: false,
        parameters: tool.parameters,
      },
  );
}
