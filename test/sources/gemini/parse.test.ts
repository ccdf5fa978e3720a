// The Gemini CLI adapter on small hand-made logs, one quirk each: upserts, rewinds, results kept once, a
// compression, a stub beside the longer file of the same session, and bad input reported with file:line while
// the rest is kept.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isToolResult, type Message, toolCalls } from '../../../src/model/session.js';
import { turns } from '../../../src/model/turns.js';
import { gemini } from '../../../src/sources/gemini/index.js';
import { geminiRoots } from '../../../src/sources/gemini/paths.js';
import { tempDir } from '../../helpers/cli.js';

const dir = tempDir('gemini-parse-');
afterAll(() => dir.remove());
const chats = join(dir.path, 'tmp', 'demo', 'chats');
mkdirSync(chats, { recursive: true });

const metadata = (sessionId: string) => ({
  sessionId,
  projectHash: 'd'.repeat(64),
  startTime: '2026-12-02T10:00:00.000Z',
  lastUpdated: '2026-12-02T10:00:00.000Z',
  kind: 'main',
});
const context = { id: 'ctx', type: 'user', content: [{ text: '<session_context>\nToday is …' }] };
const prompt = (id: string, text: string) => ({ id, type: 'user', content: [{ text }] });
const answer = (id: string, text: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'gemini',
  content: text,
  model: 'gemini-3.8-flash',
  ...extra,
});
const readCall = (id: string, output: Record<string, unknown>, status = 'success') => ({
  id: `read_file__${id}`,
  name: 'read_file',
  args: { file_path: 'a.txt' },
  status,
  result: [{ functionResponse: { id: `read_file__${id}`, name: 'read_file', response: output } }],
});

let count = 0;
/** Writes the records (objects, or raw text for a line) to a new session file and parses it. */
function parse(records: unknown[], options: { name?: string; end?: string } = {}) {
  count++;
  const file = join(
    chats,
    options.name ?? `session-2026-12-02T10-00-${String(count).padStart(8, '0')}.jsonl`,
  );
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');
  writeFileSync(file, text + (options.end ?? '\n'));
  const result = gemini.parseFile(file);
  return { file, ...result, sessions: [...result.sessions] };
}

const texts = (message: Message | undefined) =>
  (message?.parts ?? []).map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type));

describe('Gemini CLI logs: the record kinds', () => {
  it('takes the last content of a message written twice, at the place it was first written', () => {
    const { sessions, warnings } = parse([
      metadata('s-upsert'),
      { $set: { messages: [context] } },
      prompt('u1', 'read a.txt'),
      answer('g1', 'Reading.'),
      { $set: { lastUpdated: 'x' } },
      answer('g1', 'Reading.', { toolCalls: [readCall('read_file_1_0', { output: 'A' })] }),
      {
        id: 'r1',
        type: 'user',
        content: [
          {
            functionResponse: {
              id: 'read_file__read_file_1_0',
              name: 'read_file',
              response: { output: 'A' },
            },
          },
        ],
      },
      answer('g2', 'It says A.'),
    ]);
    expect(warnings).toEqual([]);
    const messages = sessions[0]?.messages ?? [];
    expect(messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant']);
    expect(messages[2]?.source).toMatchObject({ line: 4, endLine: 6 });
    expect(toolCalls(messages[2] as Message)[0]?.id).toBe('read_file_1_0');
    // The logged result message repeats toolCalls[].result: kept once.
    expect(messages.flatMap((m) => m.parts.filter(isToolResult))).toHaveLength(1);
  });

  it('takes a result from the following user message when the call has none of its own', () => {
    const call = { ...readCall('read_file_2_0', {}), result: undefined };
    const { sessions } = parse([
      metadata('s-late-result'),
      prompt('u1', 'go'),
      answer('g1', '', { toolCalls: [call] }),
      {
        id: 'r1',
        type: 'user',
        content: [
          {
            functionResponse: {
              id: 'read_file__read_file_2_0',
              name: 'read_file',
              response: { output: 'B' },
            },
          },
        ],
      },
      answer('g2', 'done'),
    ]);
    const results = (sessions[0]?.messages ?? []).flatMap((m) => m.parts.filter(isToolResult));
    expect(results.map((r) => [r.callId, r.output, r.isError])).toEqual([['read_file_2_0', 'B', false]]);
  });

  it('drops a message and all after it at a $rewindTo, and reads on', () => {
    const { sessions, warnings } = parse([
      metadata('s-rewind'),
      prompt('u1', 'first'),
      answer('g1', 'one'),
      prompt('u2', 'second'),
      answer('g2', 'two'),
      { $rewindTo: 'u2' },
      prompt('u3', 'instead'),
      answer('g3', 'three'),
    ]);
    expect(warnings).toEqual([]);
    expect((sessions[0]?.messages ?? []).map((m) => texts(m)[0])).toEqual([
      'first',
      'one',
      'instead',
      'three',
    ]);
  });

  it('keeps notices (info, error, warning) out of the conversation and counts them; an unknown type is named', () => {
    const { sessions, notes, skipped } = parse([
      metadata('s-notices'),
      prompt('u1', 'hi'),
      { id: 'i1', type: 'info', content: 'Conversation checkpoint saved with tag: mytag.' },
      { id: 'e1', type: 'error', content: 'quota exceeded' },
      { id: 'p1', type: 'plan', content: 'a new kind' },
      answer('g1', 'hello'),
    ]);
    expect((sessions[0]?.messages ?? []).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(notes).toEqual([
      "2 info/error/warning notice(s) of the CLI's UI, not model context",
      "1 message(s) of unknown type 'plan' not read",
    ]);
    expect(skipped).toBe(1);
  });

  it('marks a failed call (status error) as an error, and a non-zero shell exit not', () => {
    const shell = {
      id: 'run_shell_command__run_shell_command_3_1',
      name: 'run_shell_command',
      args: { command: 'ls /nope' },
      status: 'success',
      result: [
        {
          functionResponse: {
            id: 'run_shell_command__run_shell_command_3_1',
            name: 'run_shell_command',
            response: { output: 'Exit Code: 2' },
          },
        },
      ],
    };
    const { sessions } = parse([
      metadata('s-errors'),
      prompt('u1', 'go'),
      answer('g1', '', {
        toolCalls: [readCall('read_file_3_0', { error: 'File not found: a.txt' }, 'error'), shell],
      }),
    ]);
    const results = (sessions[0]?.messages ?? []).flatMap((m) => m.parts.filter(isToolResult));
    expect(results.map((r) => [r.callId, r.isError, r.output])).toEqual([
      ['read_file_3_0', true, 'File not found: a.txt'],
      ['run_shell_command_3_1', false, 'Exit Code: 2'],
    ]);
  });

  it('takes the summary written by --list-sessions as the title, else the first prompt', () => {
    const named = parse([
      metadata('s-title'),
      prompt('u1', 'fix the bug\nin app.py'),
      answer('g1', 'ok'),
      { $set: { summary: 'Fix app.py greeting' } },
    ]);
    const unnamed = parse([
      metadata('s-untitled'),
      prompt('u1', 'fix the bug\nin app.py'),
      answer('g1', 'ok'),
    ]);
    expect(named.sessions[0]?.title).toBe('Fix app.py greeting');
    expect(unnamed.sessions[0]?.title).toBe('fix the bug');
  });
});

describe('Gemini CLI logs: history rewrites', () => {
  it('stores a compression as a compaction: the snapshot, the acknowledgement (no turn), the kept tail pointing at the originals', () => {
    const { sessions, notes } = parse([
      metadata('s-compress'),
      { $set: { messages: [context] } },
      prompt('u1', 'old prompt'),
      answer('g1', 'old answer'),
      prompt('u2', 'kept prompt'),
      answer('g2', 'kept answer'),
      {
        $set: {
          messages: [
            context,
            prompt('n1', '<state_snapshot>summary</state_snapshot>'),
            { id: 'n2', type: 'gemini', content: [{ text: 'Got it. Thanks for the additional context!' }] },
            prompt('n3', 'kept prompt'),
            { id: 'n4', type: 'gemini', content: [{ text: 'kept answer' }] },
            { id: 'n5', type: 'gemini', content: [{ text: 'an answer never written before' }] },
          ],
        },
      },
      prompt('u3', 'next'),
      answer('g3', 'after'),
    ]);
    const messages = sessions[0]?.messages ?? [];
    const snapshot = messages.find((m) => m.compaction);
    expect(snapshot?.preserved).toEqual(['s-compress/ctx', 'n1', 'n2', 'u2', 'g2']);
    expect(notes).toEqual([
      '1 model message(s) kept by a compression match no earlier message; later contexts leave them out',
    ]);
    const last = [...turns(messages)].at(-1);
    expect(last?.context.map((m) => texts(m)[0])).toEqual([
      '<session_context>\nToday is …',
      '<state_snapshot>summary</state_snapshot>',
      'Got it. Thanks for the additional context!',
      'kept prompt',
      'kept answer',
      'next',
    ]);
  });

  it('sends a regenerated session context from a resume on, the history after it', () => {
    const fresh = { ...context, content: [{ text: '<session_context>\nToday is tomorrow' }] };
    const { sessions } = parse([
      metadata('s-resume'),
      { $set: { messages: [context] } },
      prompt('u1', 'first'),
      answer('g1', 'one'),
      metadata('s-resume'),
      { $set: { messages: [fresh] } },
      {
        $set: {
          messages: [fresh, prompt('u1', 'first'), { id: 'g1', type: 'gemini', content: [{ text: 'one' }] }],
        },
      },
      prompt('u2', 'second'),
      answer('g2', 'two'),
    ]);
    const [before, after] = [...turns(sessions[0]?.messages ?? [])];
    expect(before?.context.map((m) => texts(m)[0])).toEqual(['<session_context>\nToday is …', 'first']);
    expect(after?.context.map((m) => texts(m)[0])).toEqual([
      '<session_context>\nToday is tomorrow',
      'first',
      'one',
      'second',
    ]);
    // The first writing's model stands where the rewrite dropped it.
    expect(sessions[0]?.messages.find((m) => m.nativeId === 'g1')?.model).toBe('gemini-3.8-flash');
    expect(sessions[0]?.startedAt).toBe('2026-12-02T10:00:00.000Z');
  });

  it('leaves a stub of the same session (its header and context) to the longer file, in either order', () => {
    const longer = parse(
      [metadata('abcdef12-0000'), { $set: { messages: [context] } }, prompt('u1', 'hi'), answer('g1', 'yo')],
      {
        name: 'session-2026-12-02T10-00-abcdef12.jsonl',
      },
    );
    const stub = parse([metadata('abcdef12-0000'), { $set: { messages: [context] } }], {
      name: 'session-2026-12-02T10-01-abcdef12.jsonl',
    });
    expect(longer.sessions).toHaveLength(1);
    expect(stub.sessions).toEqual([]);
    // A copy that holds the conversation too, but less of it, gives way as well.
    const copy = parse([metadata('abcdef12-0000'), prompt('u1', 'hi')], {
      name: 'session-2026-12-02T10-02-abcdef12.jsonl',
    });
    expect(copy.sessions).toEqual([]);
    expect(copy.notes).toEqual([
      'the same session as session-2026-12-02T10-00-abcdef12.jsonl, which is longer: read from there',
    ]);
    expect(gemini.parseFile(longer.file).notes).toEqual([]);
  });
});

describe('Gemini CLI logs: bad input is reported with file:line, the rest kept', () => {
  it('leaves a torn last line for the next ingest', () => {
    const { file, sessions, warnings, parsedBytes, lines } = parse(
      [metadata('s-torn'), prompt('u1', 'hi'), answer('g1', 'yo'), '{"id":"u2","type":"user","cont'],
      { end: '' },
    );
    expect(warnings).toEqual([
      { file, line: 4, message: 'last line is incomplete (still being written?); not read yet' },
    ]);
    expect(sessions[0]?.messages).toHaveLength(2);
    expect(lines).toBe(3);
    expect(parsedBytes).toBe(
      [metadata('s-torn'), prompt('u1', 'hi'), answer('g1', 'yo')]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join('').length,
    );
  });

  it('applies a $set that comes before any metadata, saying so', () => {
    const { file, sessions, warnings } = parse([
      { $set: { summary: 'early' } },
      metadata('s-early'),
      prompt('u1', 'hi'),
      answer('g1', 'yo'),
    ]);
    expect(gemini.detect(file)).toBe(true);
    expect(warnings).toEqual([
      { file, line: 1, message: '"$set" before any metadata record; applied anyway' },
    ]);
    expect(sessions[0]).toMatchObject({ sourceId: 's-early', title: 'early' });
    expect(sessions[0]?.messages).toHaveLength(2);
  });

  it('skips a record of an unknown kind, and records missing their fields', () => {
    const { file, sessions, warnings, skipped } = parse([
      metadata('s-unknown'),
      { $checkpoint: { at: 3 } },
      prompt('u1', 'hi'),
      { id: 'x1', content: 'no type' },
      { id: 'x2', type: 'gemini', timestamp: 't' },
      answer('g1', 'yo'),
    ]);
    expect(warnings).toEqual([
      { file, line: 2, message: 'unknown record kind (keys: $checkpoint); skipped' },
      { file, line: 4, message: 'message record without a "type"; skipped' },
      { file, line: 5, message: 'gemini message x2 has no content; skipped' },
    ]);
    expect(skipped).toBe(3);
    expect(sessions[0]?.messages.map((m) => texts(m)[0])).toEqual(['hi', 'yo']);
  });

  it('removes nothing at a $rewindTo naming a message it does not have', () => {
    const { file, sessions, warnings } = parse([
      metadata('s-rewind-unknown'),
      prompt('u1', 'hi'),
      answer('g1', 'yo'),
      { $rewindTo: 'nope' },
      prompt('u2', 'more'),
    ]);
    expect(warnings).toEqual([
      {
        file,
        line: 4,
        message: '"$rewindTo" names message nope, which is not in the session; nothing removed',
      },
    ]);
    expect(sessions[0]?.messages.map((m) => texts(m)[0])).toEqual(['hi', 'yo', 'more']);
  });

  it('says so of a legacy file that is not valid JSON', () => {
    const file = join(chats, 'session-2026-12-02T10-00-bad00000.json');
    writeFileSync(file, '{"sessionId":"s","messages":[');
    const result = gemini.parseFile(file);
    expect(result.warnings).toEqual([
      { file, line: 1, message: 'not valid JSON (a legacy session file); skipped' },
    ]);
    expect([...result.sessions]).toEqual([]);
  });
});

describe('Gemini CLI logs: where they are', () => {
  it('are looked for in ~/.gemini/tmp, when it exists', () => {
    expect(geminiRoots({ HOME: join(dir.path, 'nobody') })).toEqual([]);
    mkdirSync(join(dir.path, 'home', '.gemini', 'tmp'), { recursive: true });
    expect(geminiRoots({ HOME: join(dir.path, 'home') })).toEqual([join(dir.path, 'home', '.gemini', 'tmp')]);
  });
});
