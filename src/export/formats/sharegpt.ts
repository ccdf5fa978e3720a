// ShareGPT as LLaMA-Factory reads it (`formatting: sharegpt`): `{conversations: [{from, value}], system, tools}`.
// Its converter drops any row whose turns do not alternate human|observation, gpt|function_call, starting with
// the former and ending with the latter, so the renderer shapes the turns to that or skips the sample.
import { basename, dirname, join } from 'node:path';
import type { AssistantMessage, Format, Rendered, Sample, SampleMessage } from '../sample.js';
import { hasTrainable, nothingToTrain, rawCallReason, reasoningDropped, withWarnings } from './common.js';

type From = 'human' | 'gpt' | 'function_call' | 'observation';
interface Turn {
  from: From;
  value: string;
}

/** What LLaMA-Factory's own OpenAI-style converter puts between parallel results merged into one observation. */
export const resultSeparator = '\n</tool_response>\n<tool_response>\n';

const textBesideCall =
  'assistant text beside a tool call dropped: a ShareGPT function_call turn holds only the calls';
const lastTurnOnly =
  'only the last turn is marked to train: LLaMA-Factory trains every turn unless mask_history is true';
const trainsAll =
  'some assistant messages are marked not to train, but LLaMA-Factory trains every gpt and function_call turn';

/** A maximal run of messages that becomes one turn: consecutive messages of the same role. */
function runs(messages: SampleMessage[]): SampleMessage[][] {
  const out: SampleMessage[][] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (last?.[0]?.role === m.role) last.push(m);
    else out.push([m]);
  }
  return out;
}

/** One model turn from consecutive assistant messages (only the last of them can hold calls: each call is answered). */
function modelTurn(run: AssistantMessage[]): { turn?: Turn; textDropped: boolean } {
  const text = run
    .map((m) => m.content)
    .filter((c) => c !== '')
    .join('\n\n');
  const calls = run.flatMap((m) => m.calls).map((c) => ({ name: c.name, arguments: c.arguments }));
  if (calls.length) {
    // One call is an object, parallel calls a list: what FunctionFormatter parses.
    const value = JSON.stringify(calls.length === 1 ? calls[0] : calls);
    return { turn: { from: 'function_call', value }, textDropped: text !== '' };
  }
  return { turn: text === '' ? undefined : { from: 'gpt', value: text }, textDropped: false };
}

const odd: From[] = ['human', 'observation'];

function render(sample: Sample): Rendered {
  if (!hasTrainable(sample)) return { skip: nothingToTrain };
  const raw = rawCallReason(sample, 'ShareGPT needs them as an object');
  if (raw) return { skip: raw };
  let system = '';
  const turns: Turn[] = [];
  let textDropped = false;
  for (const run of runs(sample.messages)) {
    const role = run[0]?.role;
    if (role === 'system') system = run.map((m) => m.content).join('\n\n');
    else if (role === 'user') turns.push({ from: 'human', value: run.map((m) => m.content).join('\n\n') });
    else if (role === 'tool')
      turns.push({ from: 'observation', value: run.map((m) => m.content).join(resultSeparator) });
    else {
      const made = modelTurn(run as AssistantMessage[]);
      if (!made.turn) return { skip: 'an assistant message has neither text nor tool calls' };
      turns.push(made.turn);
      textDropped ||= made.textDropped;
    }
  }
  for (const [i, turn] of turns.entries()) {
    if (odd.includes(turn.from) !== (i % 2 === 0)) {
      const previous = turns[i - 1]?.from ?? 'the start';
      return { skip: `${turn.from} follows ${previous}: ShareGPT turns must alternate` };
    }
  }
  if (turns.length % 2 !== 0)
    return { skip: 'the conversation does not end with a gpt or function_call turn' };

  const row = {
    conversations: turns,
    system,
    tools: JSON.stringify(
      sample.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ),
  };
  return withWarnings(row, [
    textDropped ? textBesideCall : undefined,
    reasoningDropped(sample, 'ShareGPT'),
    maskWarning(sample.messages),
  ]);
}

/** LLaMA-Factory has no per-turn flag: say what its two settings would make of the marked messages. */
function maskWarning(messages: SampleMessage[]): string | undefined {
  const assistants = messages.flatMap((m, i) => (m.role === 'assistant' ? [{ m, i }] : []));
  if (assistants.every(({ m }) => m.train)) return undefined;
  // The last turn is the trailing run of assistant messages.
  let lastRun = messages.length;
  while (lastRun > 0 && messages[lastRun - 1]?.role === 'assistant') lastRun--;
  return assistants.every(({ m, i }) => m.train === i >= lastRun) ? lastTurnOnly : trainsAll;
}

export const sharegpt: Format = {
  name: 'sharegpt',
  render,
  companion(outFile) {
    const file = basename(outFile);
    const entry = {
      file_name: file,
      formatting: 'sharegpt',
      columns: { messages: 'conversations', system: 'system', tools: 'tools' },
      // LLaMA-Factory's defaults, spelled out so the file reads the same if they ever change.
      tags: {
        role_tag: 'from',
        content_tag: 'value',
        user_tag: 'human',
        assistant_tag: 'gpt',
        observation_tag: 'observation',
        function_tag: 'function_call',
        system_tag: 'system',
      },
    };
    const name = file.replace(/\.[^.]*$/, '');
    return {
      file: join(dirname(outFile), 'dataset_info.json'),
      content: `${JSON.stringify({ [name]: entry }, null, 2)}\n`,
    };
  },
};
