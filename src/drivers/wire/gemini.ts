// The Gemini API wire (`/v1beta/models/<model>:streamGenerateContent?alt=sse` and `:generateContent`) as a
// driver's proxy sees it: a request read as the chat form pairs hold (system instruction, contents, function
// declarations), an answer's server-sent events assembled into the assistant message they carry — with an id of
// ours given to every function call that has none, since the Gemini API names no calls and the proxy must know
// which result answers which call — and a message written back in either form for a recorded model. Pure apart
// from writing to the stream it is given. The chat-completions counterpart is openai-chat.ts.
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { ChatMessage, ChatTool, ChatToolCall } from '../../replay/chat.js';
import { geminiCompletion } from '../../replay/providers/gemini.js';
import { sendJson } from '../common/loopback.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;
type Json = Record<string, unknown>;

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
  functionResponse?: { id?: string; name?: string; response?: unknown };
  inlineData?: { mimeType?: string; data?: string };
  [key: string]: unknown;
}

export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts?: GeminiPart[] } | string;
  tools?: { functionDeclarations?: Json[] }[];
  generationConfig?: Json;
  [key: string]: unknown;
}

export interface GeminiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  [key: string]: unknown;
}

/** The text of a system instruction (a string, or its parts' text joined). */
export function systemText(request: Pick<GeminiRequest, 'systemInstruction'>): string {
  const instruction = request.systemInstruction;
  if (typeof instruction === 'string') return instruction;
  return (instruction?.parts ?? []).map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** The function declarations a request offers. */
export function declarations(request: Pick<GeminiRequest, 'tools'>): Json[] {
  return (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
}

/** What a result part says, as text: `{output}` its output, `{error}` its error, anything else as JSON. */
export function responseText(response: unknown): string {
  if (response && typeof response === 'object' && !Array.isArray(response)) {
    const { output, error } = response as { output?: unknown; error?: unknown };
    if (typeof output === 'string' && Object.keys(response).length === 1) return output;
    if (typeof error === 'string' && Object.keys(response).length === 1) return error;
  }
  return JSON.stringify(response ?? null);
}

/**
 * A request in the chat form pairs hold: the system instruction a system message, each user content's text
 * parts a user message (several parts kept apart), each result a `tool` message under its call's id, each model
 * content an assistant message with its calls (its thoughts as reasoning; Gemini CLI never sends them back).
 */
export function geminiChat(request: GeminiRequest): { messages: ChatMessage[]; tools: ChatTool[] } {
  const messages: ChatMessage[] = [];
  const system = systemText(request);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const content of request.contents ?? []) {
    const parts = content.parts ?? [];
    if (content.role === 'model') {
      let text = '';
      let reasoning = '';
      const calls: ChatToolCall[] = [];
      for (const part of parts) {
        if (typeof part.text === 'string') {
          if (part.thought === true) reasoning += part.text;
          else text += part.text;
        }
        if (part.functionCall?.name)
          calls.push({
            id: part.functionCall.id ?? part.functionCall.name,
            type: 'function',
            function: {
              name: part.functionCall.name,
              arguments: JSON.stringify(part.functionCall.args ?? {}),
            },
          });
      }
      messages.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
      });
      continue;
    }
    let pending: ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] = [];
    const flush = () => {
      if (pending.length === 0) return;
      const only = pending[0];
      messages.push({
        role: 'user',
        content: pending.length === 1 && only?.type === 'text' ? only.text : pending,
      });
      pending = [];
    };
    for (const part of parts) {
      if (part.functionResponse) {
        flush();
        messages.push({
          role: 'tool',
          tool_call_id: part.functionResponse.id ?? part.functionResponse.name ?? 'tool',
          content: responseText(part.functionResponse.response),
        });
      } else if (typeof part.text === 'string') pending.push({ type: 'text', text: part.text });
      else if (part.inlineData?.data)
        pending.push({
          type: 'image_url',
          image_url: {
            url: `data:${part.inlineData.mimeType ?? 'application/octet-stream'};base64,${part.inlineData.data}`,
          },
        });
    }
    flush();
  }
  const tools = declarations(request).map((declaration) => ({
    type: 'function' as const,
    function: {
      name: String(declaration.name ?? ''),
      description: String(declaration.description ?? ''),
      parameters: (declaration.parametersJsonSchema ?? declaration.parameters ?? {}) as Record<
        string,
        unknown
      >,
    },
  }));
  return { messages, tools };
}

/** The request with each answered call's result part holding its answer (`{output}`, or `{error}` for one). */
export function substituteResults(
  request: GeminiRequest,
  answers: ReadonlyMap<string, { text: string; isError: boolean }>,
): GeminiRequest {
  return {
    ...request,
    contents: (request.contents ?? []).map((content) => {
      if (!content.parts?.some((part) => part.functionResponse?.id && answers.has(part.functionResponse.id)))
        return content;
      return {
        ...content,
        parts: content.parts.map((part) => {
          const answered = part.functionResponse?.id ? answers.get(part.functionResponse.id) : undefined;
          if (!answered || !part.functionResponse) return part;
          return {
            ...part,
            functionResponse: {
              ...part.functionResponse,
              response: answered.isError ? { error: answered.text } : { output: answered.text },
            },
          };
        }),
      };
    }),
  };
}

/** An assistant message as the parts of a model content: thoughts, text, function calls with their ids. */
export function modelParts(message: Assistant): GeminiPart[] {
  const parts: GeminiPart[] = [];
  if (message.reasoning_content) parts.push({ text: message.reasoning_content, thought: true });
  const text = typeof message.content === 'string' ? message.content : '';
  if (text !== '') parts.push({ text });
  for (const call of message.tool_calls ?? []) {
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch {
      args = { raw: call.function.arguments };
    }
    parts.push({ functionCall: { id: call.id, name: call.function.name, args } });
  }
  if (parts.length === 0) parts.push({ text: '' });
  return parts;
}

function responseOf(parts: GeminiPart[], model: string, usage?: GeminiUsage): Json {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: usage?.prompt_tokens ?? 0,
      candidatesTokenCount: usage?.completion_tokens ?? 0,
      totalTokenCount: (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0),
    },
    modelVersion: model,
  };
}

/** A message as one `generateContent` answer. */
export function writeGeminiResponse(
  res: ServerResponse,
  message: Assistant,
  model: string,
  usage?: GeminiUsage,
): void {
  sendJson(res, 200, responseOf(modelParts(message), model, usage));
}

/** A message as a `streamGenerateContent?alt=sse` answer: its text and thoughts first, then its calls. */
export function writeGeminiStream(
  res: ServerResponse,
  message: Assistant,
  model: string,
  usage?: GeminiUsage,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const parts = modelParts(message);
  const calls = parts.filter((part) => part.functionCall);
  const said = parts.filter((part) => !part.functionCall);
  if (calls.length > 0 && said.length > 0) {
    const first = {
      candidates: [{ content: { role: 'model', parts: said }, index: 0 }],
      modelVersion: model,
    };
    res.write(`data: ${JSON.stringify(first)}\r\n\r\n`);
  }
  res.end(`data: ${JSON.stringify(responseOf(calls.length > 0 ? calls : said, model, usage))}\r\n\r\n`);
}

export interface GeminiAssembled {
  message: Assistant | null;
  finishReason: string | null;
  usage: GeminiUsage | null;
  error?: string;
}

/**
 * Puts one answer back together as its bytes pass, and gives back the bytes to pass on: each SSE event (or the
 * one JSON body) with an id of `newId()` on every function call that has none. The events are kept parsed until
 * the end (an answer is one model turn).
 */
export class GeminiAssembler {
  private status = 0;
  private sse = false;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private readonly events: Json[] = [];
  private broken: string | undefined;

  constructor(private readonly newId: () => string) {}

  begin(status: number, sse: boolean): void {
    this.status = status;
    this.sse = sse && status < 400;
  }

  /** Takes a piece of the answer; returns what is ready to pass on. */
  push(chunk: Buffer): string {
    this.pending += this.decoder.write(chunk);
    if (!this.sse) return '';
    let out = '';
    let newline = this.pending.indexOf('\n');
    while (newline !== -1) {
      out += this.line(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
    return out;
  }

  /** The rest to pass on, once the answer has ended. */
  end(): string {
    this.pending += this.decoder.end();
    if (this.sse) {
      const rest = this.pending;
      this.pending = '';
      return rest === '' ? '' : this.line(rest);
    }
    if (this.status >= 400) return this.pending;
    try {
      const body = JSON.parse(this.pending) as Json;
      this.named(body);
      this.events.push(body);
      return JSON.stringify(body);
    } catch (error) {
      this.broken = `an answer that is not JSON: ${(error as Error).message}`;
      return this.pending;
    }
  }

  private line(raw: string): string {
    const line = raw.replace(/\r$/, '');
    if (!line.startsWith('data:')) return `${raw}\n`;
    try {
      const event = JSON.parse(line.slice(5).trim()) as Json;
      this.named(event);
      this.events.push(event);
      return `data: ${JSON.stringify(event)}${raw.endsWith('\r') ? '\r' : ''}\n`;
    } catch (error) {
      this.broken ??= `an event that is not JSON: ${(error as Error).message}`;
      return `${raw}\n`;
    }
  }

  /** Gives every function call of an event an id, where it has none. */
  private named(event: Json): void {
    for (const candidate of (event.candidates as Json[] | undefined) ?? [])
      for (const part of ((candidate.content as Json | undefined)?.parts as GeminiPart[] | undefined) ?? [])
        if (part.functionCall?.name && !part.functionCall.id) part.functionCall.id = this.newId();
  }

  result(): GeminiAssembled {
    if (this.status >= 400) {
      let message = this.pending.slice(0, 500);
      try {
        message = String(
          (JSON.parse(this.pending) as { error?: { message?: unknown } }).error?.message ?? message,
        );
      } catch {
        // Not JSON: said as it came.
      }
      return { message: null, finishReason: null, usage: null, error: `HTTP ${this.status}: ${message}` };
    }
    if (this.broken) return { message: null, finishReason: null, usage: null, error: this.broken };
    const errored = this.events.find((event) => event.error);
    if (errored)
      return {
        message: null,
        finishReason: null,
        usage: null,
        error: `the model's stream ended with an error: ${JSON.stringify(errored.error).slice(0, 500)}`,
      };
    if (this.events.length === 0)
      return { message: null, finishReason: null, usage: null, error: 'an empty answer' };
    const completion = geminiCompletion(this.events);
    return {
      message: completion.message as Assistant,
      finishReason: completion.finishReason ?? null,
      usage: completion.usage
        ? {
            prompt_tokens: completion.usage.prompt_tokens ?? 0,
            completion_tokens: completion.usage.completion_tokens ?? 0,
          }
        : null,
    };
  }
}
