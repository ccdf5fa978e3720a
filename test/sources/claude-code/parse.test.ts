import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Message, outputText, type Part, toolCalls } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import { root } from '../../helpers/cli.js';

const fixtures = join(root, 'test', 'fixtures', 'claude-code');
const parse = (name: string) => {
  const result = claudeCode.parseFile(join(fixtures, name));
  return { ...result, sessions: [...result.sessions] };
};
const main = (name: string) => {
  const result = parse(name);
  const session = result.sessions.find((s) => s.kind === 'main');
  if (!session) throw new Error(`no main session in ${name}`);
  return { ...result, session };
};
const texts = (messages: Message[]) =>
  messages.flatMap((m) =>
    m.parts.filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text').map((p) => p.text),
  );

describe('claude-code adapter', () => {
  it('merges one API response written as several lines into one assistant message, usage taken once', () => {
    const { session } = main('split-response.jsonl');
    const assistants = session.messages.filter((m) => m.role === 'assistant');
    expect(assistants).toHaveLength(2);
    const first = assistants[0] as Message;
    expect(first.parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool_call']);
    expect(first.parts[0]).toMatchObject({ type: 'reasoning', text: 'I should read it.', signature: 'sig1' });
    // The last (largest) streaming snapshot, not a sum of the three lines.
    expect(first.usage).toEqual({ inputTokens: 100, outputTokens: 42, cacheReadTokens: 50 });
    expect(first.source).toEqual({ file: join(fixtures, 'split-response.jsonl'), line: 2, endLine: 4 });
    expect(splitTurns(session.messages)).toHaveLength(2);
  });

  it('orders by the uuid/parentUuid chain, not by file order', () => {
    const { session } = main('file-order.jsonl');
    expect(texts(session.messages)).toEqual(['first', 'one', 'second', 'two']);
  });

  it('keeps the branch a rewind continued and drops the abandoned one', () => {
    const { session } = main('rewind.jsonl');
    expect(texts(session.messages)).toEqual([
      'Start',
      'Ready',
      'Edited prompt',
      'Kept answer',
      'Thanks',
      'Welcome',
    ]);
  });

  it('keeps parallel tool calls written as sibling lines, each paired with its result', () => {
    const { session } = main('parallel-tools.jsonl');
    const roles = session.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    const calls = toolCalls(session.messages[1] as Message);
    expect(calls.map((c) => c.name)).toEqual(['WebSearch', 'Glob']);
    expect(calls.every((c) => !c.unanswered)).toBe(true);
    const [turn] = splitTurns(session.messages);
    expect(turn?.results.map((r) => [r.name, outputText(r.output)])).toEqual([
      ['WebSearch', 'Web search results: ...'],
      ['Glob', 'assets/js/app.js'],
    ]);
  });

  it('takes what the model saw (tool_result.content, string or blocks, is_error), not toolUseResult', () => {
    const { session } = main('tool-results.jsonl');
    const [turn] = splitTurns(session.messages);
    const results = turn?.results ?? [];
    expect(results.map((r) => r.name)).toEqual(['Bash', 'Read', 'Bash']);
    expect(results[0]).toMatchObject({ output: 'a.txt\nb.txt', isError: false });
    expect(results[1]?.output).toEqual([
      { type: 'text', text: 'Image shown below' },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ]);
    expect(results[2]).toMatchObject({ output: 'Exit code 1', isError: true });
    expect(JSON.stringify(session)).not.toContain('UI copy');
  });

  it('keeps a tool call that never got a result, marks it, and gives contexts a synthetic error for it', () => {
    const { session } = main('interrupted.jsonl');
    const [call] = toolCalls(session.messages[1] as Message);
    expect(call).toMatchObject({ id: 'toolu_x', unanswered: true });
    const turns = splitTurns(session.messages);
    expect(turns).toHaveLength(3);
    expect(turns[0]?.results[0]).toMatchObject({ callId: 'toolu_x', isError: true, synthetic: true });
    // The next model call saw the dangling call closed by an error result, right after it.
    const context = turns[1]?.context ?? [];
    expect(context.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'user']);
    expect(context[2]?.parts[0]).toMatchObject({ type: 'tool_result', callId: 'toolu_x', synthetic: true });
    expect(context[3]?.injected).toBe(true);
  });

  it('starts contexts after a compaction at the summary', () => {
    const { session } = main('compaction.jsonl');
    const summary = session.messages.find((m) => m.compaction);
    expect(summary).toMatchObject({ role: 'user', injected: true });
    const turns = splitTurns(session.messages);
    expect(turns).toHaveLength(3);
    expect(texts(turns[1]?.context ?? [])).toEqual(['Long task', 'Working on it', 'More']);
    const after = turns[2]?.context ?? [];
    expect(after[0]).toBe(summary);
    expect(texts(after)).toEqual([
      expect.stringContaining('continued from a previous conversation'),
      'Finish it',
    ]);
    // The full transcript still holds the earlier history for `show`.
    expect(texts(session.messages)).toContain('Still working');
  });

  it('flags harness-injected text, splitting an IDE wrapper from the prompt it was prepended to', () => {
    const { session } = main('injected.jsonl');
    const flagged = session.messages.map((m) => [m.role, texts([m])[0], m.injected === true]);
    expect(flagged).toEqual([
      ['user', expect.stringContaining('Caveat'), true],
      ['user', expect.stringContaining('<command-name>'), true],
      ['user', expect.stringContaining('<local-command-stdout>'), true],
      ['user', expect.stringContaining('<ide_opened_file>'), true],
      ['user', 'Why does a.ts fail?', false],
      ['assistant', 'API Error: 529 Overloaded', true],
      ['user', expect.stringContaining('<system-reminder>'), true],
      ['assistant', 'Because of a typo.', false],
    ]);
    // A synthetic API error is not a model turn and was never sent back to the model.
    const turns = splitTurns(session.messages);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.context.some((m) => m.role === 'assistant')).toBe(false);
    expect(session.title).toBe('Why does a.ts fail?');
  });

  it('keeps progress, snapshots, queue operations, summaries and unknown types out without breaking the chain', () => {
    const { session, notes, warnings } = main('noise.jsonl');
    expect(texts(session.messages)).toEqual(['Hello', 'Hi']);
    expect(session.title).toBe('Greeting session');
    expect(notes).toEqual(["1 line(s) of unknown type 'future-thing' kept out of the conversation"]);
    expect(warnings).toEqual([]);
  });

  it('reads a sub-agent file as a child session linked to the parent and its Task call', () => {
    const dir = '22222222-2222-4222-8222-222222222222';
    const parent = main(`subagents/${dir}.jsonl`);
    const child = parse(`subagents/${dir}/subagents/agent-abc123.jsonl`);
    expect(child.sessions).toHaveLength(1);
    expect(child.sessions[0]).toMatchObject({
      kind: 'subagent',
      sourceId: `${dir}/agent-abc123`,
      parentId: parent.session.id,
      parentToolCallId: 'toolu_task',
      title: 'Survey',
      origin: 'file',
    });
    // The parent also mirrors the child inline; with the child's own file present the mirror is not rebuilt.
    expect(parent.sessions.map((s) => s.kind)).toEqual(['main']);
    expect(parent.session.messages.flatMap((m) => texts([m]))).not.toContain('src, test, docs');
    expect(parent.spawns).toContainEqual({
      parentSourceId: dir,
      childSourceId: `${dir}/agent-abc123`,
      toolCallId: 'toolu_task',
    });
  });

  it('recognises an acompact side call as compaction, not a sub-agent', () => {
    const dir = '22222222-2222-4222-8222-222222222222';
    const { sessions } = parse(`subagents/${dir}/subagents/agent-acompact-9f9f9f.jsonl`);
    expect(sessions.map((s) => s.kind)).toEqual(['compaction']);
  });

  it('rebuilds a sub-agent known only from inline agent_progress mirrors, once, as its own session', () => {
    const { sessions } = parse('mirror-only.jsonl');
    expect(sessions).toHaveLength(2);
    const [parent, child] = sessions;
    expect(child).toMatchObject({
      kind: 'subagent',
      origin: 'mirror',
      parentId: parent?.id,
      parentToolCallId: 'toolu_t',
    });
    expect(child?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(splitTurns(child?.messages ?? [])).toHaveLength(2);
    expect(parent?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});
