// The Qwen Code adapter on the real 0.24.4 session (four runs into one file: a headless task, two --continue
// runs, a headless /compress) and on edited copies of it: counts against the raw file, the compressions, the
// resume, what the model saw of errors and what Qwen kept for its UI, and bad input.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Message, toolCalls, toolResults } from '../../../src/model/session.js';
import { turns } from '../../../src/model/turns.js';
import { qwen } from '../../../src/sources/qwen/index.js';
import { summaryAcknowledgement } from '../../../src/sources/qwen/parse.js';
import type { ParsedSession } from '../../../src/sources/types.js';
import { root, tempDir } from '../../helpers/cli.js';

const chats = 'test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects/-home-ada-projects-demo-app/chats';
const file = join(root, chats, 'a433a22d-6a3f-4757-a1ae-31e85c38a874.jsonl');
const lines = readFileSync(file, 'utf8').trim().split('\n');
const records = lines.map((line) => JSON.parse(line));

const parse = (path: string): { session: ParsedSession; result: ReturnType<typeof qwen.parseFile> } => {
  const result = qwen.parseFile(path);
  const [session] = [...result.sessions];
  if (!session) throw new Error('no session');
  return { session, result };
};
const text = (message: Message | undefined): string =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('the real Qwen Code 0.24.4 session', () => {
  const { session, result } = parse(file);

  it('is one session, named by its sessionId, with the counts of the raw file', () => {
    expect(result.lines).toBe(52);
    expect(result.skipped).toBe(0);
    expect(session).toMatchObject({
      agent: 'qwen',
      sourceId: 'a433a22d-6a3f-4757-a1ae-31e85c38a874',
      kind: 'main',
      cwd: '/home/ada/projects/demo-app',
      version: '0.24.4',
      title: 'TASK-A: explore this project, make a hello.txt, make the greeting friendlier, an',
      startedAt: '2026-12-01T19:51:46.135Z',
      endedAt: '2026-12-01T19:52:13.728Z',
    });
    const rawCalls = records.flatMap((r) =>
      r.type === 'assistant' ? r.message.parts.filter((p: object) => 'functionCall' in p) : [],
    );
    const rawResults = records.filter((r) => r.type === 'tool_result');
    const rawErrors = rawResults.filter((r) => r.toolCallResult.status === 'error');
    expect([rawCalls.length, rawResults.length, rawErrors.length]).toEqual([11, 11, 3]);
    expect(session.messages.flatMap(toolCalls)).toHaveLength(rawCalls.length);
    const results = session.messages.flatMap(toolResults);
    expect(results).toHaveLength(rawResults.length);
    expect(results.filter((r) => r.isError)).toHaveLength(rawErrors.length);
    expect(session.messages.filter((m) => m.role === 'assistant' && !m.injected)).toHaveLength(
      records.filter((r) => r.type === 'assistant').length,
    );
    // Besides them, Qwen's fixed acknowledgement of each compaction summary: harness text, no turn.
    expect(session.messages.filter((m) => m.role === 'assistant' && m.injected).map((m) => text(m))).toEqual([
      summaryAcknowledgement,
      summaryAcknowledgement,
    ]);
    // Every call answered, by the id its result names.
    expect(session.messages.flatMap(toolCalls).filter((call) => call.unanswered)).toEqual([]);
  });

  it('keeps the three prompts as typed (provenance real_user), reasoning as reasoning, in file order', () => {
    const prompts = session.messages.filter((m) => m.role === 'user' && !m.injected);
    expect(prompts.map(text)).toEqual([
      'TASK-A: explore this project, make a hello.txt, make the greeting friendlier, and try reading a missing file.',
      'TASK-B: read hello.txt again and tell me what it says.',
      'TASK-C: one more question after compaction.',
    ]);
    const first = session.messages.find((m) => m.role === 'assistant');
    expect(first?.parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool_call', 'tool_call']);
    expect(first?.nativeId).toBe(records[3].uuid);
  });

  it('stores what the model saw of a failure (the error text) and keeps the UI’s resultDisplay apart', () => {
    const results = session.messages.flatMap(toolResults);
    const missing = results.find((r) => r.callId.endsWith('_5_0'));
    expect(missing).toMatchObject({
      name: 'read_file',
      isError: true,
      output: 'File not found: /home/ada/projects/demo-app/does-not-exist.txt',
    });
    const shell = results.find((r) => r.callId.endsWith('_5_2'));
    expect(shell?.output).toMatch(/^Command: ls \/nonexistent-dir-xyz\n/);
    expect(shell?.display?.metadata?.resultDisplay).toMatchObject({ type: 'shell_result', exitCode: 2 });
    // An empty resultDisplay (a read) is not kept.
    expect(results.find((r) => r.callId.endsWith('_1_0'))?.display).toBeUndefined();
  });

  it('makes each chat_compression a compaction: the summary, the files Qwen re-embedded, the turn it kept', () => {
    const summaries = session.messages.filter((m) => m.compaction);
    expect(summaries.map((m) => m.source)).toEqual([
      { file, line: 43 },
      { file, line: 52 },
    ]);
    const [auto, manual] = summaries;
    expect(text(auto)).toMatch(/^<state_snapshot>scripted summary: TASK-A explored the repo/);
    expect(auto?.injected).toBe(true);
    // The read of hello.txt and its result (lines 39, 41) stayed visible; the files message is new harness text.
    expect(auto?.preserved).toEqual([
      records[42].uuid,
      `${records[42].uuid}/1`,
      `${records[42].uuid}/2`,
      records[38].uuid,
      records[40].uuid,
    ]);
    const files = session.messages.find((m) => m.nativeId === `${records[42].uuid}/2`);
    expect(files).toMatchObject({ role: 'user', injected: true });
    expect(files?.parts).toHaveLength(3);
    expect(text(files)).toContain('## /home/ada/projects/demo-app/hello.txt');
    // The manual /compress kept nothing but the summary and one re-embedded file.
    expect(manual?.preserved).toEqual([records[51].uuid, `${records[51].uuid}/1`, `${records[51].uuid}/2`]);
  });

  it('gives the turn after the compaction, and the turns of the --continue run, only what followed it', () => {
    const all = [...turns(session.messages)];
    expect(all).toHaveLength(9);
    const shape = (messages: readonly Message[]) =>
      messages.map(
        (m) => `${m.role}${m.compaction ? '*' : ''}:${m.source && 'line' in m.source ? m.source.line : ''}`,
      );
    // Turn 8 answered TASK-B after the automatic compaction (same run).
    // Qwen's acknowledgement of the summary comes right after it, as the request had it.
    expect(shape(all[7]?.context ?? [])).toEqual([
      'user*:43',
      'assistant:43',
      'user:43',
      'assistant:39',
      'tool:41',
    ]);
    // Turn 9 is the first of run 03 (--continue): resumed from the compressed history, then its prompt.
    expect(shape(all[8]?.context ?? [])).toEqual([
      'user*:43',
      'assistant:43',
      'user:43',
      'assistant:39',
      'tool:41',
      'assistant:45',
      'user:46',
    ]);
    // TASK-B's prompt itself was compressed away (it is in the summary).
    expect(all[8]?.context.some((m) => text(m).startsWith('TASK-B'))).toBe(false);
  });
});

describe('bad input', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('qwen-bad-');
  });
  afterEach(() => dir.remove());

  const write = (name: string, content: string): string => {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return path;
  };

  it('leaves a torn last line for the next read, and reads the rest', () => {
    const torn = lines[51]?.slice(0, 200) ?? '';
    const path = write('torn.jsonl', `${lines.slice(0, 51).join('\n')}\n${torn}`);
    const { session, result } = parse(path);
    expect(result.warnings).toEqual([
      { file: path, line: 52, message: 'last line is incomplete (still being written?); not read yet' },
    ]);
    expect(session.messages.filter((m) => m.compaction)).toHaveLength(1);
    expect(session.messages.flatMap(toolCalls)).toHaveLength(11);
    expect(result.parsedBytes).toBe(Buffer.byteLength(`${lines.slice(0, 51).join('\n')}\n`));
  });

  it('reports an unknown record type and records missing fields with file:line, and keeps the rest', () => {
    const unknown = JSON.stringify({ ...records[1], uuid: 'u-x', type: 'checkpoint' });
    const noParts = JSON.stringify({ ...records[3], uuid: 'u-y', message: { role: 'model' } });
    const noUuid = JSON.stringify({ type: 'user', message: { parts: [{ text: 'x' }] } });
    const path = write(
      'odd.jsonl',
      `${[lines[0], unknown, noParts, noUuid, ...lines.slice(1)].join('\n')}\n`,
    );
    const { session, result } = parse(path);
    expect(result.warnings).toEqual([
      { file: path, line: 2, message: 'unknown record type "checkpoint"; skipped' },
      { file: path, line: 3, message: '"assistant" record without "message.parts"; skipped' },
      { file: path, line: 4, message: '"user" record without a "uuid"; skipped' },
    ]);
    expect(result.skipped).toBe(3);
    expect(session.messages.flatMap(toolCalls)).toHaveLength(11);
  });

  it('reports a parentUuid that is not in the file, and reads the record in file order', () => {
    const orphan = JSON.stringify({ ...records[35], parentUuid: 'not-in-this-file' });
    const path = write('orphan.jsonl', `${[...lines.slice(0, 35), orphan, ...lines.slice(36)].join('\n')}\n`);
    const { session, result } = parse(path);
    expect(result.warnings).toEqual([
      {
        file: path,
        line: 36,
        message: 'parentUuid not-in-this-file is not in the file; the record is read in file order',
      },
    ]);
    expect(session.messages.filter((m) => m.role === 'user' && !m.injected).map(text)[1]).toMatch(/^TASK-B/);
    expect([...turns(session.messages)]).toHaveLength(9);
  });

  it('counts system records of an unknown subtype, and a record that is not its parent’s only child, in notes', () => {
    const other = JSON.stringify({
      ...records[1],
      uuid: 'u-z',
      parentUuid: records[1].uuid,
      subtype: 'slash_command',
    });
    const path = write('subtype.jsonl', `${[lines[0], lines[1], other, ...lines.slice(2)].join('\n')}\n`);
    const { result } = parse(path);
    expect(result.warnings).toEqual([]);
    // Line 4 names line 2 as its parent, not line 3: a second child of one record, read in file order.
    expect(result.notes).toContain(
      '1 record(s) whose parent is not the record before (lines 4): read in file order',
    );
    expect(result.notes).toContain('1 system record(s) of unknown subtype "slash_command" read past');
  });
});
