// One docker-agent `chat.Message` (OpenAI chat style: content or multi_content, tool_calls with JSON-string
// arguments, role "tool" answering tool_call_id) as a normalized Message.

import type { Message, OutputBlock, Part, Role, SourceRef, Usage } from '../../model/session.js';
import {
  type ChatMessage,
  isObject,
  type MessagePartRecord,
  roles,
  type ToolCallRecord,
  text,
  type UsageRecord,
} from './records.js';

export interface Origin {
  nativeId: string;
  source: SourceRef;
  /** `implicit`: written by docker-agent, never shown to the user (a sub-agent's "Please proceed."). */
  implicit: boolean;
}

/** A message, or why the record cannot be one. An empty message (a stream cut off at once) is `empty`. */
export type Converted = { message: Message } | { problem: string } | { empty: true };

export function convert(raw: unknown, origin: Origin): Converted {
  if (!isObject(raw)) return { problem: 'the message is not a JSON object' };
  const chat = raw as ChatMessage;
  const role = text(chat.role);
  if (role === undefined || !roles.has(role))
    return { problem: `the message has no valid role (${String(chat.role)})` };
  const parts =
    role === 'tool' ? [toolResult(chat)] : role === 'assistant' ? assistantParts(chat) : userParts(chat);
  if (parts.length === 0) return { empty: true };
  const message: Message = { role: role as Role, parts, nativeId: origin.nativeId, source: origin.source };
  const model = text(chat.model);
  if (model) message.model = model;
  if (isObject(chat.usage)) message.usage = usage(chat.usage as UsageRecord);
  const timestamp = isoTime(chat.created_at);
  if (timestamp) message.timestamp = timestamp;
  if (origin.implicit && role === 'user') message.injected = true;
  return { message };
}

function assistantParts(chat: ChatMessage): Part[] {
  const parts: Part[] = [];
  const reasoning = text(chat.reasoning_content);
  if (reasoning) {
    const signature = text(chat.thinking_signature);
    parts.push(
      signature ? { type: 'reasoning', text: reasoning, signature } : { type: 'reasoning', text: reasoning },
    );
  }
  parts.push(...contentParts(chat));
  if (Array.isArray(chat.tool_calls)) {
    for (const raw of chat.tool_calls as unknown[]) {
      if (!isObject(raw)) continue;
      const call = raw as ToolCallRecord;
      const fn = isObject(call.function) ? call.function : {};
      parts.push({
        type: 'tool_call',
        id: text(call.id) ?? '',
        name: text(fn.name) ?? '',
        input: argumentsOf(fn.arguments),
      });
    }
  }
  return parts;
}

function userParts(chat: ChatMessage): Part[] {
  return contentParts(chat);
}

/** Providers send `multi_content` when it is set and `content` otherwise (docker-agent's converters). */
function contentParts(chat: ChatMessage): Part[] {
  if (Array.isArray(chat.multi_content) && chat.multi_content.length > 0) {
    return (chat.multi_content as MessagePartRecord[]).flatMap((part) =>
      isObject(part) ? [attachment(part)] : [],
    );
  }
  const content = text(chat.content);
  return content ? [{ type: 'text', text: content }] : [];
}

function attachment(part: MessagePartRecord): Part {
  if (part.type === 'text') return { type: 'text', text: text(part.text) ?? '' };
  if (part.type === 'image_url') {
    const url = text(part.image_url?.url) ?? '';
    const data = /^data:([^;,]+)(?:;[^,]*)?,(.*)$/s.exec(url);
    return data
      ? { type: 'image', mediaType: data[1] ?? 'image/*', data: data[2] ?? '' }
      : { type: 'image', mediaType: 'image/*', data: url };
  }
  if (part.type === 'document') {
    const document = part.document ?? {};
    const mediaType = text(document.mime_type) ?? 'application/octet-stream';
    const inlineText = text(document.source?.inline_text);
    if (inlineText !== undefined) return { type: 'text', text: inlineText };
    const inlineData = text(document.source?.inline_data);
    if (inlineData !== undefined && mediaType.startsWith('image/'))
      return { type: 'image', mediaType, data: inlineData };
    return {
      type: 'text',
      text: `[document ${text(document.name) ?? text(document.source?.artifact_path) ?? ''} (${mediaType})]`,
    };
  }
  if (part.type === 'file') return { type: 'text', text: `[file ${text(part.file?.path) ?? ''}]` };
  return { type: 'text', text: JSON.stringify(part) };
}

function toolResult(chat: ChatMessage): Part {
  let output: string | OutputBlock[] = text(chat.content) ?? '';
  if (Array.isArray(chat.multi_content) && chat.multi_content.length > 0) {
    output = contentParts(chat).map(
      (part): OutputBlock =>
        part.type === 'image'
          ? { type: 'image', mediaType: part.mediaType, data: part.data }
          : { type: 'text', text: part.type === 'text' ? part.text : '' },
    );
  }
  return {
    type: 'tool_result',
    callId: text(chat.tool_call_id) ?? '',
    output,
    isError: chat.is_error === true,
  };
}

/** Arguments are the JSON string the model wrote; one that does not parse is kept as that string. */
function argumentsOf(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function usage(raw: UsageRecord): Usage {
  const out: Usage = {};
  if (typeof raw.input_tokens === 'number') out.inputTokens = raw.input_tokens;
  if (typeof raw.output_tokens === 'number') out.outputTokens = raw.output_tokens;
  if (typeof raw.cached_input_tokens === 'number') out.cacheReadTokens = raw.cached_input_tokens;
  if (typeof raw.cached_write_tokens === 'number') out.cacheWriteTokens = raw.cached_write_tokens;
  return out;
}

/** docker-agent writes RFC 3339 with the local offset; stored as UTC ISO so that times compare as strings. */
export function isoTime(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}
