// Small pieces every renderer shares. Pure functions, no I/O.
import type { AssistantMessage, Sample, SampleCall, SampleTool } from '../sample.js';

/** The tool definition OpenAI, TRL and axolotl read: the JSON Schema wrapped as a `function` tool. */
export function functionTool(tool: SampleTool): {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
} {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** The argument text as the model wrote it: the recorded text when it never parsed, else its JSON. */
export function argumentsText(call: SampleCall): string {
  return call.raw ?? JSON.stringify(call.arguments ?? {});
}

/** Every assistant turn a sample holds, the preference pair's included. */
function assistantTurns(sample: Sample): AssistantMessage[] {
  const turns = sample.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
  if (sample.preference) turns.push(sample.preference.chosen, sample.preference.rejected);
  return turns;
}

/**
 * Why a format that carries arguments as a JSON object (or parses them, as axolotl does) cannot take this sample:
 * a call whose arguments never parsed has no object form, and `{}` would put a call in the transcript that the
 * model never made (its tool result usually complains about the arguments). Stable text: reports count by it.
 */
export function rawCallReason(sample: Sample, why: string): string | undefined {
  const raw = assistantTurns(sample).some((m) => m.calls.some((c) => c.raw !== undefined));
  return raw ? `a tool call's arguments are not valid JSON (${why})` : undefined;
}

/** Whether any assistant message is marked to train: a row with none teaches nothing. */
export function hasTrainable(sample: Sample): boolean {
  return sample.messages.some((m) => m.role === 'assistant' && m.train);
}

export const nothingToTrain = 'no assistant message is marked to train';

/** The warning for a format with no place for reasoning, or undefined when there was none to drop. */
export function reasoningDropped(sample: Sample, format: string): string | undefined {
  return assistantTurns(sample).some((m) => m.reasoning)
    ? `reasoning dropped: ${format} has no field for it`
    : undefined;
}

/** A Rendered row, with `warnings` only when there are some (keeps golden files and callers simple). */
export function withWarnings(
  row: unknown,
  warnings: (string | undefined)[],
): { row: unknown; warnings?: string[] } {
  const kept = warnings.filter((w): w is string => w !== undefined);
  return kept.length ? { row, warnings: kept } : { row };
}
