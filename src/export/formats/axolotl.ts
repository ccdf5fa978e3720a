// axolotl `type: chat_template` rows: OpenAI-shaped messages, each with the `train` flag axolotl's
// `message_field_training` reads, and a `tools` list.
import type { Format, Sample, SampleMessage } from '../sample.js';
import { argumentsText, hasTrainable, nothingToTrain, rawCallReason } from './common.js';

function message(m: SampleMessage): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content, train: false };
    case 'tool':
      return { role: 'tool', tool_call_id: m.callId, name: m.name, content: m.content, train: false };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        // axolotl's default `field_thinking`.
        ...(m.reasoning ? { reasoning_content: m.reasoning } : {}),
        ...(m.calls.length
          ? {
              tool_calls: m.calls.map((c) => ({
                id: c.id,
                type: 'function',
                // A string, which axolotl parses back: as objects, `datasets` fails to cast a column whose argument
                // names carry different types across rows (axolotl's docs say so).
                function: { name: c.name, arguments: argumentsText(c) },
              })),
            }
          : {}),
        train: m.train,
      };
  }
}

export const axolotl: Format = {
  name: 'axolotl',
  render(sample: Sample) {
    if (!hasTrainable(sample)) return { skip: nothingToTrain };
    // axolotl json.loads string arguments and raises on one that does not parse, failing the whole dataset.
    const raw = rawCallReason(sample, 'axolotl parses every arguments string and fails on this one');
    if (raw) return { skip: raw };
    const tools = sample.tools.map((t) => ({
      type: 'function',
      // `parameters` as a string for the same casting reason; axolotl parses it back too.
      function: { name: t.name, description: t.description, parameters: JSON.stringify(t.parameters) },
    }));
    return { row: { messages: sample.messages.map(message), tools } };
  },
};
