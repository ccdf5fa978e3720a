// `export --max-tokens` (src/export/budget.ts): rows made to fit without ever cutting what they train. Counted here
// in characters, so every figure can be checked by hand; the e2e tests count with the real tokenizers.
import { describe, expect, it } from 'vitest';
import {
  cutNote,
  fitToBudget,
  opened,
  openingNote,
  perMessage,
  sampleTokens,
  spread,
  toolsText,
} from '../../src/export/budget.js';
import type { AssistantMessage, Sample, SampleMessage } from '../../src/export/sample.js';

const count = (text: string) => text.length;

const user = (content: string): SampleMessage => ({ role: 'user', content });
const assistant = (content: string, train = false, calls: string[] = []): AssistantMessage => ({
  role: 'assistant',
  content,
  calls: calls.map((id) => ({ id, name: 'Bash', arguments: { command: 'ls' } })),
  train,
});
const tool = (callId: string, content: string): SampleMessage => ({
  role: 'tool',
  callId,
  name: 'Bash',
  content,
  isError: false,
});

const sample = (messages: SampleMessage[], unit: Sample['unit'] = 'model-turn'): Sample => ({
  id: 's:1',
  session: 's',
  agent: 'claude-code',
  unit,
  messages,
  tools: [{ name: 'Bash', description: 'Runs a command.', parameters: { type: 'object' } }],
});

/** A step of an agent: its message with a call, and the call's result. */
const step = (n: number, train = false): SampleMessage[] => [
  assistant(`step ${n} `.padEnd(100, '.'), train, [`c${n}`]),
  tool(`c${n}`, `result ${n} `.padEnd(300, '.')),
];

/** What every fitted row must be, whatever the budget. */
function checkRow(row: Sample, budget: number): void {
  const body = row.messages[0]?.role === 'system' ? row.messages.slice(1) : row.messages;
  expect(body[0]?.role, JSON.stringify(body[0])).toBe('user');
  expect(row.messages.at(-1)?.role).toBe('assistant');
  expect(row.messages.filter((m) => m.role === 'system').length).toBeLessThanOrEqual(1);
  const calls = new Set<string>();
  for (const message of row.messages) {
    if (message.role === 'assistant') for (const call of message.calls) calls.add(call.id);
    if (message.role === 'tool') expect(calls.has(message.callId), message.callId).toBe(true);
  }
  expect(sampleTokens(row, count)).toBeLessThanOrEqual(budget);
}

describe('fit, a model-turn row', () => {
  const messages: SampleMessage[] = [
    { role: 'system', content: 'You are an agent.' },
    user('Fix the bug.'),
    ...step(1),
    ...step(2),
    ...step(3),
    ...step(4),
    assistant('Fixed: the off-by-one in parse().', true),
  ];
  const row = sample(messages);
  const whole = sampleTokens(row, count);

  it('is left as it is when it fits', () => {
    expect(fitToBudget(row, whole, count)).toEqual({ outcome: 'fits', samples: [row], tokens: [whole] });
  });

  it('loses its oldest context first, keeps the system prompt, the tools and the trained turn, and says the cut', () => {
    const budget = whole - 500;
    const fitted = fitToBudget(row, budget, count);
    if (fitted.outcome !== 'trimmed') throw new Error(fitted.outcome);
    const [trimmed] = fitted.samples;
    checkRow(trimmed, budget);
    expect(fitted.tokens).toEqual([sampleTokens(trimmed, count)]);
    // Two steps (the user's message and steps 1–2 are 5 messages) gave way; steps 3 and 4 stay whole.
    expect(fitted.left).toBe(5);
    expect(trimmed.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(trimmed.messages[1]).toEqual({ role: 'user', content: cutNote(5, budget) });
    expect(trimmed.messages[2]).toMatchObject({ content: expect.stringMatching(/^step 3/), train: false });
    expect(trimmed.messages.at(-1)).toEqual(messages.at(-1));
  });

  it('is dropped, with the reason, when the trained turn alone is longer, or the preamble is', () => {
    const long = sample([user('Go.'), assistant('x'.repeat(2000), true)]);
    expect(fitToBudget(long, 1000, count)).toEqual({
      outcome: 'dropped',
      why: 'over --max-tokens 1000 with all earlier context left out (the trained turn alone is longer)',
    });
    const preamble = sampleTokens({ ...row, messages: [messages[0] as SampleMessage] }, count);
    expect(fitToBudget(row, preamble, count)).toMatchObject({
      outcome: 'dropped',
      why: `over --max-tokens ${preamble}: the tools and system prompt alone are ${preamble} tokens`,
    });
  });
});

describe('fit, a user-turn row', () => {
  it('keeps the user message its training starts from, and merges the cut note into it', () => {
    const messages: SampleMessage[] = [
      user('First request.'),
      ...step(1),
      assistant('Done with the first.'),
      user('Second request.'),
      ...step(2, true),
      assistant('Done with the second.', true),
    ];
    const row = sample(messages, 'user-turn');
    // Room for the second request's turn and the note, not for anything before it.
    const budget = sampleTokens({ ...row, messages: messages.slice(4) }, count) + 100;
    const fitted = fitToBudget(row, budget, count);
    if (fitted.outcome !== 'trimmed') throw new Error(fitted.outcome);
    const [trimmed] = fitted.samples;
    checkRow(trimmed, budget);
    // Everything of the first request went; the second opens the row, with the note (no two user messages).
    expect(trimmed.messages[0]).toEqual({
      role: 'user',
      content: `${cutNote(4, budget)}\n\nSecond request.`,
    });
    expect(trimmed.messages.slice(1)).toEqual(messages.slice(5));
  });
});

describe('fit, a session row', () => {
  const messages: SampleMessage[] = [
    { role: 'system', content: 'You are an agent.' },
    user('Request one.'),
    ...step(1, true),
    ...step(2, true),
    assistant('One done.', true),
    user('Request two.'),
    ...step(3, true),
    ...step(4, true),
    ...step(5, true),
    assistant('Two done.', true),
  ];
  const row = sample(messages, 'session');

  it('is split into rows that fit, each trained on its own stretch, every trained turn trained once', () => {
    const budget = sampleTokens({ ...row, messages: messages.slice(0, 6) }, count) + 300;
    const fitted = fitToBudget(row, budget, count);
    if (fitted.outcome !== 'split') throw new Error(fitted.outcome);
    expect(fitted.samples.length).toBeGreaterThanOrEqual(3);
    for (const [index, piece] of fitted.samples.entries()) {
      checkRow(piece, budget);
      expect(piece.id).toBe(`s:1#${index + 1}`);
      expect(fitted.tokens[index]).toBe(sampleTokens(piece, count));
      expect(piece.messages[0]).toEqual(messages[0]);
    }
    // Each trained message of the session is trained in exactly one row.
    const trained = fitted.samples.flatMap((piece) =>
      piece.messages
        .filter((m): m is AssistantMessage => m.role === 'assistant' && m.train)
        .map((m) => m.content),
    );
    const original = messages
      .filter((m): m is AssistantMessage => m.role === 'assistant')
      .map((m) => m.content);
    expect(trained).toEqual(original);
    // The first row is the session's start; later ones say what was left out before them.
    expect(fitted.samples[0]?.messages[1]).toEqual(messages[1]);
    expect(fitted.samples[1]?.messages[1]?.content).toMatch(
      /^\[\d+ earlier message\(s\) of this conversation/,
    );
  });

  it('leaves out a turn longer than the budget on its own and says so when nothing fits', () => {
    const long = sample([user('Go.'), assistant('x'.repeat(5000), true)], 'session');
    expect(fitToBudget(long, 1000, count)).toMatchObject({
      outcome: 'dropped',
      why: 'over --max-tokens 1000: no stretch of the session fits (1 turn(s) longer on their own)',
    });
  });
});

describe('fit, a preference row', () => {
  it('trims the prompt and keeps both answers whole', () => {
    const prompt: SampleMessage[] = [user('Fix it.'), ...step(1), ...step(2), ...step(3)];
    const row: Sample = {
      ...sample(prompt),
      preference: { chosen: assistant('The original.', true), rejected: assistant('The replayed.', true) },
    };
    const budget = sampleTokens(row, count) - 400;
    const fitted = fitToBudget(row, budget, count);
    if (fitted.outcome !== 'trimmed') throw new Error(fitted.outcome);
    const [trimmed] = fitted.samples;
    expect(trimmed.preference).toEqual(row.preference);
    expect(trimmed.messages[0]).toMatchObject({
      role: 'user',
      content: expect.stringMatching(/^\[\d+ earlier/),
    });
    expect(sampleTokens(trimmed, count)).toBeLessThanOrEqual(budget);
  });
});

describe('fit on random conversations and budgets', () => {
  it('always gives rows that fit, open with a user message, end with the model, and never cut a trained turn', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 300; round++) {
      const messages: SampleMessage[] = random() < 0.5 ? [{ role: 'system', content: 'sys'.repeat(10) }] : [];
      const unit: Sample['unit'] =
        (['session', 'model-turn', 'user-turn'] as const)[Math.floor(random() * 3)] ?? 'session';
      let calls = 0;
      const turns = 1 + Math.floor(random() * 4);
      for (let t = 0; t < turns; t++) {
        messages.push(user('u'.repeat(10 + Math.floor(random() * 200))));
        const steps = Math.floor(random() * 4);
        for (let s = 0; s < steps; s++) {
          const id = `c${++calls}`;
          messages.push(assistant('a'.repeat(Math.floor(random() * 300)), unit === 'session', [id]));
          messages.push(tool(id, 'r'.repeat(Math.floor(random() * 800))));
        }
        messages.push(
          assistant('end'.repeat(1 + Math.floor(random() * 50)), unit === 'session' || t === turns - 1),
        );
      }
      const row = sample(messages, unit);
      const budget = 150 + Math.floor(random() * sampleTokens(row, count));
      const fitted = fitToBudget(row, budget, count);
      if (fitted.outcome === 'dropped') continue;
      for (const piece of fitted.samples) checkRow(piece, budget);
      const trainedOf = (rows: Sample[]) =>
        rows.flatMap((r) => r.messages.filter((m) => m.role === 'assistant' && m.train)).length;
      if (fitted.outcome === 'trimmed') expect(trainedOf(fitted.samples)).toBe(trainedOf([row]));
      if (fitted.outcome === 'split') expect(trainedOf(fitted.samples)).toBeLessThanOrEqual(trainedOf([row]));
    }
  });
});

describe('spread', () => {
  it('gives the nearest-rank p50, p95 and the maximum', () => {
    expect(spread([])).toEqual({ p50: 0, p95: 0, max: 0 });
    expect(spread([5, 1, 3, 2, 4])).toEqual({ p50: 3, p95: 5, max: 5 });
    expect(spread(Array.from({ length: 100 }, (_, i) => i + 1))).toEqual({ p50: 50, p95: 95, max: 100 });
    expect(perMessage).toBeGreaterThan(0);
  });
});

describe('opened', () => {
  it('puts a user message before a row that opens with the model (a compaction summary first), and only then', () => {
    const summary = sample([
      { role: 'system', content: 'sys' },
      assistant('Summary of before.'),
      user('Go on.'),
      assistant('Done.', true),
    ]);
    expect(opened(summary)?.messages.slice(0, 3)).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: openingNote },
      assistant('Summary of before.'),
    ]);
    expect(opened(sample([user('Hi.'), assistant('Hello.', true)]))).toBeUndefined();
  });
});

describe('toolsText', () => {
  const list = (description: string, type = 'string') => [
    { name: 'Read', description, parameters: { type: 'object', properties: { path: { type } } } },
    { name: 'Bash', description: 'runs a command', parameters: { type: 'object' } },
  ];
  const expected = (tools: ReturnType<typeof list>) =>
    JSON.stringify(
      tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      })),
    );

  it('is the JSON of the tools’ function form, for lists with the same values and for lists that differ', () => {
    // one after another, so a list's text may be the one made for the list before it
    for (const tools of [
      list('reads'),
      list('reads'),
      list('reads a file'),
      list('reads', 'number'),
      list('reads'),
    ])
      expect(toolsText(tools)).toBe(expected(tools));
  });
});
