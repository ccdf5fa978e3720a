// Gemini-shaped parts to the normalized ones. Shared by live records and a compression's `compressedHistory`,
// so that a kept copy converts to the same parts as the message it copies.
import type { Part, ToolCall, ToolResult } from '../../model/session.js';
import type { GeminiPart, ToolCallResult } from './records.js';

/** What the parts of one record came to, and what in them could not be read. */
export interface Converted {
  parts: Part[];
  results: ToolResult[];
  /** Parts of no shape this adapter knows, and function calls without an id (given one here). */
  unknown: number;
  unnamedCalls: number;
}

/** The text the model was shown for a functionResponse: its `output`, else its `error`, else the JSON. */
export function responseText(response: Record<string, unknown> | undefined): string {
  if (typeof response?.output === 'string') return response.output;
  if (typeof response?.error === 'string') return response.error;
  return JSON.stringify(response ?? {});
}

/**
 * Parts of a model turn (`thought` text is reasoning) or of a user turn; `functionResponse` parts become tool
 * results. `fallbackId` names a call that has no id (the record's uuid and the part's place).
 */
export function convertParts(parts: GeminiPart[], fallbackId: string, outcome?: ToolCallResult): Converted {
  const out: Converted = { parts: [], results: [], unknown: 0, unnamedCalls: 0 };
  parts.forEach((part, index) => {
    if (typeof part.text === 'string') {
      out.parts.push(
        part.thought ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text },
      );
    } else if (part.functionCall) {
      const { id, name, args } = part.functionCall;
      if (typeof id !== 'string' || id === '') out.unnamedCalls++;
      const call: ToolCall = {
        type: 'tool_call',
        id: typeof id === 'string' && id !== '' ? id : `${fallbackId}-${index}`,
        name: typeof name === 'string' ? name : 'unknown',
        input: args ?? {},
      };
      out.parts.push(call);
    } else if (part.functionResponse) {
      const { id, name, response } = part.functionResponse;
      const result: ToolResult = {
        type: 'tool_result',
        callId: typeof id === 'string' ? id : (outcome?.callId ?? `${fallbackId}-${index}`),
        output: responseText(response),
        // The model is told of a failure by an `error` member; the record's status says the same.
        isError: outcome?.status === 'error' || typeof response?.error === 'string',
      };
      if (typeof name === 'string') result.name = name;
      const display = outcome?.resultDisplay;
      if (display !== undefined && display !== '') result.display = { metadata: { resultDisplay: display } };
      out.results.push(result);
    } else if (part.inlineData && typeof part.inlineData.data === 'string') {
      out.parts.push({
        type: 'image',
        mediaType: part.inlineData.mimeType ?? 'application/octet-stream',
        data: part.inlineData.data,
      });
    } else out.unknown++;
  });
  return out;
}

/** What makes two messages copies of each other: their calls' ids, else their visible parts. */
export function contentKey(role: string, parts: readonly Part[]): string {
  const calls = parts.flatMap((part) => (part.type === 'tool_call' ? [part.id] : []));
  if (calls.length > 0) return `${role}:calls:${calls.join(',')}`;
  // A compressed history may drop the reasoning of a turn it keeps: it does not decide.
  const visible = parts.filter((part) => part.type !== 'reasoning');
  return `${role}:${JSON.stringify(visible)}`;
}
