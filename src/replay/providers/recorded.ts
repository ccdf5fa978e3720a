import { assistantMessage } from '../chat.js';
import { type Provider, RecordingExhausted } from './types.js';

/**
 * The embedded default: answers every model call with the assistant turn that was recorded for it. The whole
 * pipeline then runs with no model at all, and every pair's completion equals its original — a self-check of
 * the pipeline's fidelity.
 */
export const recorded: Provider = {
  name: 'recorded',
  async complete(request) {
    // Free mode can go past the original's last turn (its path differed): the recording has nothing to say.
    if (!request.original) throw new RecordingExhausted();
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
