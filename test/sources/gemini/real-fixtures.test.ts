// The real Gemini CLI 0.61.0 logs (test/fixtures/real/gemini-cli-0.61.0/home/.gemini, SOURCES.md there): what the
// store holds against counts taken here from the raw files, the sub-agent and its spawning call, the resume (a
// stub file, the history rewritten, results once), the compression; and the two legacy single-JSON sessions.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isToolResult, type Message, type ToolResult, toolCalls } from '../../../src/model/session.js';
import { turns } from '../../../src/model/turns.js';
import { gemini } from '../../../src/sources/gemini/index.js';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import { adapters } from '../../../src/sources/registry.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const home = join(root, 'test/fixtures/real/gemini-cli-0.61.0/home/.gemini');
const chats = join(home, 'tmp/demo-app/chats');
const legacy = join(root, 'test/fixtures/real/gemini');
const main = '9c1bacd1-ce8d-4c25-a459-c8f8662df602';
const parent = '76b09eaf-4445-4947-91a8-66c8ca9fde7d';
const child = '2e99d745-5b87-4e8a-90da-e8fe744ed319';

const logs = (readdirSync(chats, { recursive: true }) as string[])
  .filter((name) => name.endsWith('.jsonl'))
  .map((name) => join(chats, name));

/** Independent counts from the raw lines: session ids, distinct call ids, distinct result ids, error statuses. */
function rawCounts() {
  const sessions = new Set<string>();
  const calls = new Set<string>();
  const results = new Set<string>();
  const errors = new Set<string>();
  for (const file of logs)
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      const record = JSON.parse(line) as {
        sessionId?: string;
        toolCalls?: { id: string; status: string; result?: { functionResponse: { id: string } }[] }[];
      };
      if (record.sessionId) sessions.add(record.sessionId);
      for (const call of record.toolCalls ?? []) {
        calls.add(call.id);
        if (call.status === 'error') errors.add(call.id);
        for (const part of call.result ?? []) results.add(part.functionResponse.id);
      }
    }
  return { sessions: sessions.size, calls: calls.size, results: results.size, errors: errors.size };
}

const store = tempStore();
const sessions = new SessionStore(store.db);
let summary: PathSummary;
afterAll(() => store.close());
beforeAll(() => {
  [summary] = ingest(store.db, [join(home, 'tmp')]) as [PathSummary];
});

const rowOf = (sourceId: string) => [...sessions.list()].find((row) => row.source_id === sourceId);
const messagesOf = (sourceId: string): Message[] => sessions.messages(rowOf(sourceId)?.id ?? '');
const resultsOf = (messages: Message[]): ToolResult[] =>
  messages.flatMap((m) => m.parts.filter(isToolResult));

describe('Gemini CLI 0.61.0 logs in the store', () => {
  it('are read by the Gemini adapter, and by no other before it', () => {
    for (const file of logs)
      expect(adapters.find((adapter) => adapter.detect(file))?.agent, file).toBe('gemini');
    for (const other of ['projects.json', 'settings.json', 'trustedFolders.json'])
      expect(gemini.detect(join(home, other))).toBe(false);
    // Nor does it claim another agent's logs (it is tried before Claude Code's broad detector).
    const others = ['claude-code', 'claude-code-2.1.328', 'codex', 'codex-0.169.0', 'opencode'].flatMap(
      (folder) =>
        (readdirSync(join(root, 'test/fixtures/real', folder), { recursive: true }) as string[])
          .filter((name) => /\.jsonl?$/.test(name))
          .map((name) => join(root, 'test/fixtures/real', folder, name)),
    );
    expect(others.length).toBeGreaterThan(10);
    expect(others.filter((file) => gemini.detect(file))).toEqual([]);
  });

  it('hold as many sessions, calls, results and errors as the raw files, each result once', () => {
    const raw = rawCounts();
    expect(raw).toEqual({ sessions: 3, calls: 13, results: 13, errors: 1 });
    const rows = [...sessions.list({ agent: 'gemini' })];
    expect(rows).toHaveLength(raw.sessions);
    expect(rows.reduce((n, row) => n + row.tool_call_count, 0)).toBe(raw.calls);
    const results = rows.flatMap((row) => resultsOf(sessions.messages(row.id)));
    expect(results).toHaveLength(raw.results);
    expect(new Set(results.map((r) => r.callId)).size).toBe(raw.results);
    expect(results.filter((r) => r.isError)).toHaveLength(raw.errors);
    expect(rows.reduce((n, row) => n + row.unanswered_count, 0)).toBe(0);
    expect(summary.warnings).toEqual([]);
    expect(summary.sessions).toEqual({ new: 3, updated: 0, unchanged: 0 });
  });

  it('know each session’s project root: the slug folder’s .project_root, checked against the projectHash', () => {
    expect([...sessions.list({ agent: 'gemini' })].map((row) => row.cwd)).toEqual([
      '/home/ada/projects/demo-app',
      '/home/ada/projects/demo-app',
      '/home/ada/projects/demo-app',
    ]);
  });

  it('keep the wire id of each call (the `<name>__` prefix of the log stripped), so results pair with calls', () => {
    const messages = messagesOf(main);
    const ids = messages.flatMap((m) => toolCalls(m).map((call) => call.id));
    expect(ids[0]).toBe('read_file_1796154545358_0');
    expect(ids.every((id) => !id.includes('__'))).toBe(true);
    expect(resultsOf(messages).map((r) => r.callId)).toEqual(ids);
  });

  it('tell a failing read (status error) from a shell that exited non-zero (status success, "Exit Code: 2")', () => {
    const results = resultsOf(messagesOf(main));
    const missing = results.find((r) => r.callId === 'read_file_1796154545971_0');
    const shell = results.find((r) => r.callId === 'run_shell_command_1796154545974_1');
    expect(missing).toMatchObject({ isError: true, output: expect.stringContaining('File not found') });
    expect(shell).toMatchObject({ isError: false, output: expect.stringContaining('Exit Code: 2') });
  });

  it('store the sub-agent with its parent and the invoke_agent call that spawned it', () => {
    const row = rowOf(child);
    expect(row?.kind).toBe('subagent');
    expect(row?.parent_id).toBe(rowOf(parent)?.id);
    expect(row && sessions.spawnedBy(row)).toBe('invoke_agent_1796154503895_0');
    expect(toolCalls(messagesOf(parent)[2] as Message).map((call) => call.id)).toEqual([
      'invoke_agent_1796154503895_0',
    ]);
    expect(row?.title).toBe('SUBJOB-42 report: TODOs in notes.txt and src/app.py');
  });

  it('read the resumed session once: the stub of the later start adds no session, the rewrite no duplicate', () => {
    const stub = join(chats, 'session-2026-12-01T19-50-9c1bacd1.jsonl');
    const parsed = gemini.parseFile(stub);
    expect([...parsed.sessions]).toEqual([]);
    expect(summary.notes).toEqual([`${stub}: ${parsed.notes[0]}`]);
    const messages = messagesOf(main);
    const prompts = messages.filter((m) => m.role === 'user' && !m.injected);
    expect(prompts.map((m) => (m.parts[0] as { text: string }).text.slice(0, 7))).toEqual([
      'TASK-A:',
      'TASK-B:',
      '/compre',
    ]);
    // The resume rewrote the history without tokens or model: what the first writing recorded stands.
    const first = messages.find((m) => m.nativeId === '470d8470-9de5-4da5-8615-3d3f07612819');
    expect(first).toMatchObject({ model: 'gemini-3.8-flash', usage: { inputTokens: 12028 } });
    expect(first?.source).toEqual({
      file: join(chats, 'session-2026-12-01T19-49-9c1bacd1.jsonl'),
      line: 5,
      endLine: 7,
    });
  });

  it('store the compression as a compaction keeping the session context and the tail (ids mapped to the originals)', () => {
    const messages = messagesOf(main);
    const summaryAt = messages.findIndex((m) => m.compaction && m.attachment === undefined);
    const snapshot = messages[summaryAt] as Message;
    expect(snapshot.parts).toEqual([
      { type: 'text', text: '<state_snapshot>scripted summary of the conversation so far</state_snapshot>' },
    ]);
    const byId = new Map(messages.map((m) => [m.nativeId, m]));
    const kept = (snapshot.preserved ?? []).map((id) => byId.get(id));
    expect(kept.map((m) => [m?.role, m?.attachment ?? m?.parts[0]?.type])).toEqual([
      ['user', 'session_context'],
      ['user', 'text'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'text'],
      ['tool', 'tool_result'],
    ]);
    // The tail's new ids (de10c4b7…, ecf54b19…) point at the messages they copy.
    expect(snapshot.preserved?.slice(3)).toEqual([
      '1f7fca68-f5a7-4798-8d85-27b7265dce43',
      '6e001326-c546-4963-b7f3-f501fcd77095',
      '6e001326-c546-4963-b7f3-f501fcd77095/results',
    ]);
    // The acknowledgement is written just before the summary, which keeps it: harness-made, no turn.
    expect(messages[summaryAt - 1]).toMatchObject({
      role: 'assistant',
      injected: true,
      nativeId: snapshot.preserved?.[2],
    });
    // 9 model turns: 6 of TASK-A, 2 of TASK-B (one before, one after the compression), the /compress prompt's.
    const loaded = sessions.load(rowOf(main)?.id ?? '');
    expect([...turns(loaded?.session.messages ?? [])]).toHaveLength(9);
  });
});

describe('legacy single-JSON sessions (agentsview fixtures)', () => {
  it('read a thinking-only session: the prompt, and the answer with its thoughts as reasoning', () => {
    const file = join(legacy, 'thinking_only.json');
    expect(adapters.find((adapter) => adapter.detect(file))?.agent).toBe('gemini');
    const parsed = gemini.parseFile(file);
    const [session] = [...parsed.sessions];
    expect(parsed.warnings).toEqual([]);
    expect(session).toMatchObject({
      sourceId: 'sess-uuid-thinking',
      kind: 'main',
      title: 'Explain how this works',
    });
    expect(session?.startedAt).toBe('2024-01-01T10:00:00Z');
    expect(session?.messages[1]?.parts.map((p) => p.type)).toEqual(['reasoning', 'reasoning', 'text']);
    expect(session?.messages[1]?.model).toBe('gemini-2.5-pro');
  });

  it('read calls with results kept on the model message, ids without a prefix as they are', () => {
    const [session] = [...gemini.parseFile(join(legacy, 'tool_calls_with_results.json')).sessions];
    const [, answer, results] = session?.messages ?? [];
    expect(toolCalls(answer as Message).map((c) => [c.id, c.name, c.input])).toEqual([
      ['read_file_1772747340739_0', 'read_file', { file_path: '.planning/ONE-PAGER.md' }],
      ['run_command_1772747340739_1', 'run_command', { command: 'ls -la' }],
    ]);
    expect(results?.role).toBe('tool');
    expect(resultsOf([results as Message]).map((r) => [r.callId, r.isError, r.output])).toEqual([
      ['read_file_1772747340739_0', false, '# Agentstrove -- One-Pager\n\nDraft: 2026-03-04'],
      ['run_command_1772747340739_1', false, 'total 42\ndrwxr-xr-x  5 user user 160 Mar  4 10:00 .'],
    ]);
  });
});
