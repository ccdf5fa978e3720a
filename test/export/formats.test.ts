import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { axolotl } from '../../src/export/formats/axolotl.js';
import { dpo } from '../../src/export/formats/dpo.js';
import { FormatNameError, formatFor, formatNames, formats } from '../../src/export/formats/index.js';
import { openai } from '../../src/export/formats/openai.js';
import { resultSeparator, sharegpt } from '../../src/export/formats/sharegpt.js';
import { renderTrl, trl } from '../../src/export/formats/trl.js';
import type { Format, Rendered, Sample } from '../../src/export/sample.js';
import { axolotlProblems, dpoProblems, openaiProblems, sharegptProblems, trlProblems } from './properties.js';
import { allSamples, byName, preferenceSamples, sftSamples } from './samples.js';

const golden = join(dirname(fileURLToPath(import.meta.url)), 'golden');

function row(rendered: Rendered): Record<string, unknown> {
  if ('skip' in rendered) throw new Error(`skipped: ${rendered.skip}`);
  return rendered.row as Record<string, unknown>;
}

const render = (format: Format, name: string) => format.render(byName(name));
const warnings = (rendered: Rendered) => ('warnings' in rendered ? (rendered.warnings ?? []) : []);

const bashTool = {
  type: 'function',
  function: {
    name: 'Bash',
    description: 'Run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

describe('openai', () => {
  it('renders the notes’ running example: arguments as a JSON string, weight 0|1 on every assistant message', () => {
    const out = row(render(openai, 'text-and-call'));
    expect(out.messages).toEqual([
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'List files' },
      {
        role: 'assistant',
        content: "I'll list them.",
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
        ],
        weight: 0,
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt\nb.txt' },
      { role: 'assistant', content: 'Two files.', weight: 1 },
    ]);
    expect((out.tools as unknown[])[0]).toEqual(bashTool);
    expect(out).not.toHaveProperty('parallel_tool_calls');
  });

  it('leaves content out of a message that only calls tools, and tools out of a sample that has none', () => {
    const messages = row(render(openai, 'call-only')).messages as Record<string, unknown>[];
    expect(messages[1]).not.toHaveProperty('content');
    expect(messages[1]?.tool_calls).toHaveLength(1);
    expect(row(render(openai, 'plain-chat'))).not.toHaveProperty('tools');
  });

  it('skips a sample whose arguments never parsed: the upload validates them as JSON', () => {
    expect(render(openai, 'raw-arguments')).toEqual({
      skip: "a tool call's arguments are not valid JSON (the fine-tuning API validates them)",
    });
  });

  it('drops reasoning with a warning, and skips a sample with nothing to train', () => {
    const rendered = render(openai, 'reasoning');
    expect(JSON.stringify(row(rendered))).not.toContain('Euler');
    expect(warnings(rendered)).toEqual(['reasoning dropped: the OpenAI format has no field for it']);
    expect(render(openai, 'nothing-to-train')).toEqual({ skip: 'no assistant message is marked to train' });
  });
});

describe('trl', () => {
  it('writes prompt–completion when only the final assistant message is trained', () => {
    expect(row(render(trl, 'text-and-call'))).toEqual({
      prompt: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'List files' },
        {
          role: 'assistant',
          content: "I'll list them.",
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: { command: 'ls' } } },
          ],
        },
        { role: 'tool', name: 'Bash', tool_call_id: 'call_1', content: 'a.txt\nb.txt' },
      ],
      completion: [{ role: 'assistant', content: 'Two files.' }],
      tools: [
        bashTool,
        ...byName('text-and-call')
          .tools.slice(1)
          .map(() => expect.anything()),
      ],
    });
    const endsWithCall = row(render(trl, 'ends-with-call'));
    expect(endsWithCall.completion).toEqual([
      {
        role: 'assistant',
        content: 'Checking git.',
        tool_calls: [
          {
            id: 'e1',
            type: 'function',
            function: { name: 'Bash', arguments: { command: 'git status --short' } },
          },
        ],
      },
    ]);
  });

  it('writes messages when every assistant message is trained, and warns when some are not but earlier ones are', () => {
    const all = render(trl, 'error-result');
    expect(row(all)).toHaveProperty('messages');
    expect(warnings(all)).toEqual([]);
    const mixed = render(trl, 'mixed-train');
    expect(row(mixed)).toHaveProperty('messages');
    expect(warnings(mixed)).toEqual([
      'some assistant messages are marked not to train, but a TRL messages row has no per-message mask: all are trained',
    ]);
  });

  it('can be held to one shape, so a file never mixes them', () => {
    expect(renderTrl(byName('mixed-train'), 'prompt-completion')).toEqual({
      skip: 'the messages to train are not only the final assistant messages, so no prompt–completion split',
    });
    const forced = renderTrl(byName('text-and-call'), 'messages');
    expect(row(forced)).toHaveProperty('messages');
    expect(warnings(forced)).toHaveLength(1);
    expect(row(renderTrl(byName('plain-chat'), 'prompt-completion'))).toHaveProperty('completion');
  });

  it('keeps reasoning as reasoning_content and skips arguments that have no object form', () => {
    const completion = row(render(trl, 'reasoning')).completion as Record<string, unknown>[];
    expect(completion[0]?.reasoning_content).toBe('It is M31, which Euler proved prime in 1772.');
    expect(render(trl, 'raw-arguments')).toEqual({
      skip: "a tool call's arguments are not valid JSON (TRL needs them as an object)",
    });
  });
});

describe('sharegpt', () => {
  it('renders the notes’ running example: the text beside the call is dropped with a warning', () => {
    const rendered = render(sharegpt, 'text-and-call');
    const out = row(rendered);
    expect(out.conversations).toEqual([
      { from: 'human', value: 'List files' },
      { from: 'function_call', value: '{"name":"Bash","arguments":{"command":"ls"}}' },
      { from: 'observation', value: 'a.txt\nb.txt' },
      { from: 'gpt', value: 'Two files.' },
    ]);
    expect(out.system).toBe('You are a coding agent.');
    expect(JSON.parse(out.tools as string)[0]).toEqual(bashTool.function);
    expect(warnings(rendered)).toEqual([
      'assistant text beside a tool call dropped: a ShareGPT function_call turn holds only the calls',
      'only the last turn is marked to train: LLaMA-Factory trains every turn unless mask_history is true',
    ]);
  });

  it('writes parallel calls as a list and joins their results into one observation', () => {
    const turns = row(render(sharegpt, 'parallel-calls')).conversations as { from: string; value: string }[];
    expect(turns.map((t) => t.from)).toEqual(['human', 'function_call', 'observation', 'gpt']);
    expect(JSON.parse(turns[1]?.value ?? '')).toEqual([
      { name: 'Grep', arguments: { pattern: 'function login' } },
      { name: 'Read', arguments: { file_path: 'README.md', limit: 40 } },
    ]);
    expect(turns[2]?.value).toBe(
      `src/auth.ts:12:export function login(${resultSeparator}# todo-api\nLogin with POST /login.`,
    );
  });

  it('merges consecutive user messages and keeps error results as the text the model read', () => {
    const merged = row(render(sharegpt, 'consecutive-users')).conversations;
    expect(merged).toEqual([
      { from: 'human', value: "Fix the bug in app.ts\n\nIt's in the login handler." },
      { from: 'gpt', value: 'Looking at the login handler now.' },
    ]);
    const turns = row(render(sharegpt, 'error-result')).conversations as { value: string }[];
    expect(turns[2]?.value).toBe('FAIL test/app.test.ts\nExpected 200, received 500');
  });

  it('skips what cannot alternate or has no object arguments', () => {
    expect(render(sharegpt, 'tool-then-user')).toEqual({
      skip: 'human follows observation: ShareGPT turns must alternate',
    });
    expect(render(sharegpt, 'raw-arguments')).toEqual({
      skip: "a tool call's arguments are not valid JSON (ShareGPT needs them as an object)",
    });
  });

  it('ends on a function_call when the answer is a call, and says what the train flags become', () => {
    const turns = row(render(sharegpt, 'ends-with-call')).conversations as { from: string }[];
    expect(turns.at(-1)?.from).toBe('function_call');
    expect(warnings(render(sharegpt, 'mixed-train'))).toEqual([
      'reasoning dropped: ShareGPT has no field for it',
      'some assistant messages are marked not to train, but LLaMA-Factory trains every gpt and function_call turn',
    ]);
    expect(warnings(render(sharegpt, 'error-result'))).toEqual([
      'assistant text beside a tool call dropped: a ShareGPT function_call turn holds only the calls',
    ]);
  });

  it('registers the output in a dataset_info.json beside it', () => {
    const companion = sharegpt.companion?.('out/my_sessions.jsonl');
    expect(companion?.file).toBe(join('out', 'dataset_info.json'));
    expect(JSON.parse(companion?.content ?? '')).toMatchObject({
      my_sessions: {
        file_name: 'my_sessions.jsonl',
        formatting: 'sharegpt',
        columns: { messages: 'conversations', system: 'system', tools: 'tools' },
      },
    });
  });
});

describe('axolotl', () => {
  it('renders the notes’ running example with a train flag on every message and JSON-string arguments', () => {
    const out = row(render(axolotl, 'text-and-call'));
    expect(out.messages).toEqual([
      { role: 'system', content: 'You are a coding agent.', train: false },
      { role: 'user', content: 'List files', train: false },
      {
        role: 'assistant',
        content: "I'll list them.",
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
        ],
        train: false,
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'Bash', content: 'a.txt\nb.txt', train: false },
      { role: 'assistant', content: 'Two files.', train: true },
    ]);
    const tool = (out.tools as { function: { parameters: string } }[])[0];
    expect(JSON.parse(tool?.function.parameters ?? '')).toEqual(bashTool.function.parameters);
  });

  it('keeps reasoning as reasoning_content and skips arguments axolotl would fail to parse', () => {
    const messages = row(render(axolotl, 'reasoning')).messages as Record<string, unknown>[];
    expect(messages[1]?.reasoning_content).toBe('It is M31, which Euler proved prime in 1772.');
    expect('skip' in render(axolotl, 'raw-arguments')).toBe(true);
  });
});

describe('dpo', () => {
  it('writes the context as prompt, the original turn as chosen and the replayed one as rejected', () => {
    const out = row(render(dpo, 'pref-text-vs-call'));
    expect(out.prompt).toHaveLength(4);
    expect(out.chosen).toEqual([
      { role: 'assistant', content: 'A typo: `expres` should be `express` on line 3 of src/app.ts.' },
    ]);
    expect(out.rejected).toEqual([
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'q1',
            type: 'function',
            function: { name: 'Bash', arguments: { command: 'rm -rf node_modules && npm install' } },
          },
        ],
      },
    ]);
  });

  it('skips samples without a pair and pairs that differ only in call ids; warns when only reasoning differs', () => {
    expect(render(dpo, 'text-and-call')).toEqual({
      skip: 'no preference pair: dpo rows come from a replay run',
    });
    expect(render(dpo, 'pref-same')).toEqual({ skip: 'the original and replayed turns are the same' });
    expect(warnings(render(dpo, 'pref-reasoning-only'))).toHaveLength(1);
  });
});

describe('formatFor', () => {
  it('finds each format by its name and refuses others', () => {
    for (const name of formatNames) expect(formatFor(name).name).toBe(name);
    expect(() => formatFor('alpaca')).toThrow(FormatNameError);
    expect(() => formatFor('toString')).toThrow(FormatNameError);
  });
});

/** Every sample through a format: the rows it writes must pass the format's checks. */
function rowsOf(format: Format, samples: Sample[]): { sample: Sample; row: unknown }[] {
  return samples.flatMap((sample) => {
    const rendered = format.render(sample);
    return 'row' in rendered ? [{ sample, row: rendered.row }] : [];
  });
}

describe('properties over every sample', () => {
  it('openai: roles, call ids answered, arguments JSON, weight only on assistant messages and from train', () => {
    const rows = rowsOf(openai, allSamples);
    // Skipped: the sample with nothing to train, and the one with arguments that are not JSON.
    expect(rows).toHaveLength(sftSamples.length - 2);
    for (const { sample, row } of rows) expect(openaiProblems(row, sample), sample.id).toEqual([]);
  });

  it('sharegpt: turns alternate, even count, calls parse', () => {
    const rows = rowsOf(sharegpt, allSamples);
    expect(rows.length).toBeGreaterThan(8);
    for (const { sample, row } of rows) expect(sharegptProblems(row), sample.id).toEqual([]);
  });

  it('trl: arguments are objects, tool messages carry name and call id', () => {
    for (const { sample, row } of rowsOf(trl, allSamples)) expect(trlProblems(row), sample.id).toEqual([]);
  });

  it('axolotl: train on every message, from the sample', () => {
    for (const { sample, row } of rowsOf(axolotl, allSamples))
      expect(axolotlProblems(row, sample), sample.id).toEqual([]);
  });

  it('dpo: prompt, one chosen and one rejected assistant message that differ', () => {
    const rows = rowsOf(dpo, allSamples);
    expect(rows).toHaveLength(preferenceSamples.length - 1);
    for (const { sample, row } of rows) expect(dpoProblems(row), sample.id).toEqual([]);
  });

  it('every rendered row is one JSON line whatever the text holds', () => {
    for (const format of Object.values(formats)) {
      for (const { row } of rowsOf(format, allSamples)) expect(JSON.stringify(row)).not.toContain('\n');
    }
  });
});

describe('the property checks', () => {
  it('catch broken OpenAI rows', () => {
    const sample = byName('text-and-call');
    const good = row(openai.render(sample)) as { messages: Record<string, unknown>[] };
    const broken = (change: (messages: Record<string, unknown>[]) => void) => {
      const copy = structuredClone(good);
      change(copy.messages);
      return openaiProblems(copy, sample);
    };
    expect(broken((m) => Object.assign(m[3] ?? {}, { tool_call_id: 'call_9' }))).toContain(
      'message 3: tool_call_id call_9 answers no earlier call',
    );
    expect(broken((m) => m.splice(3, 1))).toContain('call call_1 is never answered');
    expect(broken((m) => Object.assign(m[1] ?? {}, { weight: 1 }))).toContain(
      'message 1: unknown key weight',
    );
    expect(
      broken((m) => {
        const calls = m[2]?.tool_calls as { function: { arguments: string } }[];
        if (calls[0]) calls[0].function.arguments = '{command: ls}';
      }),
    ).toContain('message 2: arguments of call_1 are not a JSON object in a string');
    expect(broken((m) => Object.assign(m[4] ?? {}, { weight: 0 }))).toContain(
      'message 4: weight differs from the train flag',
    );
  });

  it('catch ShareGPT rows LLaMA-Factory would drop', () => {
    const good = row(sharegpt.render(byName('text-and-call'))) as { conversations: unknown[] };
    expect(sharegptProblems({ ...good, conversations: good.conversations.slice(0, 3) })).toEqual([
      'odd number of turns',
    ]);
    const swapped = [good.conversations[1], good.conversations[0], ...good.conversations.slice(2)];
    expect(sharegptProblems({ ...good, conversations: swapped })).toHaveLength(2);
  });
});

/** Compares with the golden file byte for byte, or rewrites it when UPDATE_GOLDEN=1. */
function expectGolden(file: string, actual: string): void {
  const path = join(golden, file);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(golden, { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`${path} is missing: run with UPDATE_GOLDEN=1 to write it`);
  expect(actual, `${file} differs from the golden file (UPDATE_GOLDEN=1 rewrites it)`).toBe(
    readFileSync(path, 'utf8'),
  );
}

describe('golden files', () => {
  for (const format of Object.values(formats)) {
    it(`${format.name}.jsonl`, () => {
      const lines = rowsOf(format, allSamples).map(({ row }) => `${JSON.stringify(row)}\n`);
      expectGolden(`${format.name}.jsonl`, lines.join(''));
    });
  }

  it('companion files', () => {
    expectGolden('sharegpt.dataset_info.json', sharegpt.companion?.('sessions.jsonl').content ?? '');
  });
});
