// `export --max-tokens N`: every row made to fit a trainer's sequence length, never by cutting what it learns.
// Model-turn and user-turn rows keep the system prompt, the tools and the trained turn(s) and lose their oldest
// context first; session rows are split into rows that fit, each training its own stretch of the session with as
// much of what came before as fits as untrained context. A cut is said in the row, as the agents say a compaction:
// a user message at the cut, so every row still begins with a user message. Pure: the counter is handed in.
import { sameJson } from '../model/canonical-json.js';
import { functionTool } from './formats/common.js';
import type { AssistantMessage, Sample, SampleMessage, SampleTool, UserMessage } from './sample.js';

/** Tokens of a text in the tokenizer being trained with. */
export type Count = (text: string) => number;

/**
 * What a chat template adds per message (role markers, separators): ChatML's `<|im_start|>role\n…<|im_end|>\n`
 * is 4–5 tokens in most vocabularies. An estimate: the budget is meant to be set with some room.
 */
export const perMessage = 5;

/** The row's text per message, as a trainer tokenizes it (calls as their name and JSON arguments). */
export function messageText(message: SampleMessage): string {
  if (message.role === 'assistant') {
    const calls = message.calls.map((call) => `${call.name} ${call.raw ?? JSON.stringify(call.arguments)}`);
    return [message.reasoning ?? '', message.content, ...calls].filter((part) => part !== '').join('\n');
  }
  return message.content;
}

/**
 * Tokens of the tool list as chat templates render it: each tool as the JSON of its OpenAI function form
 * (`{"type": "function", "function": {name, description, parameters}}`, what Qwen's and Llama's templates print).
 */
export function toolTokens(tools: readonly SampleTool[], count: Count): number {
  if (tools.length === 0) return 0;
  return count(toolsText(tools));
}

/** A session's rows share its tool list: its text is made once. */
const toolsTexts = new WeakMap<readonly SampleTool[], string>();
/** The last list made into text: the next session's list is most often the same values (the same catalogue). */
let last: { tools: readonly SampleTool[]; text: string } | undefined;

/** The text `toolTokens` counts (a non-empty list). */
export function toolsText(tools: readonly SampleTool[]): string {
  let text = toolsTexts.get(tools);
  if (text === undefined) {
    // sameJson: the same values with their keys in the same order, so the same text (and no string is built)
    text = last && sameJson(tools, last.tools) ? last.text : JSON.stringify(tools.map(functionTool));
    toolsTexts.set(tools, text);
    last = { tools, text };
  }
  return text;
}

export function messageTokens(message: SampleMessage, count: Count): number {
  return count(messageText(message)) + perMessage;
}

/** The whole row: tools, messages, and a preference sample's longer answer (a trainer takes one at a time). */
export function sampleTokens(sample: Sample, count: Count): number {
  let total = toolTokens(sample.tools, count);
  for (const message of sample.messages) total += messageTokens(message, count);
  if (sample.preference)
    total += Math.max(
      messageTokens(sample.preference.chosen, count),
      messageTokens(sample.preference.rejected, count),
    );
  return total;
}

export type Fitted =
  | { outcome: 'fits'; samples: [Sample]; tokens: number[] }
  | { outcome: 'trimmed'; samples: [Sample]; tokens: number[]; left: number }
  | { outcome: 'split'; samples: Sample[]; tokens: number[] }
  | { outcome: 'dropped'; why: string };

/** The user message that marks a cut: how much was left out and why. */
export function cutNote(left: number, budget: number): string {
  return `[${left} earlier message(s) of this conversation were left out here to fit ${budget} tokens.]`;
}

/** What opens a row whose recorded context does not begin with a user message (a compaction summary first). */
export const openingNote = '[The earlier part of this conversation is not in this row.]';

/**
 * Every row begins with a user message (after its system prompt): trainers that check turn order (LLaMA-Factory,
 * OpenAI's) refuse a row that opens with the model, and a model should not learn to speak first. Where the
 * recorded context opens with the model (opencode's compaction summary), a user message says the start is
 * elsewhere. Undefined when the row already opens with a user message.
 */
export function opened(sample: Sample): Sample | undefined {
  const at = sample.messages[0]?.role === 'system' ? 1 : 0;
  const first = sample.messages[at];
  if (first?.role === 'user' || (first === undefined && !sample.preference)) return undefined;
  const messages = [...sample.messages];
  messages.splice(at, 0, { role: 'user', content: openingNote });
  return { ...sample, messages };
}

/** The row with `system` as its system prompt (`--system-prompt FILE`: the one the trained model will be run with). */
export function withSystem(sample: Sample, system: string): Sample {
  const rest = sample.messages[0]?.role === 'system' ? sample.messages.slice(1) : sample.messages;
  return { ...sample, messages: [{ role: 'system', content: system }, ...rest] };
}

/** Stretches of a conversation that stay together: a user message, or an assistant message with its results. */
function unitsOf(messages: readonly SampleMessage[], from: number, to: number): [number, number][] {
  const units: [number, number][] = [];
  let at = from;
  while (at < to) {
    let end = at + 1;
    if (messages[at]?.role === 'assistant') while (end < to && messages[end]?.role === 'tool') end++;
    units.push([at, end]);
    at = end;
  }
  return units;
}

interface Costs {
  fixed: number;
  of: number[];
  /** `prefix[i]`: the cost of messages before i. */
  prefix: number[];
}

const between = (costs: Costs, from: number, to: number) =>
  (costs.prefix[to] as number) - (costs.prefix[from] as number);

/**
 * The row of `messages[start, end)` (the part that must stay, its train flags kept) after `system`, with the most
 * recent context before `start` that fits (untrained), a cut note where context was left out or the row would not
 * begin with a user message. Undefined when even the part that must stay does not fit.
 */
function window(
  messages: readonly SampleMessage[],
  bodyStart: number,
  start: number,
  end: number,
  costs: Costs,
  budget: number,
  count: Count,
): { messages: SampleMessage[]; tokens: number; left: number } | undefined {
  const sum = (from: number, to: number) => between(costs, from, to);
  const system = messages.slice(0, bodyStart);
  let used = costs.fixed + sum(0, bodyStart) + sum(start, end);
  // Context, newest first, whole units only.
  const context = unitsOf(messages, bodyStart, start);
  let keepFrom = start;
  const noteCost = (left: number) => count(cutNote(left, budget)) + perMessage;
  for (let u = context.length - 1; u >= 0; u--) {
    const [from, to] = context[u] as [number, number];
    const left = from - bodyStart;
    const opensWithUser = messages[from]?.role === 'user';
    // What the row costs with this unit in: the unit, and a note unless nothing is left out and a user opens.
    const note = left > 0 || !opensWithUser ? noteCost(left) : 0;
    if (used + sum(from, to) + note > budget) break;
    used += sum(from, to);
    keepFrom = from;
  }
  const left = keepFrom - bodyStart;
  const first = messages[keepFrom];
  const needsNote = left > 0 || first?.role !== 'user';
  let body: SampleMessage[] = messages
    .slice(keepFrom, end)
    .map((message, index) =>
      keepFrom + index < start && message.role === 'assistant' ? { ...message, train: false } : message,
    );
  if (needsNote) {
    const note = cutNote(left, budget);
    if (first?.role === 'user' && keepFrom < end) {
      // The cut said in the user message that now opens the row (two user messages in a row break alternation).
      const merged: UserMessage = { role: 'user', content: `${note}\n\n${first.content}` };
      used += count(merged.content) + perMessage - (costs.of[keepFrom] ?? 0);
      body = [merged, ...body.slice(1)];
    } else {
      used += noteCost(left);
      body = [{ role: 'user', content: note }, ...body];
    }
  }
  if (used > budget) return undefined;
  return { messages: [...system, ...body], tokens: used, left };
}

/** Where the part of a model-turn or user-turn row that must stay begins: its first trained turn. */
function trainedStart(messages: readonly SampleMessage[], bodyStart: number): number {
  const first = messages.findIndex((message) => message.role === 'assistant' && message.train);
  if (first === -1) return messages.length;
  let start = first;
  // The user message the trained turn answers stays with it (a user-turn row is trained from it on).
  while (start > bodyStart && messages[start - 1]?.role === 'user') start--;
  return start;
}

/** Makes `sample` fit `budget` tokens: as it is, trimmed, split (session rows), or dropped with the reason. */
export function fitToBudget(sample: Sample, budget: number, count: Count): Fitted {
  const messages = sample.messages;
  const of = messages.map((message) => messageTokens(message, count));
  const prefix = [0];
  for (const cost of of) prefix.push((prefix.at(-1) as number) + cost);
  const costs: Costs = { fixed: toolTokens(sample.tools, count), of, prefix };
  if (sample.preference)
    costs.fixed += Math.max(
      messageTokens(sample.preference.chosen, count),
      messageTokens(sample.preference.rejected, count),
    );
  const total = costs.fixed + (prefix.at(-1) as number);
  if (total <= budget) return { outcome: 'fits', samples: [sample], tokens: [total] };
  const bodyStart = messages[0]?.role === 'system' ? 1 : 0;
  const preamble = costs.fixed + between(costs, 0, bodyStart);
  if (preamble >= budget)
    return {
      outcome: 'dropped',
      why: `over --max-tokens ${budget}: the tools and system prompt alone are ${preamble} tokens`,
    };

  if (sample.unit !== 'session' || sample.preference) {
    // A preference sample's messages are all prompt: the answers (in `fixed`) are what must stay.
    const start = sample.preference ? messages.length : trainedStart(messages, bodyStart);
    const row = window(messages, bodyStart, start, messages.length, costs, budget, count);
    if (!row)
      return {
        outcome: 'dropped',
        why: `over --max-tokens ${budget} with all earlier context left out (the trained turn alone is longer)`,
      };
    return {
      outcome: 'trimmed',
      samples: [{ ...sample, messages: row.messages }],
      tokens: [row.tokens],
      left: row.left,
    };
  }

  // A session row: consecutive stretches of its units, each as long as fits with a cut note before it, each the
  // trained part of a row of its own with the context before it that fits.
  const units = unitsOf(messages, bodyStart, messages.length);
  const rows: Sample[] = [];
  const tokens: number[] = [];
  let tooLong = 0;
  let u = 0;
  while (u < units.length) {
    const from = (units[u] as [number, number])[0];
    // The least a row of units u..v costs (the note, no context): extended while it fits, then made for real.
    const least =
      costs.fixed +
      between(costs, 0, bodyStart) +
      (from > bodyStart || messages[from]?.role !== 'user'
        ? count(cutNote(from - bodyStart, budget)) + perMessage
        : 0);
    let v = u;
    while (v < units.length && least + between(costs, from, (units[v] as [number, number])[1]) <= budget) v++;
    let best: ReturnType<typeof window>;
    let next = v;
    for (; next > u; next--) {
      best = window(
        messages,
        bodyStart,
        from,
        (units[next - 1] as [number, number])[1],
        costs,
        budget,
        count,
      );
      if (best) break;
    }
    if (!best) {
      // One unit longer than the budget on its own: left out of every row, and said.
      tooLong++;
      u++;
      continue;
    }
    u = next;
    // A stretch is a row only if it trains something and ends with the model's turn.
    let last = best.messages.length;
    while (last > 0 && best.messages[last - 1]?.role !== 'assistant') last--;
    const kept = best.messages.slice(0, last);
    const trained = kept.some(
      (message) => message.role === 'assistant' && (message as AssistantMessage).train,
    );
    if (!trained) continue;
    rows.push({ ...sample, id: `${sample.id}#${rows.length + 1}`, messages: kept });
    let cost = costs.fixed;
    for (const message of kept) cost += messageTokens(message, count);
    tokens.push(cost);
  }
  if (rows.length === 0)
    return {
      outcome: 'dropped',
      why: `over --max-tokens ${budget}: no stretch of the session fits (${tooLong} turn(s) longer on their own)`,
    };
  return { outcome: 'split', samples: rows, tokens };
}

/** The 50th and 95th percentiles and the maximum of a list of counts (nearest rank). */
export function spread(values: readonly number[]): { p50: number; p95: number; max: number } {
  if (values.length === 0) return { p50: 0, p95: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number;
  return { p50: rank(0.5), p95: rank(0.95), max: sorted[sorted.length - 1] as number };
}
