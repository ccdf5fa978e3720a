import { describe, expect, it } from 'vitest';
import { itemsJson, perList } from '../../src/replay/memo.js';
import { type Pair, pairLine } from '../../src/replay/pairs.js';
import { bodyJson } from '../../src/replay/providers/openai.js';

// The pair line and the request body are made from JSON kept per session (the tool list) and per turn (the
// messages) instead of serialising the whole context again; what is written must still be exactly what
// JSON.stringify would write.

const tools: Pair['tools'] = [
  {
    type: 'function',
    function: {
      name: 'Read',
      description: 'Reads a "file".\n',
      parameters: { type: 'object', properties: {} },
    },
  },
];

const pair = (overrides: Partial<Pair> = {}): Pair => ({
  schema: 'replay-history.pair/v2',
  run: 'run_1',
  session: 's',
  agent: 'claude-code',
  turn: 2,
  mode: 'forced',
  model: 'openai:m',
  messages: [
    { role: 'system', content: 'be brief \u2028 ü' },
    { role: 'user', content: 'a \u0000 b "quoted" \\ back' },
  ],
  tools,
  completion: { role: 'assistant', content: null, tool_calls: [] },
  original: null,
  match: { tool_calls: 'none' },
  usage: { prompt_tokens: 1, completion_tokens: 2 },
  latency_ms: 3,
  finish_reason: null,
  sources: { system: 'recorded', tools: 'catalogue', tool_list: 'replay-history/claude-code' },
  tool_errors: [],
  wire: {
    api: 'anthropic-messages',
    source: 'conversation',
    body: {
      max_tokens: 100,
      system: [{ type: 'text', text: 'be brief' }],
      tools: [{ name: 'Read', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'b' },
            { type: 'tool_use', id: 't', name: 'Read', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'c' }], is_error: true },
          ],
        },
      ],
      metadata: undefined,
    },
    betas: ['x'],
  },
  ...overrides,
});

describe('pairLine', () => {
  it('is JSON.stringify of the pair, byte for byte, optional fields absent or undefined included', () => {
    expect(pairLine(pair())).toBe(JSON.stringify(pair()));
    const bare = pair({ sources: undefined, tool_errors: undefined, wire: undefined });
    expect(pairLine(bare)).toBe(JSON.stringify(bare));
    const { wire: _wire, sources: _sources, ...without } = pair();
    expect(pairLine(without as Pair)).toBe(JSON.stringify(without));
    const system = pair();
    if (system.wire?.api === 'anthropic-messages') system.wire.body.system = 'a plain "string" system';
    expect(pairLine(system)).toBe(JSON.stringify(system));
  });

  it('uses the messages JSON it is handed, and a list serialised once for every later pair', () => {
    const first = pair();
    expect(pairLine(first, { messages: '["given"]' })).toBe(
      JSON.stringify({ ...first, messages: ['given'] }),
    );
    // The same list object in a later turn: its JSON is the one made the first time.
    const later = pair({ turn: 3, messages: [{ role: 'user', content: 'next' }] });
    expect(later.tools).toBe(first.tools);
    expect(pairLine(later)).toBe(JSON.stringify(later));
    // A different list (another session) is serialised on its own.
    const other = pair({ tools: [] });
    expect(pairLine(other)).toBe(JSON.stringify(other));
  });
});

describe('bodyJson', () => {
  it('is the body chat.completions.create would send, with the messages JSON reused', () => {
    const body = { model: 'm', messages: pair().messages, tools, max_tokens: 10 };
    expect(bodyJson(body)).toBe(JSON.stringify({ ...body, stream: false }));
    expect(bodyJson(body, JSON.stringify(body.messages))).toBe(JSON.stringify({ ...body, stream: false }));
    expect(bodyJson({ model: 'm', messages: [] })).toBe('{"model":"m","messages":[],"stream":false}');
  });
});

describe('perList', () => {
  it('converts a list once and gives every caller the same result', () => {
    let calls = 0;
    const upper = perList((list: readonly string[]) => {
      calls++;
      return list.map((item) => item.toUpperCase());
    });
    const list = ['a', 'b'];
    const first = upper(list);
    expect(upper(list)).toBe(first);
    expect(first).toEqual(['A', 'B']);
    expect(upper(['a'])).toEqual(['A']);
    expect(calls).toBe(2);
  });
});

describe('itemsJson', () => {
  it('is JSON.stringify of the list, each item serialised once', () => {
    const shared = { role: 'user', content: 'a "b" \u2028' };
    const first = [shared, { role: 'assistant', content: null }];
    expect(itemsJson(first)).toBe(JSON.stringify(first));
    const later = [shared, { role: 'tool', tool_call_id: 'x', content: 'y' }];
    expect(itemsJson(later)).toBe(JSON.stringify(later));
    expect(itemsJson([])).toBe('[]');
    const mixed = ['text', 1, null, undefined, shared];
    expect(itemsJson(mixed)).toBe(JSON.stringify(mixed));
  });
});
