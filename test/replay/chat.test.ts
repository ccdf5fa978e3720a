import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/model/session.js';
import { assistantMessage, chatMessages } from '../../src/replay/chat.js';
import { anthropicMessages } from '../../src/replay/providers/anthropic.js';

const source = { file: 'mem', line: 1 };
const context: Message[] = [
  { role: 'user', parts: [{ type: 'text', text: 'fix it' }], source },
  {
    role: 'assistant',
    parts: [
      { type: 'reasoning', text: 'look first', signature: 's' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_call', id: 'c1', name: 'Read', input: { file_path: 'a.ts' } },
      { type: 'tool_call', id: 'c2', name: 'apply_patch', input: { raw: '*** Begin Patch' } },
    ],
    source,
  },
  {
    role: 'tool',
    parts: [
      {
        type: 'tool_result',
        callId: 'c1',
        output: [
          { type: 'text', text: 'line 1' },
          { type: 'text', text: 'line 2' },
        ],
        isError: false,
      },
      { type: 'tool_result', callId: 'c2', output: 'patch failed', isError: true },
    ],
    source,
  },
  {
    role: 'user',
    parts: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }],
    injected: true,
    source,
  },
];

describe('chat form', () => {
  it('puts each recorded tool result right after the call, as the model saw it', () => {
    expect(chatMessages(context)).toEqual([
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: 'Reading.',
        reasoning_content: 'look first',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"a.ts"}' } },
          // An argument string that was not JSON goes back exactly as the model wrote it.
          { id: 'c2', type: 'function', function: { name: 'apply_patch', arguments: '*** Begin Patch' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'line 1\nline 2' },
      { role: 'tool', tool_call_id: 'c2', content: 'patch failed' },
      { role: 'user', content: '<system-reminder>x</system-reminder>' },
    ]);
    expect(assistantMessage({ role: 'assistant', parts: [{ type: 'text', text: 'done' }], source })).toEqual({
      role: 'assistant',
      content: 'done',
    });
  });

  it('becomes Messages API turns: system apart, tool results as tool_result blocks, roles alternating', () => {
    const { system, messages } = anthropicMessages([
      { role: 'system', content: 'be brief' },
      ...chatMessages(context),
    ]);
    expect(system).toBe('be brief');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]?.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'c1', name: 'Read', input: { file_path: 'a.ts' } },
      { type: 'tool_use', id: 'c2', name: 'apply_patch', input: { raw: '*** Begin Patch' } },
    ]);
    expect(messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: 'line 1\nline 2' },
      { type: 'tool_result', tool_use_id: 'c2', content: 'patch failed' },
      { type: 'text', text: '<system-reminder>x</system-reminder>' },
    ]);
  });
});
