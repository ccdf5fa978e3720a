// The mapping of opencode's message and part shapes, on one hand-written session (test/fixtures/opencode/
// quirks.json, `opencode export` shape) read in three generations: the export itself, the JSON storage tree
// and the V1 tables of opencode.db. Every quirk must come out the same whichever generation holds it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { type Message, outputText, type Part, toolCalls, toolResults } from '../../../src/model/session.js';
import { splitTurns, unansweredOutput } from '../../../src/model/turns.js';
import { opencode } from '../../../src/sources/opencode/index.js';
import type { FileResult, ParsedSession } from '../../../src/sources/types.js';
import { root } from '../../helpers/cli.js';
import { type ExportSession, writeTree, writeV1 } from '../../helpers/opencode-store.js';

const fixtures = join(root, 'test', 'fixtures', 'opencode');
const quirks = JSON.parse(readFileSync(join(fixtures, 'quirks.json'), 'utf8')) as ExportSession;
const child = JSON.parse(readFileSync(join(fixtures, 'child.json'), 'utf8')) as ExportSession;
const scratch = mkdtempSync(join(tmpdir(), 'opencode-parse-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const read = (file: string) => {
  const result = opencode.parseFile(file);
  return { ...result, sessions: [...result.sessions] } as FileResult & { sessions: ParsedSession[] };
};

/** The two sessions and what their units said, as each generation gives them. */
function load(generation: 'export' | 'tree' | 'v1') {
  if (generation === 'export') {
    const main = read(join(fixtures, 'quirks.json'));
    const sub = read(join(fixtures, 'child.json'));
    return { main: main.sessions[0], child: sub.sessions[0], results: [main, sub] };
  }
  const dir = join(scratch, generation);
  if (generation === 'tree') {
    writeTree(dir, [quirks, child]);
    const session = (id: string) => join(dir, 'storage', 'session', 'global', `${id}.json`);
    const main = read(session(quirks.info.id));
    const sub = read(session(child.info.id));
    return { main: main.sessions[0], child: sub.sessions[0], results: [main, sub] };
  }
  writeV1(join(dir, 'opencode.db'), [quirks, child]);
  const all = read(join(dir, 'opencode.db'));
  const byId = (id: string) => all.sessions.find((s) => s.sourceId === id);
  return { main: byId(quirks.info.id), child: byId(child.info.id), results: [all] };
}

const text = (message: Message | undefined) =>
  (message?.parts ?? [])
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text);
const byNative = (session: ParsedSession, id: string) => session.messages.find((m) => m.nativeId === id);

describe.each(['export', 'tree', 'v1'] as const)('opencode %s', (generation) => {
  const { main, child: sub, results } = load(generation);
  if (!main || !sub) throw new Error(`${generation}: sessions missing`);

  it('keeps the session metadata: id, cwd from session.directory, title, version, times', () => {
    expect(main).toMatchObject({
      id: sessionId('opencode', quirks.info.id),
      agent: 'opencode',
      sourceId: quirks.info.id,
      kind: 'main',
      cwd: '/home/ada/todo-api',
      title: 'Quirks of opencode storage',
      version: '1.1.49',
      startedAt: new Date(1770000000000).toISOString(),
      origin: generation === 'export' ? 'mirror' : 'file',
    });
  });

  it('gives the user what the model saw: ignored text and text/plain files left out, images kept, synthetic text injected', () => {
    const prompt = byNative(main, 'msg_001');
    expect(prompt?.injected).toBeUndefined();
    expect(prompt?.parts).toEqual([
      { type: 'text', text: 'Fix the limit bug, see the screenshot and @src/todos.js' },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ]);
    const expansion = byNative(main, 'msg_001#1');
    expect(expansion?.injected).toBe(true);
    expect(text(expansion)[0]).toMatch(/^Called the Read tool/);
    expect(JSON.stringify(main.messages)).not.toContain('ignored note');
  });

  it('makes one model turn per step: an assistant message holding two steps becomes two turns', () => {
    const first = byNative(main, 'msg_002');
    const second = byNative(main, 'msg_002#1');
    expect(first?.parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool_call']);
    expect(first?.parts[0]).toEqual({ type: 'reasoning', text: 'Find the slice.', signature: 'sig-1' });
    expect(second?.parts.map((p) => p.type)).toEqual(['tool_call', 'tool_call']);
    // Usage from each step's step-finish, never the message total.
    expect(first?.usage).toEqual({
      inputTokens: 100,
      outputTokens: 10,
      cacheReadTokens: 50,
      cacheWriteTokens: 5,
    });
    expect(second?.usage).toEqual({
      inputTokens: 120,
      outputTokens: 12,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(first?.model).toBe('claude-sonnet-4');
    const turns = splitTurns(main.messages);
    expect(turns.map((t) => t.response.nativeId)).toEqual([
      'msg_002',
      'msg_002#1',
      'msg_003',
      'msg_005',
      'msg_007',
      'msg_010',
    ]);
  });

  it('pairs each call with the result in the same tool part: outputs, errors, and the cleared marker of a pruned output', () => {
    const results = (id: string) => toolResults(byNative(main, `${id}:results`) as Message);
    expect(results('msg_002')).toEqual([
      {
        type: 'tool_result',
        callId: 'toolu_read',
        name: 'read',
        output: '[Old tool result content cleared]',
        isError: false,
      },
    ]);
    expect(results('msg_002#1')).toEqual([
      {
        type: 'tool_result',
        callId: 'toolu_bash',
        name: 'bash',
        output: '1 failing',
        isError: false,
        // What opencode's UI kept beside the output: given back as it was when the call is replayed.
        display: { title: 'npm test', metadata: { exit: 1, output: '1 failing' } },
      },
      {
        type: 'tool_result',
        callId: 'toolu_glob',
        name: 'glob',
        output: 'ripgrep execution failed',
        isError: true,
      },
    ]);
    // An interrupted tool with output is sent as a normal result with that output.
    expect(results('msg_003')).toEqual([
      {
        type: 'tool_result',
        callId: 'toolu_edit',
        name: 'edit',
        output: 'partial edit output',
        isError: false,
      },
    ]);
  });

  it('leaves pending and running calls unanswered; contexts close them with a synthetic error', () => {
    const calls = toolCalls(byNative(main, 'msg_003') as Message);
    expect(calls.map((c) => [c.id, c.unanswered ?? false])).toEqual([
      ['toolu_edit', false],
      ['toolu_run', true],
      ['toolu_pend', true],
    ]);
    const turn = splitTurns(main.messages).find((t) => t.response.nativeId === 'msg_003');
    expect(turn?.results.map((r) => [r.callId, r.synthetic ?? false])).toEqual([
      ['toolu_edit', false],
      ['toolu_run', true],
      ['toolu_pend', true],
    ]);
    expect(outputText(turn?.results[1]?.output ?? '')).toBe(unansweredOutput);
  });

  it('treats the summary as a compaction: later turns see the summary and the kept tail, not the history', () => {
    const trigger = byNative(main, 'msg_006');
    expect(trigger).toMatchObject({ role: 'user', injected: true });
    expect(text(trigger)).toEqual(['What did we do so far?']);
    const summary = byNative(main, 'msg_007');
    expect(summary).toMatchObject({ role: 'assistant', compaction: true });
    expect(summary?.preserved).toEqual(['msg_004', 'msg_005', 'msg_005:results']);
    const turns = splitTurns(main.messages);
    // The summary call itself saw the whole history.
    const summarizing = turns.find((t) => t.response.nativeId === 'msg_007');
    expect(summarizing?.context.at(-1)?.nativeId).toBe('msg_006');
    const after = turns.find((t) => t.response.nativeId === 'msg_010');
    expect(after?.context.map((m) => m.nativeId)).toEqual([
      'msg_007',
      'msg_004',
      'msg_005',
      'msg_005:results',
      'msg_008',
    ]);
    expect(byNative(main, 'msg_008')?.injected).toBe(true);
  });

  it('keeps a failed model call out of every context, and an aborted one with content in', () => {
    const failed = byNative(main, 'msg_009');
    expect(failed).toMatchObject({ role: 'assistant', injected: true });
    expect(text(failed)).toEqual(['APIError: overloaded']);
    const aborted = byNative(main, 'msg_010');
    expect(aborted?.injected).toBeUndefined();
    expect(text(aborted)).toEqual(['A partial answer before the user pressed Esc.']);
  });

  it('leaves out messages undone by a revert, and says so', () => {
    expect(byNative(main, 'msg_011')).toBeUndefined();
    expect(byNative(main, 'msg_012')).toBeUndefined();
    const notes = results.flatMap((r) => r.notes);
    expect(notes).toContain('2 message(s) undone by a revert (still stored by opencode) left out');
  });

  it('counts unknown part types in a note and keeps the rest', () => {
    const notes = results.flatMap((r) => r.notes);
    expect(notes).toContain("1 part(s) of unknown type 'mystery' left out of the conversation");
  });

  it('links the sub-agent: parentId from parentID, and the task call that spawned it', () => {
    expect(sub).toMatchObject({
      kind: 'subagent',
      parentId: sessionId('opencode', quirks.info.id),
      title: 'Check tests (@general subagent)',
    });
    const spawns = results.flatMap((r) => r.spawns);
    expect(spawns).toEqual([
      { parentSourceId: quirks.info.id, childSourceId: child.info.id, toolCallId: 'toolu_task' },
    ]);
    // Read in one unit with its parent, the child also carries the call itself.
    if (generation === 'v1') expect(sub.parentToolCallId).toBe('toolu_task');
  });

  it('traces every message back to its row or file', () => {
    const source = byNative(main, 'msg_003')?.source;
    if (generation === 'v1') expect(source).toMatchObject({ table: 'message', row: 'msg_003' });
    if (generation === 'tree')
      expect(source).toMatchObject({
        file: expect.stringMatching(/storage\/message\/ses_1quirks\w+\/msg_003\.json$/),
        line: 1,
      });
    if (generation === 'export') {
      const line =
        readFileSync(join(fixtures, 'quirks.json'), 'utf8')
          .split('\n')
          .findIndex((l) => l.includes('"msg_003"')) + 1;
      expect(source).toEqual({ file: join(fixtures, 'quirks.json'), line });
    }
  });
});

// Real output of an opencode 1.1.49 server, copied from shared/fixtures/opencode (SOURCES.md there says where from).
const captured = join(root, 'test', 'fixtures', 'real', 'opencode', 'sandbox-agent-native');

describe('opencode export of the API shape', () => {
  it('reads a real 1.1.49 `GET /session/{id}/message` list ([{info, parts}]): one step per assistant message', () => {
    const file = join(captured, 'messages-after-2.json');
    expect(opencode.detect(file)).toBe(true);
    const [session] = read(file).sessions;
    expect(session?.sourceId).toBe('ses_3ce42bdb9ffeEIUUu08AuKTJms');
    expect(session?.cwd).toBeUndefined();
    const turns = splitTurns(session?.messages ?? []);
    expect(turns).toHaveLength(3);
    expect(turns[1]?.response.parts).toMatchObject([
      { type: 'tool_call', name: 'bash', input: { command: 'ls -la' } },
    ]);
    expect(outputText(turns[1]?.results[0]?.output ?? '')).toContain('capture-native.ts');
    expect(turns[0]?.response.usage).toEqual({
      inputTokens: 2,
      outputTokens: 7,
      cacheReadTokens: 13540,
      cacheWriteTokens: 0,
    });
  });

  it('does not claim JSON that is not an export', () => {
    const info = join(captured, 'session-details.json');
    expect(opencode.detect(info)).toBe(false);
    expect(opencode.detect(join(root, 'package.json'))).toBe(false);
  });
});
