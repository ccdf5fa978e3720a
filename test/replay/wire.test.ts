import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/model/session.js';
import { elideOptions } from '../../src/replay/elide.js';
import {
  type AnthropicWire,
  chatFromWire,
  conversationWire,
  elideWire,
  systemText,
} from '../../src/replay/wire.js';

const at = { file: 't.jsonl', line: 1 };

/** A Claude Code-like context: a thinking turn with two calls, one result an error, one a block list. */
const context: Message[] = [
  { role: 'user', parts: [{ type: 'text', text: 'Look at the app.' }], source: at },
  {
    role: 'system',
    parts: [{ type: 'text', text: '# Environment\ncwd: /w' }],
    injected: true,
    attachment: 'environment',
    source: at,
  },
  {
    role: 'assistant',
    parts: [
      { type: 'reasoning', text: 'Read both.', signature: 'sig-1' },
      { type: 'reasoning', text: '', redacted: true, signature: 'opaque' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_call', id: 'c1', name: 'Read', input: { file_path: '/w/missing.py' } },
      { type: 'tool_call', id: 'c2', name: 'Read', input: { file_path: '/w/app.py' } },
    ],
    source: at,
  },
  {
    role: 'tool',
    parts: [
      { type: 'tool_result', callId: 'c1', output: 'File does not exist.', isError: true },
      {
        type: 'tool_result',
        callId: 'c2',
        output: [
          { type: 'text', text: 'print(1)' },
          { type: 'image', mediaType: 'image/png', data: 'iVBOR' },
        ],
        isError: false,
      },
    ],
    source: at,
  },
  { role: 'user', parts: [{ type: 'text', text: 'And now?' }], source: at },
];

describe('conversationWire', () => {
  const wire = conversationWire(context, 'You are the agent.', [
    { name: 'Read', input_schema: { type: 'object' } },
  ]);

  it('keeps what chat form loses: is_error, signatures, redacted thinking, block-list results', () => {
    expect(wire.source).toBe('conversation');
    expect(wire.body.system).toBe('You are the agent.');
    const [user, system, assistant, results] = wire.body.messages;
    expect(user).toEqual({ role: 'user', content: [{ type: 'text', text: 'Look at the app.' }] });
    // A mid-conversation system message stays where it was (Claude Code sends it so).
    expect(system).toEqual({ role: 'system', content: [{ type: 'text', text: '# Environment\ncwd: /w' }] });
    expect(assistant?.content).toEqual([
      { type: 'thinking', thinking: 'Read both.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'c1', name: 'Read', input: { file_path: '/w/missing.py' } },
      { type: 'tool_use', id: 'c2', name: 'Read', input: { file_path: '/w/app.py' } },
    ]);
    // The results and the next user text share one user turn: roles alternate.
    expect(results).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'File does not exist.', is_error: true },
        {
          type: 'tool_result',
          tool_use_id: 'c2',
          content: [
            { type: 'text', text: 'print(1)' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
          ],
        },
        { type: 'text', text: 'And now?' },
      ],
    });
    expect(wire.body.messages).toHaveLength(4);
  });

  it('reads back in chat form: results as tool messages in call order, errors listed apart', () => {
    const chat = chatFromWire(wire);
    expect(chat.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'system',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(chat.messages[0]).toEqual({ role: 'system', content: 'You are the agent.' });
    expect(chat.messages[3]).toMatchObject({ content: 'Reading.', reasoning_content: 'Read both.' });
    expect(chat.messages[5]).toEqual({
      role: 'tool',
      tool_call_id: 'c2',
      content: 'print(1)\n[image image/png]',
    });
    expect(chat.errors).toEqual(['c1']);
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'Read', description: '', parameters: { type: 'object' } } },
    ]);
  });
});

describe('system blocks', () => {
  it('are joined with nothing between them (Claude Code starts a block with its own newline)', () => {
    expect(
      systemText([
        { type: 'text', text: 'You are Claude.' },
        { type: 'text', text: '\nBe brief.' },
      ]),
    ).toBe('You are Claude.\nBe brief.');
  });
});

describe('elideWire', () => {
  // Longer than the marker: a shorter result is shown as it is.
  const output = 'def a():\n    return 1\n'.repeat(20);
  const read = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: { file_path: '/w/a.py' } });
  const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: output });
  const wire: AnthropicWire = {
    api: 'anthropic-messages',
    source: 'recorded',
    body: {
      system: [],
      tools: [],
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [read('r1')] },
        { role: 'user', content: [result('r1')] },
        { role: 'assistant', content: [read('r2')] },
        {
          role: 'user',
          content: [result('r2'), { type: 'text', text: '<system-reminder>x</system-reminder>' }],
        },
      ],
      max_tokens: 1000,
    },
    betas: ['b1'],
  };

  it('replaces the repeat of an identical read-only result by the marker, and leaves the rest as recorded', () => {
    const options = elideOptions('claude-code', { elideRepeats: true, extraTools: [] });
    const { wire: shown, fates } = elideWire(wire, options as NonNullable<typeof options>);
    expect(fates.map((fate) => fate.fate)).toEqual(['shown', 'elided']);
    const last = shown.body.messages[4]?.content as { content?: unknown; text?: string }[];
    expect(String(last[0]?.content)).toContain('call r1');
    expect(last[1]).toEqual({ type: 'text', text: '<system-reminder>x</system-reminder>' });
    // The first result, the params and the betas are untouched; the input is not changed.
    expect(shown.body.messages[2]).toBe(wire.body.messages[2]);
    expect(shown.body.max_tokens).toBe(1000);
    expect(shown.betas).toEqual(['b1']);
    const recorded = wire.body.messages[4]?.content as { content?: unknown }[];
    expect(recorded[0]?.content).toBe(output);
  });
});
