// A turn's request on its agent's own wire, beside the chat form every pair has: for a Claude Code session the
// Anthropic Messages body — system blocks, tool definitions, messages with `is_error`, thinking signatures and
// block-list results, the request params — so that the `anthropic:` provider can send the request the model
// received again, identical in content. Either taken from the request records the agent wrote (`recorded`) or
// rebuilt from the stored conversation (`conversation`, for transcripts without them). Pure: no I/O.

import type { TurnRequest, WireBlock, WireMessage } from '../model/request.js';
import { toolResultOutput, wireBody } from '../model/request.js';
import type { Message, OutputBlock, ToolResult } from '../model/session.js';
import { outputText } from '../model/session.js';
import type { ToolSpec } from './catalogue/types.js';
import { type ChatContent, type ChatMessage, type ChatTool, chatTools } from './chat.js';
import { type ElideOptions, Elider, type ResultFate } from './elide.js';
import type { ResponsesWire } from './responses.js';

/** The Anthropic Messages request of one turn, less what a sender sets itself (model, stream, metadata). */
export interface AnthropicWire {
  api: 'anthropic-messages';
  /**
   * `recorded`: the agent's request record of this turn; `conversation`: rebuilt from the stored messages;
   * `agent`: sent by the real agent during the replay (a driver's proxy saw it).
   */
  source: 'recorded' | 'conversation' | 'agent';
  body: {
    system: string | WireBlock[];
    tools: unknown[];
    messages: WireMessage[];
    /** max_tokens, thinking, context_management, output_config, … as recorded. */
    [param: string]: unknown;
  };
  /** The `anthropic-beta` header's values, as recorded. */
  betas: string[];
}

/** A turn's request on its agent's own wire: Claude Code's Anthropic Messages, Codex's OpenAI Responses. */
export type Wire = AnthropicWire | ResponsesWire;

/** The request the agent recorded for this turn, as it sent it (see `wireBody` for what it does not record). */
export function recordedWire(request: TurnRequest): AnthropicWire {
  const { body, betas } = wireBody(request);
  const { system, tools, messages, ...params } = body as AnthropicWire['body'];
  return {
    api: 'anthropic-messages',
    source: 'recorded',
    body: { ...params, system, tools, messages },
    betas,
  };
}

/** Our tool specs as Anthropic tool definitions. */
export function anthropicTools(tools: readonly ToolSpec[]): unknown[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters,
  }));
}

/** A tool output as a `tool_result`'s content: the string, or text and image blocks. */
export function outputBlocks(output: ToolResult['output']): string | WireBlock[] {
  if (typeof output === 'string') return output;
  return output.map((block: OutputBlock) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } },
  );
}

/** A stored message's parts as Anthropic content blocks. */
export function messageBlocks(message: Message): WireBlock[] {
  const blocks: WireBlock[] = [];
  for (const part of message.parts) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') blocks.push({ type: 'text', text: part.text });
        break;
      case 'image':
        blocks.push({
          type: 'image',
          source: { type: 'base64', media_type: part.mediaType, data: part.data },
        });
        break;
      case 'reasoning':
        // A redacted block's opaque data is kept in `signature` by the reader.
        if (part.redacted) blocks.push({ type: 'redacted_thinking', data: part.signature ?? '' });
        else
          blocks.push({
            type: 'thinking',
            thinking: part.text,
            ...(part.signature !== undefined ? { signature: part.signature } : {}),
          });
        break;
      case 'tool_call':
        blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: part.input ?? {} });
        break;
      case 'tool_result':
        blocks.push({
          type: 'tool_result',
          tool_use_id: part.callId,
          content: outputBlocks(part.output),
          ...(part.isError ? { is_error: true } : {}),
        });
        break;
    }
  }
  return blocks;
}

const blocksOf = new WeakMap<Message, WireBlock[]>();

/**
 * `messageBlocks(message)`, made once per stored message: consecutive turns of a session share their context's
 * messages, so a turn converts only what is new to it, and the blocks' JSON is made once too (the pair line's
 * `itemsJson`). The blocks are shared between turns and never changed; the message lists holding them are new.
 */
function sharedBlocks(message: Message): WireBlock[] {
  let blocks = blocksOf.get(message);
  if (blocks === undefined) {
    blocks = messageBlocks(message);
    blocksOf.set(message, blocks);
  }
  return blocks;
}

/**
 * The request rebuilt from a stored context: `system` first, then the messages with user and assistant turns
 * alternating (tool results in the user turn after their calls, consecutive turns of one role merged). A
 * mid-conversation system message (Claude Code's rendered attachments) stays where it was, as Claude Code
 * sends it.
 */
export function conversationWire(
  context: readonly Message[],
  system: string | WireBlock[],
  tools: unknown[],
  params: Record<string, unknown> = {},
): AnthropicWire {
  const messages: WireMessage[] = [];
  for (const message of context) {
    const blocks = sharedBlocks(message);
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : message.role === 'system' ? 'system' : 'user';
    const last = messages.at(-1);
    if (role !== 'system' && last?.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  }
  return {
    api: 'anthropic-messages',
    source: 'conversation',
    body: { ...params, system, tools, messages },
    betas: [],
  };
}

/** The system prompt replaced (`--system-prompt`): one text block, where the recorded blocks were. */
export function withSystem(wire: AnthropicWire, text: string): AnthropicWire {
  return { ...wire, body: { ...wire.body, system: [{ type: 'text', text }] } };
}

/** The text of the system blocks, as one string: the blocks are adjacent in the prompt, so joined with nothing. */
export function systemText(system: string | WireBlock[]): string {
  if (typeof system === 'string') return system;
  return system.map((block) => (typeof block.text === 'string' ? block.text : '')).join('');
}

/**
 * `--elide-repeats` / `--max-result-bytes` over the wire's tool results, with the same elider as the chat form:
 * a result is replaced by the marker (or cut) exactly where the chat form's is. Unchanged blocks are kept as
 * they are; a changed result's content becomes the text shown.
 */
export function elideWire(
  wire: AnthropicWire,
  options: ElideOptions,
): { wire: AnthropicWire; fates: ResultFate[] } {
  const elider = new Elider(options);
  const fates: ResultFate[] = [];
  const messages = wire.body.messages.map((message): WireMessage => {
    if (!Array.isArray(message.content)) return message;
    let changed = false;
    const content = message.content.map((block): WireBlock => {
      if (block.type === 'tool_use') elider.call(String(block.id), String(block.name), block.input);
      if (block.type !== 'tool_result') return block;
      const result: ToolResult = {
        type: 'tool_result',
        callId: String(block.tool_use_id),
        output: toolResultOutput(block.content),
        isError: block.is_error === true,
      };
      const { shown, fate } = elider.result(result);
      fates.push(fate);
      if (shown === result) return block;
      changed = true;
      return { ...block, content: outputBlocks(shown.output) };
    });
    return changed ? { ...message, content } : message;
  });
  return { wire: { ...wire, body: { ...wire.body, messages } }, fates };
}

function chatContent(blocks: WireBlock[]): ChatContent {
  const images = blocks.some((block) => block.type === 'image');
  if (!images)
    return blocks
      .filter((block) => block.type === 'text')
      .map((block) => String(block.text ?? ''))
      .join('');
  return blocks.flatMap((block): Exclude<ChatContent, string> => {
    if (block.type === 'text') return [{ type: 'text', text: String(block.text ?? '') }];
    if (block.type !== 'image') return [];
    const source = block.source as { media_type?: string; data?: string; url?: string } | undefined;
    const url = source?.url ?? `data:${source?.media_type ?? 'image/png'};base64,${source?.data ?? ''}`;
    return [{ type: 'image_url', image_url: { url } }];
  });
}

/**
 * The wire request in OpenAI chat form, for the pair's `messages`/`tools` and for OpenAI-compatible servers:
 * the system text first, a mid-conversation system message in place, each `tool_result` a `tool` message
 * (text; images named) followed by the rest of its user turn, thinking as `reasoning_content`. `errors` lists
 * the call ids whose result was an error, which chat form cannot say.
 */
export function chatFromWire(wire: AnthropicWire): {
  messages: ChatMessage[];
  tools: ChatTool[];
  errors: string[];
} {
  const messages: ChatMessage[] = [];
  const errors: string[] = [];
  const system = systemText(wire.body.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const message of wire.body.messages) {
    const blocks: WireBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'system') {
      messages.push({ role: 'system', content: systemText(blocks) });
      continue;
    }
    if (message.role === 'assistant') {
      const text = blocks.filter((block) => block.type === 'text').map((block) => String(block.text ?? ''));
      const reasoning = blocks
        .filter((block) => block.type === 'thinking')
        .map((block) => String(block.thinking ?? ''))
        .join('\n');
      const calls = blocks
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({
          id: String(block.id),
          type: 'function' as const,
          function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
        }));
      messages.push({
        role: 'assistant',
        content: text.length > 0 ? text.join('') : null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        ...(reasoning ? { reasoning_content: reasoning } : {}),
      });
      continue;
    }
    const rest: WireBlock[] = [];
    for (const block of blocks) {
      if (block.type !== 'tool_result') {
        rest.push(block);
        continue;
      }
      const id = String(block.tool_use_id);
      if (block.is_error === true) errors.push(id);
      messages.push({ role: 'tool', tool_call_id: id, content: outputText(toolResultOutput(block.content)) });
    }
    if (rest.length > 0) messages.push({ role: 'user', content: chatContent(rest) });
  }
  return { messages, tools: chatToolsOf(wire.body.tools), errors };
}

/** Anthropic tool definitions in chat form; a server tool without a schema gets the empty object schema. */
export function chatToolsOf(tools: readonly unknown[]): ChatTool[] {
  return chatTools(specsOf(tools));
}

/** Anthropic tool definitions, as recorded, as our tool specs (name, description, input schema). */
export function specsOf(tools: readonly unknown[]): ToolSpec[] {
  return tools.map((tool) => {
    const entry = tool as { name?: unknown; description?: unknown; input_schema?: unknown };
    return {
      name: String(entry.name ?? ''),
      description: typeof entry.description === 'string' ? entry.description : '',
      parameters: (entry.input_schema as ToolSpec['parameters']) ?? { type: 'object', properties: {} },
      readOnly: false,
    };
  });
}
