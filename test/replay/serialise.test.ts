import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/model/canonical-json.js';
import { requestDigest } from '../../src/replay/engine.js';
import { itemsParts, JsonParts, objectParts, perList } from '../../src/replay/memo.js';
import { type KnownJson, type Pair, pairParts } from '../../src/replay/pairs.js';
import { bodyBytes } from '../../src/replay/providers/openai.js';

// The pair line and the request body are made from UTF-8 bytes kept per session (the tool list) and per item
// (the messages, the wire's content blocks) instead of serialising and encoding the whole context again; what
// is written must still be exactly the UTF-8 of what JSON.stringify would write.

const utf8 = (value: unknown) => Buffer.from(JSON.stringify(value));
const pairLine = (pair: Pair, known?: KnownJson) => pairParts(pair, known).toString();

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
    { role: 'user', content: 'a surrogate pair 😀, a lone one \ud800 and \udc00, → 1→' },
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

  it('is those bytes (UTF-8, non-ASCII and lone surrogates included), with the messages as the engine makes them', () => {
    const whole = pair();
    expect(pairParts(whole).concat().equals(utf8(whole))).toBe(true);
    const messages = itemsParts(whole.messages);
    messages.concat();
    expect(pairParts(whole, { messages }).concat().equals(utf8(whole))).toBe(true);
    expect(
      pairParts(whole, { messages: itemsParts(whole.messages) })
        .concat()
        .equals(utf8(whole)),
    ).toBe(true);
  });

  it('uses the messages JSON it is handed, and a list serialised once for every later pair', () => {
    const first = pair();
    expect(pairLine(first, { messages: new JsonParts().text('["given"]') })).toBe(
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

describe('bodyBytes', () => {
  it('is the body chat.completions.create would send, with the messages bytes reused', () => {
    const body = { model: 'm', messages: pair().messages, tools, max_tokens: 10 };
    const sent = utf8({ ...body, stream: false });
    expect(bodyBytes(body).equals(sent)).toBe(true);
    expect(bodyBytes(body, itemsParts(body.messages)).equals(sent)).toBe(true);
    expect(bodyBytes(body, itemsParts(body.messages)).equals(sent)).toBe(true);
    expect(bodyBytes({ model: 'm', messages: [] }).toString()).toBe(
      '{"model":"m","messages":[],"stream":false}',
    );
  });
});

describe('requestDigest', () => {
  it('is sha256 of the model, the tools digest and the messages JSON, however the messages bytes are held', () => {
    const { messages } = pair();
    const expected = sha256(`openai:m\0${sha256(JSON.stringify(tools))}\0${JSON.stringify(messages)}`);
    expect(requestDigest('openai:m', messages, tools)).toBe(expected);
    const whole = itemsParts(messages);
    whole.concat();
    expect(requestDigest('openai:m', messages, tools, whole)).toBe(expected);
    expect(requestDigest('openai:m', messages, tools, itemsParts(messages))).toBe(expected);
    expect(requestDigest('openai:n', messages, tools)).not.toBe(expected);
    expect(requestDigest('openai:m', messages.slice(1), tools)).not.toBe(expected);
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

describe('itemsParts', () => {
  it('is the UTF-8 of JSON.stringify of the list, each item encoded once', () => {
    const shared = { role: 'user', content: 'a "b" \u2028 ü 😀 \ud83d' };
    const first = [shared, { role: 'assistant', content: null }];
    const made = itemsParts(first);
    expect(made.concat().equals(utf8(first))).toBe(true);
    expect(made.length).toBe(utf8(first).length);
    const later = [shared, { role: 'tool', tool_call_id: 'x', content: 'y' }];
    const again = itemsParts(later);
    expect(again.concat().equals(utf8(later))).toBe(true);
    // The shared item's bytes are the ones made the first time, by reference.
    expect(itemsParts([shared]).done()[1]).toBe(itemsParts([shared, shared]).done()[3]);
    expect(itemsParts([]).toString()).toBe('[]');
    const mixed = ['text', 1, null, undefined, shared, 'é', shared];
    expect(itemsParts(mixed).concat().equals(utf8(mixed))).toBe(true);
  });
});

describe('objectParts', () => {
  it('leaves out what JSON leaves out and serialises an object with toJSON as JSON.stringify does', () => {
    const value = { a: 1, b: undefined, c: 'ü', d: () => 1, e: [1, { f: 'g' }] };
    expect(
      objectParts(value, (_key, part) => JSON.stringify(part))
        .concat()
        .equals(utf8(value)),
    ).toBe(true);
    const dated = { toJSON: () => ({ when: 'now' }) };
    expect(objectParts(dated, () => '"never used"').toString()).toBe(JSON.stringify(dated));
  });
});
