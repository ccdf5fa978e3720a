import Anthropic from '@anthropic-ai/sdk';
import type { ChatMessage } from '../chat.js';
import { providerError } from './errors.js';
import { clientOptions, type HttpOptions } from './openai.js';
import type { Completion, CompletionRequest, Provider } from './types.js';

type Block = Anthropic.ContentBlockParam;
type Turn = { role: 'user' | 'assistant'; content: Block[] };

function input(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return { raw };
  }
}

function blocksOf(message: Exclude<ChatMessage, { role: 'system' }>): Block[] {
  switch (message.role) {
    case 'user':
      if (typeof message.content === 'string')
        return message.content ? [{ type: 'text', text: message.content }] : [];
      return message.content.map((part): Block => {
        if (part.type === 'text') return { type: 'text', text: part.text };
        const [head, data = ''] = part.image_url.url.split(',', 2);
        const media = /^data:([^;]+)/.exec(head ?? '')?.[1] ?? 'image/png';
        return { type: 'image', source: { type: 'base64', media_type: media as 'image/png', data } };
      });
    case 'assistant': {
      const blocks: Block[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const call of message.tool_calls ?? []) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: input(call.function.arguments),
        });
      }
      return blocks;
    }
    case 'tool':
      return [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }];
  }
}

/**
 * Chat messages as the Messages API wants them: the system prompt apart, tool results as `tool_result` blocks
 * in a user turn right after the assistant's `tool_use`, and consecutive messages of one role merged (the API
 * wants user and assistant turns to alternate).
 */
export function anthropicMessages(messages: readonly ChatMessage[]): { system: string; messages: Turn[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      system.push(message.content);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return { system: system.join('\n\n'), messages: turns };
}

function toCompletion(response: Anthropic.Message): Completion {
  let text = '';
  let reasoning = '';
  const message: Completion['message'] = { role: 'assistant', content: null };
  const calls: NonNullable<Completion['message']['tool_calls']> = [];
  for (const block of response.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'thinking') reasoning += block.thinking;
    else if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    }
  }
  if (text) message.content = text;
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning) message.reasoning_content = reasoning;
  const finish: Record<string, string> = {
    end_turn: 'stop',
    tool_use: 'tool_calls',
    max_tokens: 'length',
    stop_sequence: 'stop',
  };
  return {
    message,
    usage: { prompt_tokens: response.usage.input_tokens, completion_tokens: response.usage.output_tokens },
    finishReason: finish[response.stop_reason ?? ''] ?? response.stop_reason ?? 'stop',
  };
}

/**
 * The body a turn is sent with. A turn that carries its Anthropic request (`request.wire`: recorded by Claude
 * Code, or rebuilt from its conversation) is sent as that request — system blocks, tools, messages, params,
 * betas — with only the model (and `max_tokens`, if `--max-tokens` says so) ours; otherwise the chat form is
 * converted.
 */
export function anthropicBody(
  request: CompletionRequest,
  options: Pick<HttpOptions, 'model' | 'maxTokens'>,
): { body: Anthropic.MessageCreateParamsNonStreaming; betas: string[] } {
  const wire = request.wire?.api === 'anthropic-messages' ? request.wire : undefined;
  if (wire) {
    const recordedMax = wire.body.max_tokens;
    const maxTokens = options.maxTokens ?? (typeof recordedMax === 'number' ? recordedMax : 4096);
    // Spread first: the members keep the recorded order (the model where the agent put it).
    const body = { ...wire.body, model: options.model, max_tokens: maxTokens };
    return { body: body as unknown as Anthropic.MessageCreateParamsNonStreaming, betas: wire.betas };
  }
  const { system, messages } = anthropicMessages(request.messages);
  return {
    body: {
      model: options.model,
      max_tokens: options.maxTokens ?? 4096,
      messages,
      ...(system ? { system } : {}),
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              name: tool.function.name,
              description: tool.function.description,
              input_schema: tool.function.parameters as Anthropic.Tool.InputSchema,
            })),
          }
        : {}),
    },
    betas: [],
  };
}

/** The Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). */
export function anthropicProvider(options: HttpOptions): Provider {
  const client = new Anthropic(clientOptions(options));
  return {
    name: options.name,
    async complete(request: CompletionRequest, signal?: AbortSignal) {
      const { body, betas } = anthropicBody(request, options);
      const sent = {
        ...(signal ? { signal } : {}),
        ...(betas.length > 0 ? { headers: { 'anthropic-beta': betas.join(',') } } : {}),
      };
      try {
        const response = options.stream
          ? await client.messages.stream(body, sent).finalMessage()
          : await client.messages.create(body, sent);
        return toCompletion(response);
      } catch (error) {
        throw providerError(error, options.name, options.baseURL);
      }
    },
  };
}
