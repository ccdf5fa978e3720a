// The OpenAI Responses API (`responses:MODEL`: OpenAI, or any server with `/v1/responses`, such as vLLM). A
// turn that carries its request on that wire (a Codex session's pair: `request.wire`, replay/responses.ts) is
// sent as it is — Codex's own items, developer parts, reasoning, namespaces and custom calls included —; any
// other turn is sent as its chat messages turned into input items. The answer's output items come back in chat
// form: text, reasoning summary, function and custom tool calls (the latter as `{input}`, the function form).
import OpenAI from 'openai';
import { type ChatMessage, type ChatTool, type ChatToolCall, chatText } from '../chat.js';
import { providerError } from './errors.js';
import type { HttpOptions } from './openai.js';
import { clientOptions } from './openai.js';
import type { Completion, CompletionRequest, Provider } from './types.js';

type Item = Record<string, unknown>;

export function responsesProvider(options: HttpOptions): Provider {
  const client = new OpenAI(clientOptions(options));
  return {
    name: options.name,
    async complete(request, signal) {
      const { input, tools } = requestBody(request);
      const body = {
        model: options.model,
        input,
        ...(tools.length > 0 ? { tools } : {}),
        ...(options.maxTokens ? { max_output_tokens: options.maxTokens } : {}),
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
      try {
        let response: OpenAI.Responses.Response | undefined;
        if (options.stream) {
          const stream = await client.responses.create({ ...body, stream: true }, signal ? { signal } : {});
          for await (const event of stream) {
            if (event.type === 'response.completed') response = event.response;
            if (event.type === 'response.failed' || event.type === 'error')
              throw new Error(`the stream failed: ${JSON.stringify(event)}`.slice(0, 2000));
          }
          if (!response) throw new Error('the stream ended without response.completed');
        } else response = await client.responses.create(body, signal ? { signal } : {});
        return responseCompletion(response);
      } catch (error) {
        throw providerError(error, options.name, options.baseURL);
      }
    },
  };
}

/** The recorded Responses request where the turn has one; else the chat form as input items and functions. */
function requestBody(request: CompletionRequest): { input: Item[]; tools: unknown[] } {
  if (request.wire?.api === 'openai-responses')
    return { input: request.wire.body.input, tools: request.wire.body.tools };
  return { input: request.messages.flatMap(inputItems), tools: request.tools.map(functionTool) };
}

function functionTool(tool: ChatTool): unknown {
  return {
    type: 'function',
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
  };
}

/** A chat message as Responses input items. */
function inputItems(message: ChatMessage): Item[] {
  switch (message.role) {
    case 'system':
      return [
        {
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: chatText(message.content) }],
        },
      ];
    case 'user':
      return [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: chatText(message.content) }] },
      ];
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.tool_call_id, output: chatText(message.content) },
      ];
    case 'assistant': {
      const items: Item[] = [];
      const text = chatText(message.content);
      if (text !== '')
        items.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        });
      for (const call of message.tool_calls ?? [])
        items.push({
          type: 'function_call',
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        });
      return items;
    }
    default:
      return [];
  }
}

/** The answer's output items in chat form. */
export function responseCompletion(response: OpenAI.Responses.Response): Completion {
  let text = '';
  let reasoning = '';
  const calls: ChatToolCall[] = [];
  for (const item of response.output as unknown as Item[]) {
    if (item.type === 'message')
      for (const part of (item.content as Item[] | undefined) ?? [])
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    if (item.type === 'reasoning') {
      const summary = ((item.summary as Item[] | undefined) ?? []).map((s) => String(s.text ?? ''));
      reasoning += summary.join('\n\n');
    }
    if (item.type === 'function_call')
      calls.push({
        id: String(item.call_id),
        type: 'function',
        function: { name: String(item.name), arguments: String(item.arguments ?? '{}') },
      });
    // Codex's client-run search of its deferred tools, a function in pairs (as the reader keeps it).
    if (item.type === 'tool_search_call')
      calls.push({
        id: String(item.call_id),
        type: 'function',
        function: {
          name: 'tool_search',
          arguments:
            typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
        },
      });
    // A free-form tool's raw text, in the function form it is offered in pairs.
    if (item.type === 'custom_tool_call')
      calls.push({
        id: String(item.call_id),
        type: 'function',
        function: { name: String(item.name), arguments: JSON.stringify({ input: String(item.input ?? '') }) },
      });
  }
  const message: Completion['message'] = { role: 'assistant', content: text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning !== '') message.reasoning_content = reasoning;
  const usage = response.usage
    ? { prompt_tokens: response.usage.input_tokens, completion_tokens: response.usage.output_tokens }
    : undefined;
  return {
    message,
    ...(usage ? { usage } : {}),
    finishReason: calls.length > 0 ? 'tool_calls' : response.status === 'incomplete' ? 'length' : 'stop',
  };
}
