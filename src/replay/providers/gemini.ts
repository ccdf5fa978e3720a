// The Gemini API (`gemini:MODEL`: Google's endpoint with GEMINI_API_KEY, or any server at --base-url speaking
// `/v1beta/models/<model>:generateContent`), spoken with fetch: the chat form turned into Gemini's contents —
// system messages as `systemInstruction`, the assistant as `model` with its `functionCall` parts, each tool
// result a `functionResponse` named after its call — the tools as `functionDeclarations` with their JSON Schema
// (`parametersJsonSchema`, as Gemini CLI sends them), and the answer's parts read back (text, thoughts as
// reasoning, function calls), whole or streamed (`:streamGenerateContent?alt=sse`). Retries 429 and 5xx with
// backoff and Retry-After, as the SDK-based providers do.
import { type ChatMessage, type ChatTool, chatText } from '../chat.js';
import { providerError } from './errors.js';
import type { HttpOptions } from './openai.js';
import { type Completion, type CompletionRequest, type Provider, ProviderError } from './types.js';

type Json = Record<string, unknown>;

export interface GeminiBody {
  contents: { role: 'user' | 'model'; parts: Json[] }[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: Json[] }[];
  generationConfig?: Json;
}

/** A chat-form request as the Gemini API takes it. */
export function geminiBody(
  request: Pick<CompletionRequest, 'messages' | 'tools'>,
  maxTokens?: number,
): GeminiBody {
  const names = new Map<string, string>();
  const contents: GeminiBody['contents'] = [];
  const system: string[] = [];
  const add = (role: 'user' | 'model', parts: Json[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    // Gemini takes turns that alternate: consecutive parts of one role are one turn.
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of request.messages) add(...partsOf(message, names, system));
  return {
    contents,
    ...(system.length > 0 ? { systemInstruction: { parts: [{ text: system.join('\n\n') }] } } : {}),
    ...(request.tools.length > 0
      ? { tools: [{ functionDeclarations: request.tools.map(declaration) }] }
      : {}),
    ...(maxTokens ? { generationConfig: { maxOutputTokens: maxTokens } } : {}),
  };
}

function partsOf(
  message: ChatMessage,
  names: Map<string, string>,
  system: string[],
): ['user' | 'model', Json[]] {
  switch (message.role) {
    case 'system':
      system.push(message.content);
      return ['user', []];
    case 'user': {
      if (typeof message.content === 'string')
        return ['user', message.content === '' ? [] : [{ text: message.content }]];
      return [
        'user',
        message.content.map((part) => {
          if (part.type === 'text') return { text: part.text };
          const data = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
          return data ? { inlineData: { mimeType: data[1], data: data[2] } } : { text: part.image_url.url };
        }),
      ];
    }
    case 'assistant': {
      const parts: Json[] = [];
      const text = chatText(message.content);
      if (text !== '') parts.push({ text });
      for (const call of message.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        let args: unknown;
        try {
          args = JSON.parse(call.function.arguments);
        } catch {
          args = { raw: call.function.arguments };
        }
        parts.push({ functionCall: { id: call.id, name: call.function.name, args } });
      }
      return ['model', parts];
    }
    case 'tool':
      return [
        'user',
        [
          {
            functionResponse: {
              id: message.tool_call_id,
              name: names.get(message.tool_call_id) ?? 'tool',
              response: { output: message.content },
            },
          },
        ],
      ];
    default:
      return ['user', []];
  }
}

function declaration(tool: ChatTool): Json {
  return {
    name: tool.function.name,
    description: tool.function.description,
    parametersJsonSchema: tool.function.parameters,
  };
}

/** The answer's candidate in chat form; `chunks` are the streamed pieces (or the one whole response). */
export function geminiCompletion(chunks: readonly Json[]): Completion {
  let text = '';
  let reasoning = '';
  const calls: NonNullable<Completion['message']['tool_calls']> = [];
  let usage: Completion['usage'];
  let finishReason: string | undefined;
  for (const chunk of chunks) {
    const candidate = (chunk.candidates as Json[] | undefined)?.[0];
    const parts = ((candidate?.content as Json | undefined)?.parts as Json[] | undefined) ?? [];
    for (const part of parts) {
      if (typeof part.text === 'string') {
        if (part.thought === true) reasoning += part.text;
        else text += part.text;
      }
      const call = part.functionCall as { id?: string; name?: string; args?: unknown } | undefined;
      if (call?.name)
        calls.push({
          id: call.id ?? `call_${calls.length + 1}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        });
    }
    if (typeof candidate?.finishReason === 'string') finishReason = candidate.finishReason;
    const meta = chunk.usageMetadata as
      | { promptTokenCount?: number; candidatesTokenCount?: number }
      | undefined;
    if (meta)
      usage = {
        prompt_tokens: meta.promptTokenCount ?? 0,
        completion_tokens: meta.candidatesTokenCount ?? 0,
      };
  }
  const message: Completion['message'] = { role: 'assistant', content: text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning !== '') message.reasoning_content = reasoning;
  return {
    message,
    ...(usage ? { usage } : {}),
    finishReason: calls.length > 0 ? 'tool_calls' : finishReason === 'MAX_TOKENS' ? 'length' : 'stop',
  };
}

/** The `data:` events of a server-sent stream, parsed. */
function events(text: string): Json[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5).trim()) as Json);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new ProviderError('aborted'));
    });
  });

export function geminiProvider(options: HttpOptions): Provider {
  const base = options.baseURL.replace(/\/$/, '');
  const method = options.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  const url = `${base}/v1beta/models/${encodeURIComponent(options.model)}:${method}`;
  return {
    name: options.name,
    async complete(request, signal) {
      const body = JSON.stringify(geminiBody(request, options.maxTokens));
      for (let attempt = 0; ; attempt++) {
        let answer: Response;
        try {
          const timeout = AbortSignal.timeout(options.timeoutMs);
          answer = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(options.apiKey ? { 'x-goog-api-key': options.apiKey } : {}),
            },
            body,
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          });
        } catch (error) {
          const name = (error as Error).name;
          if (name === 'TimeoutError')
            throw new ProviderError(`${options.name}: timed out after ${options.timeoutMs} ms`);
          if (name === 'AbortError') throw new ProviderError(`${options.name}: aborted`);
          if (attempt < options.maxRetries) {
            await sleep(500 * 2 ** attempt, signal);
            continue;
          }
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          throw new ProviderError(
            `${options.name}: cannot connect${cause?.code ? ` (${cause.code})` : ''} to ${options.baseURL}: ${cause?.message ?? (error as Error).message}; is the server running?`,
            true,
          );
        }
        if (answer.ok) {
          const text = await answer.text();
          try {
            return geminiCompletion(options.stream ? events(text) : [JSON.parse(text) as Json]);
          } catch (error) {
            throw providerError(
              new Error(`an answer that is not Gemini's: ${(error as Error).message}`),
              options.name,
            );
          }
        }
        const detail = (await answer.text().catch(() => '')).slice(0, 500);
        if ((answer.status === 429 || answer.status >= 500) && attempt < options.maxRetries) {
          const after = Number(answer.headers.get('retry-after'));
          await sleep(Number.isFinite(after) && after > 0 ? after * 1000 : 500 * 2 ** attempt, signal);
          continue;
        }
        let message = detail;
        try {
          message = String(
            (JSON.parse(detail) as { error?: { message?: unknown } }).error?.message ?? detail,
          );
        } catch {
          // Not JSON: said as it came.
        }
        throw providerError(
          Object.assign(new Error(`${answer.status} ${message}`), { status: answer.status }),
          options.name,
          options.baseURL,
        );
      }
    },
  };
}
