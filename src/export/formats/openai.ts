// OpenAI chat fine-tuning JSONL (also read by Azure OpenAI, Together, Predibase): one `{messages, tools}` per line.
import type { Format, Sample, SampleMessage } from '../sample.js';
import {
  argumentsText,
  functionTool,
  hasTrainable,
  nothingToTrain,
  rawCallReason,
  reasoningDropped,
  withWarnings,
} from './common.js';

function message(m: SampleMessage): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      // The fine-tuning schema's tool message has no `name` or error flag; the content is what the model read.
      return { role: 'tool', tool_call_id: m.callId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        // OpenAI's own tool-calling examples leave `content` out of a message that only calls tools.
        ...(m.content !== '' || m.calls.length === 0 ? { content: m.content } : {}),
        ...(m.calls.length
          ? {
              tool_calls: m.calls.map((c) => ({
                id: c.id,
                type: 'function',
                // `arguments` is the string the model generated, which OpenAI documents as possibly invalid JSON.
                function: { name: c.name, arguments: argumentsText(c) },
              })),
            }
          : {}),
        weight: m.train ? 1 : 0,
      };
  }
}

export const openai: Format = {
  name: 'openai',
  render(sample: Sample) {
    if (!hasTrainable(sample)) return { skip: nothingToTrain };
    // The fine-tuning upload validates `arguments` as JSON; one bad line fails the whole file.
    const raw = rawCallReason(sample, 'the fine-tuning API validates them');
    if (raw) return { skip: raw };
    // `parallel_tool_calls` is left to its default (true): every agent we read can call tools in parallel, and
    // false would train the model under a tool preamble it will not see when it is used.
    const row = {
      messages: sample.messages.map(message),
      ...(sample.tools.length ? { tools: sample.tools.map(functionTool) } : {}),
    };
    return withWarnings(row, [reasoningDropped(sample, 'the OpenAI format')]);
  },
};
