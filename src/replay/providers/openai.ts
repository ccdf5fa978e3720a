import OpenAI from 'openai';
import type { ChatToolCall } from '../chat.js';
import { type JsonParts, listBytes, objectParts } from '../memo.js';
import { providerError } from './errors.js';
import type { Completion, Provider } from './types.js';

export interface HttpOptions {
  model: string;
  baseURL: string;
  apiKey?: string;
  /** Per request, milliseconds. */
  timeoutMs: number;
  /** Retries on 408/409/429/5xx and connection errors, with backoff and Retry-After (done by the SDK). */
  maxRetries: number;
  stream: boolean;
  maxTokens?: number;
  /** As shown to the user: `openai:MODEL` or `ollama:MODEL`. */
  name: string;
}

type Assistant = Completion['message'];

/** What both official SDKs' clients take: endpoint, key, timeout, and retries (done by the SDK). */
export function clientOptions(options: HttpOptions) {
  return {
    // Local servers need no key; the SDKs insist on one.
    apiKey: options.apiKey || 'not-needed',
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  };
}

/** Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, LM Studio, Ollama, OpenRouter). */
export function openaiProvider(options: HttpOptions): Provider {
  const client = new OpenAI(clientOptions(options));
  return {
    name: options.name,
    async complete(request, signal) {
      const body = {
        model: options.model,
        messages: request.messages as OpenAI.ChatCompletionMessageParam[],
        ...(request.tools.length > 0 ? { tools: request.tools } : {}),
        ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
      };
      try {
        if (options.stream) return await streamed(client, body, signal);
        // The body as `chat.completions.create` would serialise it, made from bytes already at hand (the
        // messages, and the session's tool list made once): the context is not serialised again per turn. The
        // SDK sends a buffer as it is, and again on a retry.
        const response = await client.post<OpenAI.ChatCompletion>('/chat/completions', {
          body: bodyBytes(body, request.messagesParts),
          headers: { 'content-type': 'application/json' },
          ...(signal ? { signal } : {}),
        });
        const choice = response.choices[0];
        if (!choice) throw new Error('the response has no choices');
        const reply = choice.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
        const message: Assistant = { role: 'assistant', content: reply.content ?? null };
        const calls = (reply.tool_calls ?? []).filter((call) => call.type === 'function');
        if (calls.length > 0) {
          message.tool_calls = calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.function.name, arguments: call.function.arguments },
          }));
        }
        if (reply.reasoning_content) message.reasoning_content = reply.reasoning_content;
        return {
          message,
          ...(response.usage ? { usage: response.usage } : {}),
          finishReason: choice.finish_reason,
        };
      } catch (error) {
        throw providerError(error, options.name, options.baseURL);
      }
    },
  };
}

/** The UTF-8 of `JSON.stringify({ ...body, stream: false })`, byte for byte, the messages' and tools' bytes reused. */
export function bodyBytes(body: Record<string, unknown>, messages?: JsonParts): Buffer {
  return objectParts({ ...body, stream: false }, (key, value) =>
    key === 'messages' && messages !== undefined
      ? messages
      : key === 'tools'
        ? listBytes(value)
        : JSON.stringify(value),
  ).concat();
}

/** A streamed answer, put back together: text, reasoning, and tool calls whose arguments arrive in pieces. */
async function streamed(
  client: OpenAI,
  body: Omit<OpenAI.ChatCompletionCreateParamsStreaming, 'stream'>,
  signal?: AbortSignal,
): Promise<Completion> {
  const stream = await client.chat.completions.create(
    { ...body, stream: true, stream_options: { include_usage: true } },
    signal ? { signal } : {},
  );
  let content = '';
  let reasoning = '';
  let finishReason: string | undefined;
  let usage: Completion['usage'];
  const calls: ChatToolCall[] = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    const delta = choice.delta as OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };
    if (delta.content) content += delta.content;
    if (delta.reasoning_content) reasoning += delta.reasoning_content;
    for (const piece of delta.tool_calls ?? []) {
      let call = calls[piece.index];
      if (!call) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } };
        calls[piece.index] = call;
      }
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  const message: Completion['message'] = { role: 'assistant', content: content === '' ? null : content };
  const made = calls.filter(Boolean);
  if (made.length > 0) message.tool_calls = made;
  if (reasoning) message.reasoning_content = reasoning;
  return { message, ...(usage ? { usage } : {}), ...(finishReason ? { finishReason } : {}) };
}
