import { describe, expect, it } from 'vitest';
import { fromRecording, systemFromRecording } from '../../../src/drivers/claude-code/harness.js';
import { type Answered, kindOf, substitute } from '../../../src/drivers/claude-code/proxy.js';
import type { WireMessage } from '../../../src/model/request.js';

const denied = (id: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool_result',
  tool_use_id: id,
  content:
    'PreToolUse:Read hook error: replay-history: this call is answered from the recording; it was not run',
  is_error: true,
  ...extra,
});

describe('substitute', () => {
  const calls: WireMessage = {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'a', name: 'Read', input: {} },
      { type: 'tool_use', id: 'b', name: 'Glob', input: {} },
    ],
  };
  const answers = new Map<string, Answered>([
    ['a', { block: { type: 'tool_result', tool_use_id: 'a', content: 'A' }, order: 7 }],
    ['b', { block: { type: 'tool_result', tool_use_id: 'b', content: 'B', is_error: false }, order: 3 }],
  ]);

  it('puts the recorded results in place by id, in the recorded order, the breakpoint where Claude Code had it', () => {
    const live: WireMessage = {
      role: 'user',
      content: [
        denied('a'),
        denied('b', { cache_control: { type: 'ephemeral' } }),
        { type: 'text', text: 'note' },
      ],
    };
    const [, out] = substitute([calls, live], answers);
    expect(out?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'b', content: 'B', is_error: false },
      { type: 'tool_result', tool_use_id: 'a', content: 'A', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'note' },
    ]);
  });

  it('leaves a result it has no answer for as it is (a call that never reached the hook), and the input unchanged', () => {
    const live: WireMessage = { role: 'user', content: [denied('x')] };
    const [, out] = substitute([calls, live], answers);
    expect(out).toBe(live);
  });
});

describe('kindOf', () => {
  it('tells a step, a compaction call and a side call apart', () => {
    const tools = [{ name: 'Read' }];
    expect(kindOf({ tools, messages: [{ role: 'user', content: 'hi' }] })).toBe('step');
    expect(
      kindOf({
        tools,
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n…' }],
          },
        ],
      }),
    ).toBe('compaction');
    expect(kindOf({ messages: [{ role: 'user', content: 'title this' }] })).toBe('side');
  });
});

describe('fromRecording', () => {
  const recorded: WireMessage[] = [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\n# gitStatus\nbranch: master\n</system-reminder>' },
        { type: 'text', text: 'Fix it.' },
      ],
    },
    { role: 'system', content: '# Environment\n - Primary working directory: /home/ada/app' },
  ];

  it('takes harness text from the recording when what the user typed is the same', () => {
    const live: WireMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'Fix it.', cache_control: { type: 'ephemeral' } }] },
      { role: 'system', content: '# Environment\n - Primary working directory: /tmp/replay' },
    ];
    const { messages, differs } = fromRecording(live, recorded);
    expect(differs).toEqual([]);
    expect(messages[1]).toEqual(recorded[1]);
    // Claude Code's breakpoint stays on the message's last block.
    expect(messages[0]?.content).toEqual([
      { type: 'text', text: '<system-reminder>\n# gitStatus\nbranch: master\n</system-reminder>' },
      { type: 'text', text: 'Fix it.', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('keeps and lists a message whose own content differs, and one the recording lacks', () => {
    const live: WireMessage[] = [
      { role: 'user', content: 'Fix it now.' },
      recorded[1] as WireMessage,
      { role: 'assistant', content: [{ type: 'text', text: 'more' }] },
    ];
    const { messages, differs } = fromRecording(live, recorded);
    expect(differs).toEqual([0, 2]);
    expect(messages[0]).toBe(live[0]);
  });

  it('names the recorded memory folder in the system prompt, and nothing else of it', () => {
    const text = (path: string) =>
      `Be brief.\nYou have a persistent file-based memory at \`${path}\`. Use it.`;
    const out = systemFromRecording(
      [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328' },
        { type: 'text', text: text('/tmp/h/.claude/m/') },
      ],
      [{ type: 'text', text: text('/home/ada/.claude/m/') }],
    );
    expect(out.map((block) => block.text)).toEqual([
      'x-anthropic-billing-header: cc_version=2.1.328',
      text('/home/ada/.claude/m/'),
    ]);
  });
});
