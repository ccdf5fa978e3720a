import { assistantMessage } from '../chat.js';
import { type Provider, ProviderError } from './types.js';

/**
 * The embedded default: answers every model call with the assistant turn that was recorded for it. The whole
 * pipeline then runs with no model at all, and every pair's completion equals its original — a self-check of
 * the pipeline's fidelity.
 */
export const recorded: Provider = {
  name: 'recorded',
  async complete(request) {
    if (!request.original) {
      throw new ProviderError(
        'the recorded provider can only answer turns that exist in the recording',
        true,
      );
    }
    const usage = request.original.response.usage;
    return {
      message: assistantMessage(request.original.response),
      ...(usage
        ? { usage: { prompt_tokens: usage.inputTokens ?? 0, completion_tokens: usage.outputTokens ?? 0 } }
        : {}),
      finishReason: request.original.response.parts.some((part) => part.type === 'tool_call')
        ? 'tool_calls'
        : 'stop',
    };
  },
};
