// A Codex turn's request on the OpenAI Responses wire, rebuilt from the stored context: the `input` items Codex
// sends — developer and user messages with their parts, reasoning with its summary, raw content and encrypted
// content, assistant messages with their `phase`, function calls with their `namespace`, free-form (custom)
// tool calls with their raw input, tool_search calls and the tools they found, outputs by kind — so that a pair
// holds what the model received in the form it received it, item for item in content. The item ids and
// statuses Codex also sends are not stored, so not rebuilt. Pure: no I/O.

import type { Message, Part, ToolCall, ToolResult } from '../model/session.js';
import type { ToolSpec } from './catalogue/types.js';

export interface ResponsesWire {
  api: 'openai-responses';
  /** `conversation`: rebuilt from the stored messages. */
  source: 'conversation';
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
  const output =
    typeof result.output === 'string'
      ? result.output
      : result.output.map((block) =>
          block.type === 'text'
            ? { type: 'input_text', text: block.text }
            : { type: 'input_image', image_url: `data:${block.mediaType};base64,${block.data}` },
        );
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

/**
 * Our tool specs as Responses function tools. A list taken from the agent's requests keeps their text; the two
 * tools Codex offers in other forms (free-form apply_patch, hosted web_search) are functions here too.
 */
export function responsesTools(tools: readonly ToolSpec[]): unknown[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
  }));
}
