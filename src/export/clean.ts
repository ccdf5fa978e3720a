import type { AssistantMessage, Sample, SampleMessage } from './sample.js';

/** What redaction needs from a redactor (see redact.ts): every string of a sample goes through it. */
export interface Redacting {
  redactText(text: string): string;
  redactValue(value: unknown): unknown;
  counts(): Record<string, number>;
  /** A first pass over what is exported, before any row: learns the people's names to redact (redact/names.ts). */
  learnNames?(value: unknown): void;
}

function assistant(redactor: Redacting, message: AssistantMessage): AssistantMessage {
  return {
    ...message,
    content: redactor.redactText(message.content),
    ...(message.reasoning !== undefined ? { reasoning: redactor.redactText(message.reasoning) } : {}),
    calls: message.calls.map((call) => ({
      ...call,
      arguments: redactor.redactValue(call.arguments),
      ...(call.raw !== undefined ? { raw: redactor.redactText(call.raw) } : {}),
    })),
  };
}

function message(redactor: Redacting, m: SampleMessage): SampleMessage {
  if (m.role === 'assistant') return assistant(redactor, m);
  return { ...m, content: redactor.redactText(m.content) };
}

/**
 * A copy of the sample with every text a trainer would see redacted: messages, reasoning, call arguments (values,
 * deep), tool results, the preference answers. Tool definitions are ours (the catalogue) or inferred from argument
 * *names*, so they are left as they are. The sample given is not changed, nor the store it came from.
 */
export function redactSample(redactor: Redacting, sample: Sample): Sample {
  return {
    ...sample,
    messages: sample.messages.map((m) => message(redactor, m)),
    ...(sample.preference
      ? {
          preference: {
            chosen: assistant(redactor, sample.preference.chosen),
            rejected: assistant(redactor, sample.preference.rejected),
          },
        }
      : {}),
  };
}
