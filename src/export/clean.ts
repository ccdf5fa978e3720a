import type { Scans } from './redact.js';
import type { AssistantMessage, Sample, SampleMessage } from './sample.js';

/** What redaction needs from a redactor (see redact.ts): every string of a sample goes through it. */
export interface Redacting {
  redactText(text: string): string;
  redactValue(value: unknown): unknown;
  counts(): Record<string, number>;
  /** A first pass over what is exported, before any row: learns the people's names to redact (redact/names.ts). */
  learnNames?(value: unknown): void;
  /** Findings of texts scanned on other threads (scan-thread.ts) to use instead of scanning them; undefined: none. */
  useScans?(scans: Scans | undefined): void;
}

/** Every string of a JSON-like value redactValue redacts: its strings and its object keys, deep. */
function valueTexts(value: unknown, into: string[]): void {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) valueTexts(item, into);
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      valueTexts(item, into);
    }
}

function assistantTexts(message: AssistantMessage, into: string[]): void {
  into.push(message.content);
  if (message.reasoning !== undefined) into.push(message.reasoning);
  for (const call of message.calls) {
    valueTexts(call.arguments, into);
    if (call.raw !== undefined) into.push(call.raw);
  }
}

/**
 * The texts redactSample gives its redactor, in the same order (repeats included): what a scan on another
 * thread is sent ahead of the sample (scan-thread.ts). Keep it beside redactSample: a text left out here is
 * only scanned later on the main thread.
 */
export function sampleTexts(sample: Sample): string[] {
  const into: string[] = [];
  for (const m of sample.messages) {
    if (m.role === 'assistant') assistantTexts(m, into);
    else into.push(m.content);
  }
  if (sample.preference) {
    assistantTexts(sample.preference.chosen, into);
    assistantTexts(sample.preference.rejected, into);
  }
  return into;
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
