// Independent verification of the Codex adapter against the real rollouts in test/fixtures/real/codex (copied from
// shared/fixtures/codex; SOURCES.md there says where from). Every expected number is derived in this file from the
// raw JSON lines by small counting code that shares nothing with the adapter (no helper of src/sources); the
// adapter's output and the store's rows are compared with it. The derived numbers are also pinned in a table, so a
// silent change of the derivation (or of the fixtures) shows up.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { type Message, toolCalls, toolResults } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { codex } from '../../../src/sources/codex/index.js';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import type { FileResult, ParsedSession } from '../../../src/sources/types.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const dir = join(root, 'test', 'fixtures', 'real', 'codex');

// ---------------------------------------------------------------------------------------------------------------
// The raw lines, as far as this file reads them.

interface Item {
  type: string;
  role?: string;
  content?: unknown;
  call_id?: string;
}
interface Raw {
  line: number;
  type: string;
  payload: Record<string, unknown>;
}

function readRaw(file: string): Raw[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, index) => (text.trim() === '' ? [] : [{ line: index + 1, ...JSON.parse(text) } as Raw]));
}

// ---------------------------------------------------------------------------------------------------------------
// Counting. The instructions of the first session_meta are one message. Every response item the model wrote
// (reasoning, an assistant message, a call) joins the model turn before it unless something else came in between
// (an input, an output or a compaction); every other message item is one message, every output item one message.
// A compaction is one summary message plus one message per item of its replacement history that is not a copy of
// an earlier message item (same role and content). Calls: the *_call items; results: the output items plus one per
// web search (answered inside its turn).

const modelTypes = new Set([
  'reasoning',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'web_search_call',
]);
const callTypes = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
const outputTypes = new Set(['function_call_output', 'custom_tool_call_output']);
const isModel = (item: Item): boolean =>
  modelTypes.has(item.type) || (item.type === 'message' && item.role === 'assistant');
const same = (a: Item, b: Item): boolean =>
  a.role === b.role && JSON.stringify(a.content) === JSON.stringify(b.content);

interface Counts {
  messages: number;
  turns: number;
  toolCalls: number;
  toolResults: number;
  unanswered: number;
  compactions: number;
}

interface Derived {
  sourceId: string;
  parentSourceId?: string;
  counts: Counts;
  /** Line of each compaction, turns before and after it, and how many messages its summary keeps visible. */
  compaction?: { line: number; turnsBefore: number; turnsAfter: number; kept: number };
}

function derive(file: string): Derived {
  const raw = readRaw(file);
  const meta = raw.find((r) => r.type === 'session_meta')?.payload as Record<string, unknown>;
  const instructions = (meta.base_instructions as { text?: string } | undefined)?.text ?? meta.instructions;
  let messages = typeof instructions === 'string' && instructions !== '' ? 1 : 0;
  let turns = 0;
  let inTurn = false;
  const calls: string[] = [];
  const outputs = new Set<string>();
  let searches = 0;
  const earlier: { item: Item; run: Item[] }[] = [];
  let run: Item[] = [];
  let compaction: Derived['compaction'];
  for (const { line, type, payload } of raw) {
    if (type === 'compacted') {
      inTurn = false;
      messages++;
      let kept = 1;
      for (const item of (payload.replacement_history ?? []) as Item[]) {
        if (item.type !== 'message') continue;
        const copy = earlier.find((e) => same(e.item, item));
        if (item.role === 'assistant') {
          // An answer stays visible if it is a copy of a turn that said only that (besides reasoning).
          const whole = copy?.run.filter((i) => i.type !== 'reasoning');
          if (whole?.length === 1) kept++;
          continue;
        }
        kept++;
        if (!copy) messages++;
      }
      compaction = { line, turnsBefore: turns, turnsAfter: 0, kept };
      continue;
    }
    if (type !== 'response_item') continue;
    const item = payload as unknown as Item;
    if (isModel(item)) {
      if (!inTurn) {
        turns++;
        messages++;
        run = [];
      }
      inTurn = true;
      run.push(item);
      if (item.type === 'message') earlier.push({ item, run });
      if (callTypes.has(item.type)) calls.push(item.call_id ?? `search-${++searches}`);
      continue;
    }
    inTurn = false;
    messages++;
    if (item.type === 'message') earlier.push({ item, run: [item] });
    if (outputTypes.has(item.type)) outputs.add(item.call_id as string);
  }
  if (compaction) compaction.turnsAfter = turns - compaction.turnsBefore;
  const source = meta.source as { subagent?: { thread_spawn?: { parent_thread_id?: string } } } | undefined;
  const parent = source?.subagent?.thread_spawn?.parent_thread_id;
  return {
    sourceId: meta.id as string,
    ...(parent ? { parentSourceId: parent } : {}),
    counts: {
      messages,
      turns,
      toolCalls: calls.length,
      toolResults: outputs.size + searches,
      unanswered: calls.filter((id) => !id.startsWith('search-') && !outputs.has(id)).length,
      compactions: raw.filter((r) => r.type === 'compacted').length,
    },
    ...(compaction ? { compaction } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The same numbers read off the adapter's output.

function countsOf(session: ParsedSession): Counts {
  const calls = session.messages.flatMap(toolCalls);
  return {
    messages: session.messages.length,
    turns: session.messages.filter((m) => m.role === 'assistant' && !m.injected).length,
    toolCalls: calls.length,
    toolResults: session.messages.flatMap(toolResults).length,
    unanswered: calls.filter((c) => c.unanswered === true).length,
    compactions: session.messages.filter((m) => m.compaction).length,
  };
}

function jsonlFiles(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((name) => {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) return jsonlFiles(path);
      return name.endsWith('.jsonl') ? [path] : [];
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The derived numbers, pinned (messages, turns, tool calls, tool results, unanswered, compactions).

const c = (
  messages: number,
  turns: number,
  toolCalls: number,
  toolResults: number,
  unanswered = 0,
  compactions = 0,
): Counts => ({ messages, turns, toolCalls, toolResults, unanswered, compactions });

const pinned: Record<string, Counts> = {
  // 134 function_call + 10 custom_tool_call; 133 + 10 outputs: call_BpTazJ89… (line 826) never got one.
  // 83 model turns (one per turn_context); 1 instructions + 15 developer + 13 user items + 143 outputs.
  'localpush-2026-02-23/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl': c(
    255,
    83,
    144,
    143,
    1,
  ),
  // The compaction at line 1788: a summary plus 6 replacement items that copy nothing earlier (a regenerated
  // developer message and environment context, and 4 prompts whose images were re-encoded).
  'localpush-2026-02-23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl': c(
    749,
    286,
    372,
    372,
    0,
    1,
  ),
  'localpush-2026-02-23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl': c(
    19,
    6,
    5,
    5,
  ),
  // A sub-agent (thread_spawn) that spawns its own child with spawn_agent and waits for it.
  'traex-subagent/rollout_subagent.jsonl': c(9, 4, 3, 3),
};

// ---------------------------------------------------------------------------------------------------------------

describe('codex adapter on the real rollouts (test/fixtures/real/codex)', () => {
  const files = jsonlFiles(dir);
  const rel = (file: string): string => relative(dir, file);
  type Parsed = Omit<FileResult, 'sessions'> & { sessions: ParsedSession[] };
  const parsed = new Map<string, Parsed>();
  const parsedOf = (file: string): Parsed => {
    let result = parsed.get(file);
    if (!result) {
      const read = codex.parseFile(file);
      result = { ...read, sessions: [...read.sessions] };
      parsed.set(file, result);
    }
    return result;
  };
  const sessionOf = (file: string): ParsedSession => parsedOf(join(dir, file)).sessions[0] as ParsedSession;

  it('covers every rollout of the folder, and the pinned table covers exactly those', () => {
    expect(files.map(rel).sort()).toEqual(Object.keys(pinned).sort());
  });

  it('derives the pinned numbers from the raw lines', () => {
    for (const file of files) expect(derive(file).counts, rel(file)).toEqual(pinned[rel(file)]);
  });

  it('each file gives one session with the derived message, turn, tool-call and tool-result counts', () => {
    for (const file of files) {
      const result = parsedOf(file);
      const want = derive(file);
      expect(result.warnings, rel(file)).toEqual([]);
      expect(result.skipped, rel(file)).toBe(0);
      expect(result.lines, rel(file)).toBe(readRaw(file).length);
      expect(result.sessions, rel(file)).toHaveLength(1);
      const session = result.sessions[0] as ParsedSession;
      expect(session.sourceId, rel(file)).toBe(want.sourceId);
      expect(countsOf(session), rel(file)).toEqual(want.counts);
      expect(splitTurns(session.messages), rel(file)).toHaveLength(want.counts.turns);
      // No call and no result twice.
      const calls = session.messages.flatMap(toolCalls);
      expect(new Set(calls.map((x) => x.id)).size, rel(file)).toBe(calls.length);
    }
  });

  it('says once per file that the redacted arguments are not JSON, and keeps them raw', () => {
    for (const file of files) {
      const raw = readRaw(file).filter(
        (r) => r.type === 'response_item' && r.payload.type === 'function_call',
      );
      const invalid = raw.filter((r) => {
        try {
          JSON.parse(r.payload.arguments as string);
          return false;
        } catch {
          return true;
        }
      });
      const notes = parsedOf(file).notes.filter((n) => n.includes('not valid JSON'));
      if (invalid.length === 0) expect(notes, rel(file)).toEqual([]);
      else {
        expect(notes, rel(file)).toHaveLength(1);
        expect(notes[0], rel(file)).toMatch(
          new RegExp(`^${invalid.length} tool call\\(s\\).*lines? ${invalid[0]?.line}\\b`),
        );
      }
      // Raw strings: the invalid arguments, and the input of every free-form (custom) tool call.
      const custom = readRaw(file).filter((r) => r.payload.type === 'custom_tool_call').length;
      const rawInputs = sessionOf(rel(file))
        .messages.flatMap(toolCalls)
        .filter((x) => typeof x.input === 'string');
      expect(rawInputs.length, rel(file)).toBe(invalid.length + custom);
    }
  });

  it('turn usage adds up to the last cumulative token_count of each file', () => {
    for (const file of files) {
      const counts = readRaw(file).filter((r) => r.type === 'event_msg' && r.payload.type === 'token_count');
      const info = (counts.at(-1) as Raw).payload.info as { total_token_usage: Record<string, number> };
      const last = info.total_token_usage;
      const sum = (key: 'inputTokens' | 'outputTokens' | 'cacheReadTokens'): number =>
        sessionOf(rel(file)).messages.reduce((n, m) => n + (m.usage?.[key] ?? 0), 0);
      expect(sum('outputTokens'), rel(file)).toBe(last.output_tokens);
      expect(sum('cacheReadTokens'), rel(file)).toBe(last.cached_input_tokens);
      expect(sum('inputTokens') + sum('cacheReadTokens'), rel(file)).toBe(last.input_tokens);
    }
  });

  it('the call that never got an output is kept, marked unanswered, and closed with a synthetic error after', () => {
    const file =
      'localpush-2026-02-23/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl';
    const session = sessionOf(file);
    const dangling = session.messages.flatMap(toolCalls).filter((x) => x.unanswered);
    expect(dangling.map((x) => x.id)).toEqual(['call_BpTazJ89W9PntRqGPwDNfwEY']);
    const turns = splitTurns(session.messages);
    const at = turns.findIndex((t) => toolCalls(t.response).some((x) => x.unanswered));
    expect(turns[at]?.results).toEqual([expect.objectContaining({ synthetic: true, isError: true })]);
    for (const later of turns.slice(at + 1)) {
      const closing = later.context.flatMap(toolResults).filter((r) => r.callId === dangling[0]?.id);
      expect(closing).toEqual([expect.objectContaining({ synthetic: true })]);
    }
  });

  it('after the compaction every turn sees the instructions, the replacement history and the summary only', () => {
    const file =
      'localpush-2026-02-23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl';
    const want = derive(join(dir, file)).compaction;
    // 184 and 102 turns: as many as turn_context lines before and after line 1788.
    expect(want).toEqual({ line: 1788, turnsBefore: 184, turnsAfter: 102, kept: 40 });
    const session = sessionOf(file);
    const summary = session.messages.find((m) => m.compaction) as Message;
    expect(summary).toMatchObject({ role: 'user', injected: true, source: { line: 1788 } });
    // The kept items, then the summary's own id: it goes where the compaction item was, last.
    expect(summary.preserved).toHaveLength((want?.kept ?? 0) + 1);
    expect(summary.preserved?.at(-1)).toBe(summary.nativeId);
    const at = session.messages.indexOf(summary);
    const lineOf = (m: Message): number => ('line' in m.source ? m.source.line : Number.NaN);
    const turns = splitTurns(session.messages);
    const before = turns.filter((t) => t.messageIndex < at);
    const after = turns.filter((t) => t.messageIndex > at);
    expect([before.length, after.length]).toEqual([want?.turnsBefore, want?.turnsAfter]);
    const preserved = new Set(summary.preserved);
    for (const turn of before) expect(turn.context).not.toContain(summary);
    for (const turn of after) {
      expect(turn.context[want?.kept ?? 0]).toBe(summary);
      // Older than the compaction line only if the summary keeps it (the instructions and the copies).
      const old = turn.context.filter((m) => lineOf(m) < 1788);
      expect(old.every((m) => preserved.has(m.nativeId as string))).toBe(true);
    }
    expect(after[0]?.context.length).toBe(1 + (want?.kept ?? 0));
  });

  it('the TraeX sub-agent is a child of its parent thread and records the child it spawned', () => {
    const file = 'traex-subagent/rollout_subagent.jsonl';
    const want = derive(join(dir, file));
    const result = parsedOf(join(dir, file));
    const session = result.sessions[0] as ParsedSession;
    expect(session).toMatchObject({
      kind: 'subagent',
      parentId: sessionId('codex', want.parentSourceId as string),
    });
    const raw = readRaw(join(dir, file)).find((r) => r.payload.type === 'collab_agent_spawn_end')?.payload;
    expect(result.spawns).toEqual([
      { parentSourceId: want.sourceId, childSourceId: raw?.new_thread_id, toolCallId: raw?.call_id },
    ]);
    const spawnCall = session.messages.flatMap(toolCalls).find((x) => x.id === raw?.call_id);
    expect(spawnCall?.name).toBe('spawn_agent');
  });

  describe('ingesting the whole folder', () => {
    let store: ReturnType<typeof tempStore>;
    let first: PathSummary;
    let second: PathSummary;
    beforeAll(() => {
      store = tempStore();
      first = ingest(store.db, [dir])[0] as PathSummary;
      second = ingest(store.db, [dir])[0] as PathSummary;
    });
    afterAll(() => store.close());

    it('stores every session with the derived counts, then reads nothing again', () => {
      const sessions = new SessionStore(store.db);
      // The publisher's README, manifest and SOURCES.md are no session log of any agent.
      const others = (folder: string): number =>
        readdirSync(folder).reduce((n, name) => {
          const path = join(folder, name);
          if (statSync(path).isDirectory()) return n + others(path);
          return n + (name.endsWith('.jsonl') ? 0 : 1);
        }, 0);
      const ignored = others(dir);
      const total = files.map((f) => derive(f).counts);
      expect(first).toMatchObject({
        files: { read: files.length, continued: 0, unchanged: 0, ignored, failed: 0 },
        sessions: { new: files.length, updated: 0, unchanged: 0 },
        messages: total.reduce((n, x) => n + x.messages, 0),
        toolCalls: total.reduce((n, x) => n + x.toolCalls, 0),
        warnings: [],
        skippedLines: 0,
      });
      for (const file of files) {
        const want = derive(file);
        const row = sessions.row(sessionId('codex', want.sourceId));
        expect(row, rel(file)).toMatchObject({
          agent: 'codex',
          message_count: want.counts.messages,
          turn_count: want.counts.turns,
          tool_call_count: want.counts.toolCalls,
          unanswered_count: want.counts.unanswered,
          continues_session_id: null,
        });
      }
      expect(second).toMatchObject({
        files: { read: 0, continued: 0, unchanged: files.length, ignored },
        sessions: { new: 0, updated: 0, unchanged: files.length },
        messages: 0,
      });
    });
  });
});
