import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Message, outputText, type Part, toolCalls, toolResults } from '../../../src/model/session.js';
import { splitTurns, unansweredOutput } from '../../../src/model/turns.js';
import { codex } from '../../../src/sources/codex/index.js';
import { serverSearchOutput } from '../../../src/sources/codex/records.js';
import type { ParsedSession } from '../../../src/sources/types.js';
import { root, tempDir } from '../../helpers/cli.js';

const fixtures = join(root, 'test', 'fixtures', 'codex');
const parse = (path: string) => {
  const result = codex.parseFile(path);
  return { ...result, sessions: [...result.sessions] };
};
const only = (name: string) => {
  const result = parse(join(fixtures, name));
  expect(result.sessions).toHaveLength(1);
  return { ...result, session: result.sessions[0] as ParsedSession };
};
const texts = (message: Message | undefined): string[] =>
  (message?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : []));
const shape = (messages: Message[]): string[] =>
  messages.map((m) => `${m.role}${m.injected ? '*' : ''}${m.compaction ? '!' : ''}`);

describe('codex adapter', () => {
  it('keeps the instructions as an injected system message, flags Codex-written context, and reads each item once', () => {
    const { session, warnings, notes } = only('basic.jsonl');
    expect(warnings).toEqual([]);
    expect(notes).toEqual([]);
    expect(session).toMatchObject({
      sourceId: '0196a000-0000-7000-8000-000000000001',
      agent: 'codex',
      kind: 'main',
      cwd: '/home/ada/shop',
      version: '0.120.0',
      title: 'Why does the cart test fail?',
      startedAt: '2026-03-01T10:00:00.000Z',
      endedAt: '2026-03-01T10:00:08.520Z',
    });
    // The event_msg mirrors (user_message, agent_message, agent_reasoning) add nothing.
    expect(shape(session.messages)).toEqual([
      'system*',
      'system*',
      'user*',
      'user*',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(texts(session.messages[0])).toEqual(['You are Codex, a coding agent. Be concise.']);
    expect(texts(session.messages[4])).toEqual(['Why does the cart test fail?']);
    const first = session.messages[5] as Message;
    expect(first.parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool_call']);
    expect(first.parts[0]).toEqual({
      type: 'reasoning',
      text: 'Run the failing test first.',
      signature: 'gAAAAenc1',
    });
    expect(first.parts[2]).toEqual({
      type: 'tool_call',
      id: 'call_1',
      name: 'exec_command',
      input: { cmd: 'npm test -- cart' },
    });
    expect(first.source).toEqual({ file: join(fixtures, 'basic.jsonl'), line: 10, endLine: 13 });
    expect(first.model).toBe('gpt-5.3-codex');
  });

  it('takes usage from token_count: the response’s own figures, cached input apart, a repeated count ignored', () => {
    const { session } = only('basic.jsonl');
    const [first, second] = session.messages.filter((m) => m.role === 'assistant');
    // last_token_usage {input 1000, cached 200, output 50}; the repeat at line 17 does not move it to turn 2.
    expect(first?.usage).toEqual({ inputTokens: 800, outputTokens: 50, cacheReadTokens: 200 });
    expect(second?.usage).toEqual({ inputTokens: 400, outputTokens: 30, cacheReadTokens: 800 });
  });

  it('one model turn is the model items between inputs; its calls are answered by the outputs after it', () => {
    const { session } = only('basic.jsonl');
    const turns = splitTurns(session.messages);
    expect(turns).toHaveLength(2);
    expect(turns[0]?.context).toEqual(session.messages.slice(0, 5));
    expect(turns[0]?.results.map((r) => outputText(r.output))).toEqual([
      'FAIL test/cart.test.ts\n  expected 3, got 2',
    ]);
    expect(turns[0]?.results[0]?.name).toBe('exec_command');
    expect(turns[1]?.context).toEqual(session.messages.slice(0, 7));
  });

  it('keeps arguments that are not valid JSON as the raw string and names their lines in a note', () => {
    const { session, notes, warnings } = only('raw-arguments.jsonl');
    expect(warnings).toEqual([]);
    const calls = session.messages.flatMap(toolCalls);
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ['shell', '{"command": ["cat", "README.md"'],
      // Free-form tools take raw text by design: no note for them.
      [
        'apply_patch',
        '*** Begin Patch\n*** Update File: README.md\n@@\n-old title\n+new title\n*** End Patch\n',
      ],
      // Valid JSON, but not an object: the model's text is kept as written.
      ['update_plan', '[1, 2]'],
    ]);
    expect(notes).toEqual([
      '2 tool call(s) whose arguments are not valid JSON, kept as the raw string (lines 5, 9)',
    ]);
  });

  it('keeps outputs as the model saw them: a string, content items with an image, the {content, success} form', () => {
    const { session } = only('outputs.jsonl');
    const results = session.messages.flatMap(toolResults);
    expect(results.map((r) => [r.name, r.output, r.isError])).toEqual([
      [
        'local_shell',
        '{"output": "12M\\t.\\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}',
        false,
      ],
      [
        'view_image',
        [
          { type: 'text', text: 'logo.png:' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        ],
        false,
      ],
      ['read_file', 'BRAND.md: no such file', true],
      ['web_search', serverSearchOutput, false],
    ]);
    const shell = session.messages.flatMap(toolCalls)[0];
    expect(shell).toMatchObject({
      id: 'shell_1',
      name: 'local_shell',
      input: { command: ['du', '-sh', '.'] },
    });
  });

  it('a server-side web search has no output item: it is answered inside its turn, not left dangling', () => {
    const { session } = only('outputs.jsonl');
    const search = session.messages.flatMap(toolCalls).find((c) => c.name === 'web_search');
    expect(search).toMatchObject({
      id: 'web_search_1',
      input: { type: 'search', query: 'shop logo guidelines' },
    });
    expect(search?.unanswered).toBeUndefined();
    const last = session.messages.at(-1) as Message;
    expect(last.parts.map((p) => p.type)).toEqual(['tool_call', 'tool_result', 'text']);
  });

  it('parallel calls of one turn are one assistant message, each call paired with its output in order', () => {
    const { session } = only('parallel.jsonl');
    expect(shape(session.messages)).toEqual(['system*', 'user', 'assistant', 'tool', 'tool', 'assistant']);
    const [turn] = splitTurns(session.messages);
    expect(toolCalls(turn?.response as Message).map((c) => c.id)).toEqual(['call_pkg', 'call_lock']);
    expect(turn?.results.map((r) => [r.callId, r.synthetic])).toEqual([
      ['call_pkg', undefined],
      ['call_lock', undefined],
    ]);
  });

  it('keeps a call that never got an output, marked unanswered; later contexts give it a synthetic error', () => {
    const { session } = only('interrupted.jsonl');
    const [slow, api] = session.messages.flatMap(toolCalls);
    expect(slow).toMatchObject({ id: 'call_slow', unanswered: true });
    expect(api?.unanswered).toBeUndefined();
    const turns = splitTurns(session.messages);
    expect(turns[0]?.results).toEqual([expect.objectContaining({ callId: 'call_slow', synthetic: true })]);
    const after = turns[1]?.context ?? [];
    const closing = after.find((m) => m.role === 'tool');
    expect(closing?.parts).toEqual([
      expect.objectContaining({ callId: 'call_slow', output: unansweredOutput }),
    ]);
  });

  it('a compaction with a replacement history: later turns see exactly that history, not the transcript', () => {
    const { session, notes } = only('compaction.jsonl');
    const m = session.messages;
    expect(shape(m)).toEqual([
      'system*',
      'system*',
      'user*',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      // The environment context Codex regenerated for the replacement (it differs from the first one).
      'user*',
      // Model text of the replacement that no stored message is: context the harness put there, not a turn.
      'assistant*',
      'user*!',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(texts(m[11] as Message)).toEqual(['A turn nobody wrote.']);
    const summary = m[12] as Message;
    expect(summary.parts).toEqual([
      { type: 'reasoning', text: '', redacted: true, signature: 'gAAAAcompacted' },
    ]);
    expect(summary.source).toEqual({ file: join(fixtures, 'compaction.jsonl'), line: 18 });
    // The replacement: permissions, the new environment, the first prompt, its answer, the text nobody wrote, the
    // second prompt (the earlier copies are the same messages); the instructions go with every request. Then the
    // summary itself, where the compaction item was: last, as Codex sends `[…history, compaction]`.
    const kept = [m[0], m[1], m[10], m[3], m[6], m[11], m[7]] as Message[];
    expect(summary.preserved).toEqual([...kept, summary].map((k) => k.nativeId));
    const turns = splitTurns(m);
    // the copied text is no turn: five, as before the compaction kept it
    expect(turns.map((t) => t.messageIndex)).toEqual([4, 6, 8, 13, 15]);
    expect(turns[3]?.context).toEqual([...kept, summary]);
    expect(turns[4]?.context).toEqual([...kept, summary, m[13], m[14]]);
    // Turns before the compaction are untouched by it.
    expect(turns[2]?.context).toEqual(m.slice(0, 8));
    expect(notes).toEqual([]);
  });

  it('a compaction of older builds (summary text only): later turns see instructions, context, prompts, summary', () => {
    const { session, notes } = only('compaction-legacy.jsonl');
    const m = session.messages;
    const summary = m.find((x) => x.compaction) as Message;
    expect(summary).toMatchObject({ role: 'user', injected: true });
    expect(texts(summary)).toEqual(['Summary: the orders migration was written in priv/migrations.']);
    const turns = splitTurns(m);
    expect(turns[1]?.context.map((x) => texts(x)[0]?.slice(0, 20))).toEqual([
      'Summary: the orders ',
      'You are Codex, a cod',
      '<environment_context',
      'Write the orders mig',
      'Run it.',
    ]);
    expect(notes[0]).toMatch(/^compaction without a replacement history \(line 8\)/);
  });

  it('counts unknown line and item types in notes and reads the rest', () => {
    const { session, notes, warnings } = only('unknown-types.jsonl');
    expect(warnings).toEqual([]);
    // world_state is known since 0.169 (nothing the model saw): read past without a note.
    expect(notes).toEqual([
      "1 line(s) of unknown type 'inter_agent_communication' not read",
      "1 response item(s) of unknown type 'hologram_call' not read",
    ]);
    expect(shape(session.messages)).toEqual(['system*', 'user', 'assistant']);
  });

  it('says what is missing with file:line, skips what cannot be used and reads the rest', () => {
    const file = join(fixtures, 'missing-fields.jsonl');
    const { session, warnings, skipped, lines } = only('missing-fields.jsonl');
    expect(warnings).toEqual([
      { file, line: 4, message: 'message without a role or content; skipped' },
      { file, line: 5, message: 'function_call without a call_id; kept, but no output can answer it' },
      {
        file,
        line: 6,
        message: 'function_call_output without a call_id; skipped (it cannot be paired with its call)',
      },
      { file, line: 7, message: 'not a rollout record (no "type" and "payload"); skipped' },
      { file, line: 8, message: 'not a rollout record (no "type" and "payload"); skipped' },
    ]);
    expect([lines, skipped]).toEqual([10, 4]);
    expect(shape(session.messages)).toEqual(['system*', 'user', 'assistant']);
    expect(session.messages.flatMap(toolCalls)).toEqual([
      { type: 'tool_call', id: 'line-5', name: 'exec_command', input: {}, unanswered: true },
    ]);
  });

  it('reads the pre-September-2025 layout: bare session meta and items, record_type state lines', () => {
    const { session, warnings } = only(
      'rollout-2025-06-01T09-00-00-0196a000-0000-7000-8000-00000000000a.jsonl',
    );
    expect(warnings).toEqual([]);
    expect(session).toMatchObject({
      sourceId: '0196a000-0000-7000-8000-00000000000a',
      startedAt: '2025-06-01T09:00:00.000Z',
    });
    expect(shape(session.messages)).toEqual(['system*', 'user', 'assistant', 'tool', 'assistant']);
    expect(texts(session.messages[0])).toEqual(['Follow AGENTS.md.']);
    expect(session.messages.flatMap(toolCalls)[0]?.input).toEqual({ command: ['ls'] });
  });

  it('a sub-agent is a child session; its copy of the parent’s history gets the parent’s native ids', () => {
    const parent = only('subagents/rollout-2026-03-02T09-00-00-0196b000-0000-7000-8000-00000000000a.jsonl');
    const child = only('subagents/rollout-2026-03-02T09-00-02-0196b000-0000-7000-8000-00000000000c.jsonl');
    expect(parent.spawns).toEqual([
      {
        parentSourceId: '0196b000-0000-7000-8000-00000000000a',
        childSourceId: '0196b000-0000-7000-8000-00000000000c',
        toolCallId: 'call_spawn',
      },
    ]);
    expect(child.session).toMatchObject({
      kind: 'subagent',
      parentId: parent.session.id,
      title: 'Sartre (explorer)',
      startedAt: '2026-03-02T09:00:02.005Z',
    });
    // The copied parent history spawns nothing of the child's.
    expect(child.spawns).toEqual([]);
    const ids = (s: ParsedSession) => s.messages.map((m) => m.nativeId);
    // Instructions, permissions, prompt, first turn and its output: copied, same ids; then each its own.
    expect(ids(child.session).slice(0, 5)).toEqual(ids(parent.session).slice(0, 5));
    expect(ids(child.session)[5]).not.toBe(ids(parent.session)[5]);
    expect(texts(child.session.messages[5])).toEqual(['Read src/cart.ts and say whether total() is right.']);
  });

  it('gives every message a native id that is unique in its session and the same on every read', () => {
    const a = only('compaction.jsonl').session.messages.map((m) => m.nativeId);
    const b = only('compaction.jsonl').session.messages.map((m) => m.nativeId);
    expect(a).toEqual(b);
    expect(new Set(a).size).toBe(a.length);
  });
});

describe('codex adapter on files written here (damaged or unusual)', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());
  const body = (name: string) => readFileSync(join(fixtures, name), 'utf8').trimEnd().split('\n');

  it('a final answer given after a web search, kept by a compaction, is in the contexts after it', () => {
    const lines = [
      {
        type: 'session_meta',
        payload: { id: '0199aaaa-0000-7000-8000-000000000001', cwd: '/w', cli_version: '0.169.0' },
      },
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'Find the logo rules.' }],
        },
      },
      { type: 'response_item', payload: { type: 'reasoning', summary: [], encrypted_content: 'gAAAA1' } },
      {
        type: 'response_item',
        payload: {
          type: 'web_search_call',
          status: 'completed',
          action: { type: 'search', query: 'logo rules' },
        },
      },
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'The logo needs 16px of clear space.' }],
          phase: 'final_answer',
        },
      },
      {
        type: 'compacted',
        payload: {
          message: '',
          replacement_history: [
            {
              type: 'message',
              role: 'user',
              content: [{ type: 'input_text', text: 'Find the logo rules.' }],
            },
            {
              type: 'message',
              role: 'assistant',
              content: [{ type: 'output_text', text: 'The logo needs 16px of clear space.' }],
            },
            { type: 'compaction', encrypted_content: 'gAAAAsummary' },
          ],
        },
      },
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'And the colours?' }],
        },
      },
      {
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Blue and white.' }],
          phase: 'final_answer',
        },
      },
    ].map((line, i) => JSON.stringify({ timestamp: `2026-03-01T15:00:0${i}.000Z`, ...line }));
    const file = join(dir.path, 'rollout-2026-03-01T15-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { sessions, notes } = parse(file);
    const turns = splitTurns((sessions[0] as ParsedSession).messages);
    expect(turns).toHaveLength(2);
    // the search's turn is whole; after the compaction the model saw the prompt and that answer alone, then the
    // summary and the new prompt
    expect(turns[1]?.context.map((message) => [message.role, texts(message)])).toEqual([
      ['user', ['Find the logo rules.']],
      ['assistant', ['The logo needs 16px of clear space.']],
      ['user', []],
      ['user', ['And the colours?']],
    ]);
    expect(notes).toEqual([]);
  });

  it('reports a corrupt line in the middle with its line number and reads the rest', () => {
    const file = join(dir.path, 'corrupt.jsonl');
    const lines = body('basic.jsonl');
    lines.splice(5, 0, '{"timestamp":"2026-03-01T10:00:00.025Z","type":"response_item","payload":{"type":');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { sessions, warnings, skipped } = parse(file);
    expect(warnings).toEqual([
      { file, line: 6, message: expect.stringMatching(/^not valid JSON \(.+\); skipped$/) },
    ]);
    expect(skipped).toBe(1);
    expect(splitTurns(sessions[0]?.messages ?? [])).toHaveLength(2);
  });

  it('leaves a torn last line for the next read, and parsedBytes stops before it', () => {
    const file = join(dir.path, 'live.jsonl');
    const lines = body('basic.jsonl');
    const last = lines.pop() as string;
    const complete = `${lines.join('\n')}\n`;
    writeFileSync(file, `${complete}${last.slice(0, 40)}`);
    const { warnings, parsedBytes, lines: read } = parse(file);
    expect(warnings).toEqual([
      { file, line: 23, message: 'last line is incomplete (still being written?); not read yet' },
    ]);
    expect(parsedBytes).toBe(Buffer.byteLength(complete));
    expect(read).toBe(22);
  });

  it('names a session whose session_meta has no id after the thread id in the file name', () => {
    const file = join(dir.path, 'rollout-2026-03-01T10-00-00-0196a000-0000-7000-8000-0000000000ff.jsonl');
    const lines = body('basic.jsonl');
    lines[0] = (lines[0] as string).replace('"id":"0196a000-0000-7000-8000-000000000001",', '');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { sessions, warnings } = parse(file);
    expect(warnings).toEqual([
      { file, line: 1, message: 'session_meta has no id; the session is named after the file' },
    ]);
    expect(sessions[0]?.sourceId).toBe('0196a000-0000-7000-8000-0000000000ff');
  });

  it('the user item an event_msg user_message mirrors is the prompt, even when it looks like Codex context', () => {
    const file = join(dir.path, 'skill.jsonl');
    const lines = body('basic.jsonl');
    const typed = '<skill>review</skill> Review the cart module.';
    lines[5] = (lines[5] as string).replace('Why does the cart test fail?', typed);
    lines[6] = (lines[6] as string).replace('Why does the cart test fail?', typed);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const messages = parse(file).sessions[0]?.messages ?? [];
    expect(shape(messages).slice(0, 5)).toEqual(['system*', 'system*', 'user*', 'user*', 'user']);
    expect(texts(messages[4])).toEqual([typed]);
  });

  it('a file with only its session_meta gives no session, and says so', () => {
    const file = join(dir.path, 'empty-session.jsonl');
    writeFileSync(file, `${body('basic.jsonl')[0]}\n`);
    const { sessions, notes } = parse(file);
    expect(sessions).toEqual([]);
    expect(notes).toEqual(['no conversation in the file (only its session metadata)']);
  });

  it('replaces invalid UTF-8 and says where', () => {
    const file = join(dir.path, 'latin1.jsonl');
    const lines = body('basic.jsonl');
    const prompt = Buffer.from(lines[5] as string, 'utf8');
    const at = prompt.indexOf('cart');
    prompt[at] = 0xe9;
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(`${lines.slice(0, 5).join('\n')}\n`),
        prompt,
        Buffer.from(`\n${lines.slice(6).join('\n')}\n`),
      ]),
    );
    const { sessions, warnings } = parse(file);
    expect(warnings).toEqual([{ file, line: 6, message: 'invalid UTF-8 replaced with U+FFFD' }]);
    const part = sessions[0]?.messages[4]?.parts[0] as Part;
    expect(part).toEqual({ type: 'text', text: 'Why does the \uFFFDart test fail?' });
  });
});
