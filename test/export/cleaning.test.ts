// The same cleaning for rows made from a replay's pairs (chat form) as for rows made from stored sessions: harness
// text in a user message (an interruption note, a reminder block) is left out unless --include-injected, and a
// compaction summary, which stands for the history, is kept.
import { describe, expect, it } from 'vitest';
import { fromChat } from '../../src/export/build.js';
import type { ChatMessage } from '../../src/replay/chat.js';

const chat: ChatMessage[] = [
  {
    role: 'user',
    content:
      'This session is being continued from a previous conversation that ran out of context. Summary: …',
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: '<system-reminder>Today is Tuesday.</system-reminder>' },
      { type: 'text', text: 'Add pagination.' },
    ],
  },
  { role: 'assistant', content: 'On it.' },
  { role: 'user', content: '[Request interrupted by user for tool use]' },
  { role: 'user', content: 'Use cursors instead.' },
];

describe('fromChat', () => {
  it('leaves out the harness’s text and keeps the person’s and the summary', () => {
    const users = fromChat(chat, [])
      .filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(users).toEqual([
      'This session is being continued from a previous conversation that ran out of context. Summary: …',
      'Add pagination.',
      'Use cursors instead.',
    ]);
  });

  it('keeps everything with --include-injected', () => {
    const users = fromChat(chat, [], new Set(), true).filter((m) => m.role === 'user');
    expect(users).toHaveLength(4);
    expect(users.map((m) => m.content).join('\n')).toContain('[Request interrupted by user for tool use]');
  });
});
