import { describe, expect, it } from 'vitest';
import type { Message, Part } from '../../src/model/session.js';
import { markUnanswered } from '../../src/model/session.js';
import { splitTurns, unansweredOutput } from '../../src/model/turns.js';

let line = 0;
const msg = (role: Message['role'], parts: Part[], extra: Partial<Message> = {}): Message => ({
  role,
  parts,
  source: { file: 'mem', line: ++line },
  ...extra,
});
const text = (t: string): Part => ({ type: 'text', text: t });

describe('turns', () => {
  it('gives each model call the context before it, and its recorded results in call order', () => {
    const messages = [
      msg('user', [text('hi')]),
      msg('assistant', [
        { type: 'tool_call', id: 'a', name: 'Read', input: {} },
        { type: 'tool_call', id: 'b', name: 'Grep', input: {} },
      ]),
      msg('tool', [{ type: 'tool_result', callId: 'b', output: 'B', isError: false }]),
      msg('tool', [{ type: 'tool_result', callId: 'a', output: 'A', isError: false }]),
      msg('assistant', [text('done')]),
    ];
    const turns = splitTurns(messages);
    expect(turns.map((t) => [t.index, t.messageIndex, t.context.length])).toEqual([
      [0, 1, 1],
      [1, 4, 4],
    ]);
    expect(turns[0]?.results.map((r) => r.output)).toEqual(['A', 'B']);
    expect(turns[1]?.results).toEqual([]);
  });

  it('closes unanswered calls with one synthetic error before the next non-tool message', () => {
    const messages = [
      msg('user', [text('go')]),
      msg('assistant', [
        { type: 'tool_call', id: 'a', name: 'Bash', input: {} },
        { type: 'tool_call', id: 'b', name: 'Bash', input: {} },
      ]),
      msg('tool', [{ type: 'tool_result', callId: 'a', output: 'ok', isError: false }]),
      msg('user', [text('stop')]),
      msg('assistant', [text('stopped')]),
    ];
    expect(markUnanswered(messages)).toBe(1);
    const [, second] = splitTurns(messages);
    expect(second?.context.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(second?.context[3]?.parts).toEqual([
      {
        type: 'tool_result',
        callId: 'b',
        name: 'Bash',
        output: unansweredOutput,
        isError: true,
        synthetic: true,
      },
    ]);
  });

  it('after a compaction shows the summary and a preserved tail, never the older history', () => {
    const messages = [
      msg('user', [text('old 1')], { nativeId: 'o1' }),
      msg('assistant', [text('old 2')], { nativeId: 'o2' }),
      msg('user', [text('kept')], { nativeId: 'k1' }),
      msg('user', [text('summary')], { nativeId: 's', compaction: true, injected: true, preserved: ['k1'] }),
      msg('assistant', [text('new')], { nativeId: 'n1' }),
      msg('user', [text('again')], { nativeId: 'n2' }),
      msg('assistant', [text('newer')], { nativeId: 'n3' }),
    ];
    const turns = splitTurns(messages);
    const seen = (i: number) => turns[i]?.context.map((m) => m.nativeId);
    expect(seen(0)).toEqual(['o1']);
    expect(seen(1)).toEqual(['s', 'k1']);
    expect(seen(2)).toEqual(['s', 'k1', 'n1', 'n2']);
  });

  it('skips harness-made assistant messages and turns before `from` (inherited history)', () => {
    const messages = [
      msg('user', [text('a')]),
      msg('assistant', [text('b')]),
      msg('assistant', [text('API error')], { injected: true }),
      msg('user', [text('c')]),
      msg('assistant', [text('d')]),
    ];
    const turns = splitTurns(messages, 2);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.index).toBe(1);
    expect(turns[0]?.context.map((m) => m.parts[0])).toEqual([text('a'), text('b'), text('c')]);
  });
});
