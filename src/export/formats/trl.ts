// Hugging Face TRL conversational rows: `{messages, tools}`, or `{prompt, completion, tools}` when only the final
// assistant message(s) are to be learned (TRL has no per-message weight; prompt–completion is how it masks).
import type { AssistantMessage, Format, Rendered, Sample, SampleMessage } from '../sample.js';
import { functionTool, hasTrainable, nothingToTrain, rawCallReason, withWarnings } from './common.js';

/** An assistant message as chat templates read it: arguments as objects, reasoning as `reasoning_content`. */
export function trlAssistant(m: AssistantMessage): Record<string, unknown> {
  return {
    role: 'assistant',
    // Always a string: some templates concatenate `content` and fail on a missing one.
    content: m.content,
    // Qwen3-style templates read `reasoning_content`; templates that do not simply ignore it.
    ...(m.reasoning ? { reasoning_content: m.reasoning } : {}),
    ...(m.calls.length
      ? {
          tool_calls: m.calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : {}),
  };
}

export function trlMessage(m: SampleMessage): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      // TRL's own example names the tool; templates that match results to calls by id (Mistral) need the id.
      return { role: 'tool', name: m.name, tool_call_id: m.callId, content: m.content };
    case 'assistant':
      return trlAssistant(m);
  }
}

/**
 * Where the completion starts: the trailing run of trainable assistant messages, provided no trainable message
 * comes before it (nothing else could then be learned). Undefined when the trainable messages are not all there.
 */
export function completionStart(messages: SampleMessage[]): number | undefined {
  let start = messages.length;
  while (start > 0) {
    const m = messages[start - 1];
    if (m?.role !== 'assistant' || !m.train) break;
    start--;
  }
  if (start === messages.length || start === 0) return undefined;
  const earlier = messages.slice(0, start).some((m) => m.role === 'assistant' && m.train);
  return earlier ? undefined : start;
}

export type TrlShape = 'auto' | 'messages' | 'prompt-completion';

const trainsAll =
  'some assistant messages are marked not to train, but a TRL messages row has no per-message mask: all are trained';

/**
 * A TRL row of the given shape. `auto` picks prompt–completion whenever it expresses the train flags exactly; a
 * caller that needs every row of a file in one shape (one dataset cannot mix them) can force either.
 */
export function renderTrl(sample: Sample, shape: TrlShape = 'auto'): Rendered {
  if (!hasTrainable(sample)) return { skip: nothingToTrain };
  const raw = rawCallReason(sample, 'TRL needs them as an object');
  if (raw) return { skip: raw };
  const tools = sample.tools.map(functionTool);
  const start = shape === 'messages' ? undefined : completionStart(sample.messages);
  if (start !== undefined) {
    return {
      row: {
        prompt: sample.messages.slice(0, start).map(trlMessage),
        completion: sample.messages.slice(start).map(trlMessage),
        tools,
      },
    };
  }
  if (shape === 'prompt-completion') {
    return {
      skip: 'the messages to train are not only the final assistant messages, so no prompt–completion split',
    };
  }
  const masked = sample.messages.some((m) => m.role === 'assistant' && !m.train);
  return withWarnings({ messages: sample.messages.map(trlMessage), tools }, [masked ? trainsAll : undefined]);
}

export const trl: Format = {
  name: 'trl',
  render: (sample) => renderTrl(sample),
};
