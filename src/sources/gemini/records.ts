// The records of a Gemini CLI session log (google-gemini/gemini-cli `packages/core/src/services/
// chatRecordingService.ts`, `chatRecordingTypes.ts`) and how their pieces become normalized parts. Pure.

import type { OutputBlock, Part, ToolCall, ToolResult, Usage } from '../../model/session.js';

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Message types the CLI writes; the last three are notices shown in its UI, never sent to the model. */
export const messageTypes = new Set(['user', 'gemini', 'info', 'error', 'warning']);
export const noticeTypes = new Set(['info', 'error', 'warning']);

/** One line (or the legacy file's one object) as this adapter reads it. */
export type GeminiRecord =
  | { kind: 'metadata'; value: Json }
  | { kind: 'set'; value: Json }
  | { kind: 'rewind'; id: string }
  | { kind: 'message'; value: Json; id: string; type: string };

/** What a line is, or why it is not a record of this format. */
export function readRecord(value: unknown): GeminiRecord | string {
  if (!isObject(value)) return 'not a JSON object';
  if ('$rewindTo' in value) {
    return typeof value.$rewindTo === 'string'
      ? { kind: 'rewind', id: value.$rewindTo }
      : '"$rewindTo" is not a message id';
  }
  if ('$set' in value)
    return isObject(value.$set) ? { kind: 'set', value: value.$set } : '"$set" is not an object';
  if (typeof value.id === 'string') {
    if (typeof value.type !== 'string') return 'message record without a "type"';
    return { kind: 'message', value, id: value.id, type: value.type };
  }
  if (typeof value.sessionId === 'string' && !('type' in value)) return { kind: 'metadata', value };
  const keys = Object.keys(value).slice(0, 4).join(', ');
  return `unknown record kind (keys: ${keys || 'none'})`;
}

/** The CLI makes call ids `<name>_<ms>_<n>` and logs them as `<name>__<id>`; the prefix is stripped on the wire. */
export function wireCallId(id: string, name: string): string {
  return id.startsWith(`${name}__`) ? id.slice(name.length + 2) : id;
}

/** Thoughts as the CLI renders them into a part when it rewrites history: `**subject** description`. */
export function thoughtText(thought: unknown): string | undefined {
  if (!isObject(thought)) return undefined;
  const subject = typeof thought.subject === 'string' ? thought.subject : '';
  const description = typeof thought.description === 'string' ? thought.description : '';
  if (subject === '' && description === '') return undefined;
  return subject === '' ? description : `**${subject}** ${description}`.trimEnd();
}

/** A `functionResponse` part as a result: its `output` (or `error`) text, anything else as JSON. */
export function resultOf(response: Json, fallbackId: string, failed: boolean): ToolResult {
  const name = typeof response.name === 'string' ? response.name : undefined;
  const id = typeof response.id === 'string' ? response.id : fallbackId;
  const payload = isObject(response.response) ? response.response : {};
  const keys = Object.keys(payload);
  let text: string;
  let isError = failed;
  if (keys.length === 1 && typeof payload.output === 'string') text = payload.output;
  else if (keys.length === 1 && typeof payload.error === 'string') {
    text = payload.error;
    isError = true;
  } else text = JSON.stringify(payload);
  const images: OutputBlock[] = [];
  // Multimodal results (a read of an image) carry their data beside the response.
  for (const part of Array.isArray(response.parts) ? response.parts : []) {
    const inline = isObject(part) && isObject(part.inlineData) ? part.inlineData : undefined;
    if (inline && typeof inline.data === 'string')
      images.push({
        type: 'image',
        mediaType: String(inline.mimeType ?? 'application/octet-stream'),
        data: inline.data,
      });
  }
  const result: ToolResult = {
    type: 'tool_result',
    callId: name ? wireCallId(id, name) : id,
    output: images.length > 0 ? [{ type: 'text', text }, ...images] : text,
    isError,
  };
  if (name) result.name = name;
  return result;
}

/** Content parts (a user message, or any message after a rewrite) as normalized parts, in order. */
export function contentParts(content: unknown, messageId: string): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: Part[] = [];
  content.forEach((part, index) => {
    if (!isObject(part)) return;
    if (typeof part.text === 'string') {
      if (part.thought === true) parts.push({ type: 'reasoning', text: part.text });
      else parts.push({ type: 'text', text: part.text });
    } else if (isObject(part.functionCall)) {
      const call = part.functionCall;
      const name = String(call.name ?? '');
      const id = typeof call.id === 'string' ? call.id : `${messageId}#${index}`;
      parts.push({ type: 'tool_call', id: wireCallId(id, name), name, input: call.args ?? {} });
    } else if (isObject(part.functionResponse)) {
      parts.push(resultOf(part.functionResponse, `${messageId}#${index}`, false));
    } else if (isObject(part.inlineData) && typeof part.inlineData.data === 'string') {
      const mediaType = String(part.inlineData.mimeType ?? 'application/octet-stream');
      parts.push({ type: 'image', mediaType, data: part.inlineData.data });
    }
  });
  return parts;
}

/** A `toolCalls[]` entry: the call, and its results as sent (`result`: the exact functionResponse parts). */
export function callOf(
  entry: Json,
  messageId: string,
  index: number,
): { call: ToolCall; results: ToolResult[] } {
  const name = String(entry.name ?? '');
  const id = typeof entry.id === 'string' ? entry.id : `${messageId}#${index}`;
  const call: ToolCall = { type: 'tool_call', id: wireCallId(id, name), name, input: entry.args ?? {} };
  const failed = entry.status === 'error';
  const results: ToolResult[] = [];
  for (const part of Array.isArray(entry.result) ? entry.result : [])
    if (isObject(part) && isObject(part.functionResponse))
      results.push(resultOf(part.functionResponse, id, failed));
  return { call, results };
}

/** `tokens {input, output, cached, thoughts, tool, total}` (the response's usageMetadata): thoughts are output. */
export function usageOf(tokens: unknown): Usage | undefined {
  if (!isObject(tokens)) return undefined;
  const number = (key: string): number | undefined =>
    typeof tokens[key] === 'number' ? (tokens[key] as number) : undefined;
  const usage: Usage = {};
  const input = number('input');
  const output = number('output');
  const thoughts = number('thoughts');
  const cached = number('cached');
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined || thoughts !== undefined) usage.outputTokens = (output ?? 0) + (thoughts ?? 0);
  if (cached) usage.cacheReadTokens = cached;
  return Object.keys(usage).length > 0 ? usage : undefined;
}

export const sessionContextOpening = '<session_context>';
export const snapshotOpening = '<state_snapshot>';
