// The OpenAI chat-completions shape: what pairs.jsonl holds and what OpenAI-compatible servers take. Pure.
import { canonicalJson } from '../model/canonical-json.js';
import { callInput, type Message, outputText, type Part, type ToolCall } from '../model/session.js';
import type { ToolSpec } from './catalogue/types.js';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatContent =
  | string
  | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[];

/** The text of a chat message's content: a string, or its text parts joined (images left out). */
export function chatText(content: ChatContent | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: ChatContent }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Tool-call arguments as the JSON string the wire carries. An input kept raw because it was not valid JSON
 * (`{ raw: "…" }` from an adapter) is sent as that raw text, as the model originally wrote it.
 */
export function argumentsOf(call: ToolCall): string {
  const input = call.input as { raw?: unknown } | null;
  if (
    input &&
    typeof input === 'object' &&
    Object.keys(input).length === 1 &&
    typeof input.raw === 'string'
  ) {
    return input.raw;
  }
  return JSON.stringify(callInput(call) ?? {});
}

function text(parts: Part[]): string {
  return parts
    .filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

function userContent(parts: Part[]): ChatContent {
  const images = parts.filter((part) => part.type === 'image');
  if (images.length === 0) return text(parts);
  return parts.flatMap((part): Exclude<ChatContent, string> => {
    if (part.type === 'text') return [{ type: 'text', text: part.text }];
    if (part.type === 'image')
      return [{ type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data}` } }];
    return [];
  });
}

/** One assistant message in chat form: text, tool calls, and reasoning where there was any. */
export function assistantMessage(message: Message): Extract<ChatMessage, { role: 'assistant' }> {
  const calls = message.parts.filter((part): part is ToolCall => part.type === 'tool_call');
  const content = text(message.parts);
  const out: Extract<ChatMessage, { role: 'assistant' }> = {
    role: 'assistant',
    content: content === '' ? null : content,
  };
  if (calls.length > 0) {
    out.tool_calls = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: argumentsOf(call) },
    }));
  }
  const reasoning = message.parts
    .filter(
      (part): part is Extract<Part, { type: 'reasoning' }> => part.type === 'reasoning' && !part.redacted,
    )
    .map((part) => part.text)
    .join('\n');
  if (reasoning) out.reasoning_content = reasoning;
  return out;
}

/** A context in chat form. Tool results become one `tool` message each, right where they were recorded. */
export function chatMessages(messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: text(message.parts) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(message.parts) });
        break;
      case 'assistant':
        out.push(assistantMessage(message));
        break;
      case 'tool':
        for (const part of message.parts) {
          if (part.type === 'tool_result') {
            out.push({ role: 'tool', tool_call_id: part.callId, content: outputText(part.output) });
          }
        }
        // A tool-role message can also carry text the harness added (rare): keep it, as the user's.
        if (message.parts.some((part) => part.type === 'text'))
          out.push({ role: 'user', content: text(message.parts) });
        break;
    }
  }
  return out;
}

export function chatTools(tools: readonly ToolSpec[]): ChatTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as Record<string, unknown>,
    },
  }));
}

/** The tool calls of a chat message as (name, canonical arguments): what matching compares. */
export function callKeys(message: { tool_calls?: ChatToolCall[] }): string[] {
  return (message.tool_calls ?? []).map(
    (call) => `${call.function.name}\0${canonicalArguments(call.function.arguments)}`,
  );
}

/** Arguments with key order made irrelevant; text that is not JSON is compared as it is. */
export function canonicalArguments(raw: string): string {
  try {
    return canonicalJson(JSON.parse(raw));
  } catch {
    return raw;
  }
}
