// Independent verification of the Claude Code adapter against the real (and a few hand-written) transcripts in
// test/fixtures/real/claude-code (copied from shared/fixtures/claude-code; SOURCES.md there says where from). Every
// expected number here is derived in this file from the raw JSON lines by small counting code that shares nothing
// with the adapter (no path walk from a leaf, no message building, no helper of src/sources); the adapter's output
// and the store's rows are then compared with it. The derived numbers are also pinned in a table so a silent change
// of the derivation (or of the fixtures) shows up.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Message,
  type Session,
  type SessionKind,
  toolCalls,
  toolResults,
} from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import type { FileResult, ParsedSession } from '../../../src/sources/types.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const dir = join(root, 'test', 'fixtures', 'real', 'claude-code');

// ---------------------------------------------------------------------------------------------------------------
// The raw lines, as far as this file reads them.

interface RawBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
}

interface RawRecord {
  type: string;
  subtype?: string;
  uuid?: string;
  parentUuid?: string | null;
  logicalParentUuid?: string | null;
  sessionId?: string;
  isSidechain?: boolean;
  agentId?: string;
  timestamp?: string;
  isCompactSummary?: boolean;
  isApiErrorMessage?: boolean;
  parentToolUseID?: string;
  compactMetadata?: {
    preservedSegment?: { headUuid?: string; anchorUuid?: string; tailUuid?: string };
    preservedMessages?: { uuids?: string[] };
  };
  message?: { id?: string; model?: string; content?: string | RawBlock[] };
  data?: { type?: string; agentId?: string; message?: RawRecord };
  attachment?: { type?: string };
}

interface RawLine {
  line: number;
  rec: RawRecord;
}

function readRaw(file: string): RawLine[] {
  const out: RawLine[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      if (text.trim() === '') return;
      out.push({ line: index + 1, rec: JSON.parse(text) as RawRecord });
    });
  return out;
}

function blocksOf(rec: RawRecord): RawBlock[] {
  const content = rec.message?.content;
  return Array.isArray(content) ? content : [];
}

const isAgentProgress = (rec: RawRecord): boolean =>
  rec.type === 'progress' && rec.data?.type === 'agent_progress';

// ---------------------------------------------------------------------------------------------------------------
// Counting. One message per API response (the lines of one response share `message.id`); a user line gives one
// 'tool' message if it carries tool_result blocks and one 'user' message if it carries anything else (string
// content, text, image). `derivationAssumptions` below checks that no fixture line falls outside this.

interface Counts {
  messages: number;
  /** Model turns: distinct `message.id` of assistant lines not written by the harness (`<synthetic>`, API errors). */
  turns: number;
  /** Distinct `tool_use` ids. */
  toolCalls: number;
  /** Distinct `tool_result.tool_use_id`s. */
  toolResults: number;
  /** Calls with no result anywhere in the session. */
  unanswered: number;
}

function tally(records: RawRecord[]): Counts {
  const responses = new Set<string>();
  const turns = new Set<string>();
  const calls = new Set<string>();
  const results = new Set<string>();
  let userMessages = 0;
  let toolMessages = 0;
  for (const rec of records) {
    if (rec.type === 'assistant') {
      const id = rec.message?.id as string;
      responses.add(id);
      if (rec.message?.model !== '<synthetic>' && rec.isApiErrorMessage !== true) turns.add(id);
      for (const block of blocksOf(rec))
        if (block.type === 'tool_use' || block.type === 'server_tool_use') calls.add(block.id as string);
    } else if (rec.type === 'user') {
      const content = rec.message?.content;
      if (typeof content === 'string') {
        userMessages++;
        continue;
      }
      const blocks = blocksOf(rec);
      const answers = blocks.filter((block) => block.type === 'tool_result');
      for (const block of answers) results.add(block.tool_use_id as string);
      if (answers.length > 0) toolMessages++;
      if (answers.length < blocks.length) userMessages++;
    }
  }
  return {
    messages: responses.size + userMessages + toolMessages,
    turns: turns.size,
    toolCalls: calls.size,
    toolResults: results.size,
    unanswered: [...calls].filter((id) => !results.has(id)).length,
  };
}

/**
 * The lines of one stream that belong to the conversation as it was finally continued.
 *
 * A naive count over all lines of the stream is wrong in two places, each handled here by a rule that is easy to
 * check by eye against the file:
 * 1. Lines not connected to the conversation's tip at all. The tip is the last line of the stream written to the
 *    file (Claude Code only appends). Connection is plain parentUuid links, plus, for a `compact_boundary` (which
 *    has parentUuid null), the messages it names as what it continues: `logicalParentUuid` and the preserved
 *    segment. Example: `agent-acompact-fffbd0.jsonl` lines 1–2 are hook reminders whose parentUuid points into the
 *    parent session's file; they are not on the compaction call's own chain (prompt line 3 → summary line 4).
 * 2. Rewinds: a node with two or more child user *prompts* (user lines without tool_result blocks) is a fork the
 *    user made by rewinding; every prompt but the latest, with everything under it, is the abandoned branch.
 *    (Parallel tool calls also make forks, but their children are assistant lines, tool results and progress
 *    lines — never two prompts.) Example: `dag_compact_after_rewind_preserved.jsonl` lines 3–4.
 */
function liveLines(lines: RawLine[]): RawLine[] {
  const withUuid = lines.filter(({ rec }) => typeof rec.uuid === 'string');
  const byUuid = new Map<string, RawRecord>();
  for (const { rec } of withUuid) if (!byUuid.has(rec.uuid as string)) byUuid.set(rec.uuid as string, rec);

  // 1. Connected component of the tip (union-find).
  const parent = new Map<string, string>();
  for (const uuid of byUuid.keys()) parent.set(uuid, uuid);
  const find = (uuid: string): string => {
    let current = uuid;
    while (parent.get(current) !== current) current = parent.get(current) as string;
    return current;
  };
  const link = (a: string, b: string | null | undefined): void => {
    if (typeof b === 'string' && byUuid.has(b)) parent.set(find(a), find(b));
  };
  for (const [uuid, rec] of byUuid) {
    link(uuid, rec.parentUuid);
    if (rec.subtype === 'compact_boundary') {
      link(uuid, rec.logicalParentUuid);
      const meta = rec.compactMetadata;
      for (const kept of meta?.preservedMessages?.uuids ?? []) link(uuid, kept);
      link(uuid, meta?.preservedSegment?.headUuid);
      link(uuid, meta?.preservedSegment?.tailUuid);
    }
  }
  const tip = withUuid[withUuid.length - 1]?.rec.uuid as string;
  const connected = new Set([...byUuid.keys()].filter((uuid) => find(uuid) === find(tip)));

  // 2. Abandoned rewind branches.
  const children = new Map<string, RawRecord[]>();
  for (const rec of byUuid.values()) {
    if (typeof rec.parentUuid !== 'string') continue;
    children.set(rec.parentUuid, [...(children.get(rec.parentUuid) ?? []), rec]);
  }
  const isPrompt = (rec: RawRecord): boolean =>
    rec.type === 'user' && !blocksOf(rec).some((block) => block.type === 'tool_result');
  const abandoned = new Set<string>();
  const abandon = (rec: RawRecord): void => {
    abandoned.add(rec.uuid as string);
    for (const child of children.get(rec.uuid as string) ?? []) abandon(child);
  };
  for (const siblings of children.values()) {
    const prompts = siblings
      .filter(isPrompt)
      .sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? ''));
    for (const earlier of prompts.slice(0, -1)) abandon(earlier);
  }

  return lines.filter(({ rec }) => {
    if (typeof rec.uuid !== 'string') return false;
    return connected.has(rec.uuid) && !abandoned.has(rec.uuid);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The sessions a file must give, derived from its raw lines.

interface Derived {
  sourceId: string;
  kind: SessionKind;
  origin: 'file' | 'mirror';
  /** The agent's own id of the parent session, for sub-agents and compaction calls. */
  parentSourceId?: string;
  /** Mirrors: the parent's tool call that started the sub-agent (`parentToolUseID` of the progress lines). */
  spawnedBy?: string;
  counts: Counts;
  /** Branches: what the store keeps of its own (the lines under the abandoned prompt; the prefix is shared). */
  own?: Counts;
}

/**
 * The abandoned branches of a stream that hold a model response: the earlier prompts at a fork (rule 2 of
 * liveLines), each with everything under it. A branch session is the chain down to the prompt plus that
 * subtree; it is named after the last line of the subtree (in file order) that nothing continues.
 */
function branches(lines: RawLine[], sourceId: string): Derived[] {
  const byUuid = new Map<string, RawRecord>();
  for (const { rec } of lines)
    if (typeof rec.uuid === 'string' && !byUuid.has(rec.uuid)) byUuid.set(rec.uuid, rec);
  const children = new Map<string, RawRecord[]>();
  for (const rec of byUuid.values())
    if (typeof rec.parentUuid === 'string')
      children.set(rec.parentUuid, [...(children.get(rec.parentUuid) ?? []), rec]);
  const isPrompt = (rec: RawRecord): boolean =>
    rec.type === 'user' && !blocksOf(rec).some((block) => block.type === 'tool_result');
  const out: Derived[] = [];
  for (const siblings of children.values()) {
    const prompts = siblings
      .filter(isPrompt)
      .sort((a, b) => (a.timestamp ?? '').localeCompare(b.timestamp ?? ''));
    for (const prompt of prompts.slice(0, -1)) {
      const under: RawRecord[] = [];
      const walk = (rec: RawRecord): void => {
        under.push(rec);
        for (const child of children.get(rec.uuid as string) ?? []) walk(child);
      };
      walk(prompt);
      if (!under.some((rec) => rec.type === 'assistant')) continue;
      const above: RawRecord[] = [];
      for (let at = byUuid.get(prompt.parentUuid as string); at; at = byUuid.get(at.parentUuid as string))
        above.unshift(at);
      const inFile = lines.map(({ rec }) => rec).filter((rec) => under.includes(rec));
      const leaf = inFile.filter((rec) => !children.has(rec.uuid as string)).at(-1) as RawRecord;
      out.push({
        sourceId: `${sourceId}/branch-${leaf.uuid}`,
        kind: 'branch',
        origin: 'file',
        parentSourceId: sourceId,
        counts: tally([...above, ...under]),
        own: tally(under),
      });
    }
  }
  return out;
}

function derive(file: string): Derived[] {
  const raw = readRaw(file);
  const sessions: Derived[] = [];

  // Streams: every line carrying a uuid belongs to the main conversation of its `sessionId`, or, when it is a
  // sidechain line with an `agentId`, to that agent (a sub-agent file holds only such lines).
  const streams = new Map<string, { lines: RawLine[]; main: string; agentId?: string }>();
  for (const entry of raw) {
    const { rec } = entry;
    if (typeof rec.uuid !== 'string' || typeof rec.sessionId !== 'string') continue;
    const agentId = rec.isSidechain === true ? rec.agentId : undefined;
    const key = agentId ? `${rec.sessionId}/agent-${agentId}` : rec.sessionId;
    const stream = streams.get(key) ?? { lines: [], main: rec.sessionId, ...(agentId ? { agentId } : {}) };
    stream.lines.push(entry);
    streams.set(key, stream);
  }
  for (const [sourceId, stream] of streams) {
    // The inline `agent_progress` mirrors are progress lines of the parent: they sit in its chain, but their
    // payload (`data.message`) is the sub-agent's, so `tally` (which reads top-level user/assistant lines only)
    // never counts it for the parent. A naive grep for "tool_use" in spotter-subagent-progress.jsonl finds 25
    // calls; the parent made 16, the mirrored sub-agent 9.
    const counts = tally(liveLines(stream.lines).map(({ rec }) => rec));
    if (counts.messages === 0) continue;
    const kind: SessionKind = stream.agentId
      ? // Auto-compaction runs as a pseudo sub-agent `acompact-<hex>`: the side call that wrote the summary.
        stream.agentId.startsWith('acompact')
        ? 'compaction'
        : 'subagent'
      : 'main';
    sessions.push({
      sourceId,
      kind,
      origin: 'file',
      ...(stream.agentId ? { parentSourceId: stream.main } : {}),
      counts,
    });
    if (kind === 'main') sessions.push(...branches(stream.lines, sourceId));
  }

  // Sub-agents known only from `agent_progress` mirrors: each mirrored line is a copy of one sub-agent line, with
  // no chain of its own (its parentUuid is null), so all of them count, once per uuid, in file order. A mirror of
  // an agent whose lines are in this same file, or that has its own `<session>/subagents/agent-<id>.jsonl`, adds
  // nothing: that file is the sub-agent.
  const mirrors = new Map<string, { main: string; spawnedBy?: string; records: Map<string, RawRecord> }>();
  for (const { rec } of raw) {
    if (!isAgentProgress(rec)) continue;
    const inner = rec.data?.message as RawRecord;
    const main = rec.sessionId as string;
    const sourceId = `${main}/agent-${rec.data?.agentId}`;
    const mirror = mirrors.get(sourceId) ?? {
      main,
      ...(rec.parentToolUseID ? { spawnedBy: rec.parentToolUseID } : {}),
      records: new Map<string, RawRecord>(),
    };
    if (!mirror.records.has(inner.uuid as string)) mirror.records.set(inner.uuid as string, inner);
    mirrors.set(sourceId, mirror);
  }
  for (const [sourceId, mirror] of mirrors) {
    const agentId = sourceId.slice(sourceId.indexOf('/agent-') + '/agent-'.length);
    const ownFile = join(file.replace(/\.jsonl$/, ''), 'subagents', `agent-${agentId}.jsonl`);
    if (streams.has(sourceId) || existsSync(ownFile)) continue;
    sessions.push({
      sourceId,
      kind: 'subagent',
      origin: 'mirror',
      parentSourceId: mirror.main,
      ...(mirror.spawnedBy ? { spawnedBy: mirror.spawnedBy } : {}),
      counts: tally([...mirror.records.values()]),
    });
  }
  return sessions.sort((a, b) => a.sourceId.localeCompare(b.sourceId));
}

// ---------------------------------------------------------------------------------------------------------------
// The same numbers read off the adapter's output.

function countsOf(session: Session): Counts {
  const calls = session.messages.flatMap(toolCalls);
  const results = session.messages.flatMap(toolResults);
  return {
    messages: session.messages.length,
    turns: session.messages.filter((m) => m.role === 'assistant' && !m.injected).length,
    toolCalls: new Set(calls.map((c) => c.id)).size,
    toolResults: new Set(results.map((r) => r.callId)).size,
    unanswered: calls.filter((c) => c.unanswered === true).length,
  };
}

function jsonlFiles(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(folder).sort()) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) out.push(...jsonlFiles(path));
    else if (name.endsWith('.jsonl')) out.push(path);
  }
  return out;
}

function allFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The derived numbers, pinned (file → sourceId → counts). Where the right number differs from a naive count of
// the raw file, the comment says why.

const c = (
  messages: number,
  turns: number,
  toolCalls: number,
  toolResults: number,
  unanswered = 0,
): Counts => ({
  messages,
  turns,
  toolCalls,
  toolResults,
  unanswered,
});

const s258 = '258c7280-ae70-4798-800f-63464d01a85d';
const sProgress = '491e126e-1e71-469c-ade2-fcc8af567c74';
const sShowcase = '55550000-0000-4000-8000-000000000001';

const pinned: Record<string, Record<string, Counts>> = {
  // 5 assistant lines are one response (one turn); its two calls were interrupted but got error results.
  'spotter-short.jsonl': { '55604662-cf2a-4331-851a-ec234028f8ca': c(5, 1, 2, 2) },
  // 9 assistant lines, 4 responses; lines 34 and 37 are one response (same message.id and requestId) split by
  // the first call's result, which streaming tool execution wrote in between.
  'spotter-tool-heavy.jsonl': { 'd6e0bada-1959-4eec-a9d2-0bfade768d8f': c(17, 4, 6, 6) },
  // The parent: 28 assistant lines, 12 responses, 16 calls (4 of them parallel calls written as sibling lines).
  // The mirror-only sub-agent afb92ff: 19 agent_progress lines → 1 prompt, 5 responses, 9 calls, 9 results.
  'spotter-subagent-progress.jsonl': {
    [sProgress]: c(32, 12, 16, 16),
    [`${sProgress}/agent-afb92ff`]: c(15, 5, 9, 9),
  },
  // 299 assistant lines, 152 responses (102 before the compaction, 50 after); the compaction summary is a user
  // message. The 5 agent_progress lines mirror part of agent-a881341, which has its own file: no mirror session.
  'spotter-258c7280.jsonl': {
    [s258]: c(344, 152, 186, 186),
  },
  // The real file of that sub-agent: more than its mirror (the text blocks and the final answer).
  'spotter-258c7280/subagents/agent-a881341.jsonl': { [`${s258}/agent-a881341`]: c(6, 3, 2, 2) },
  // 3 user lines, but only the prompt (line 3) is on the compaction call's chain; lines 1–2 hang off the parent.
  'spotter-258c7280/subagents/agent-acompact-fffbd0.jsonl': {
    [`${s258}/agent-acompact-fffbd0`]: c(2, 1, 0, 0),
  },
  // 5 assistant lines, but "First answer" (line 4) is on the abandoned branch: 4 turns, 9 messages (not 11).
  // The abandoned branch (lines 1–4: "First attempt", "First answer") is a session of its own.
  'claude-code-log-synthetic/dag_compact_after_rewind_preserved.jsonl': {
    s2: c(9, 4, 0, 0),
    's2/branch-b1a': c(4, 2, 0, 0),
  },
  // Two parallel Agent calls; only showcol1 has a file (showcol2 has neither file nor mirror: no session).
  'claude-code-log-synthetic/minimal_showcase/55550000-0000-4000-8000-000000000001.jsonl': {
    [sShowcase]: c(11, 5, 5, 5),
  },
  'claude-code-log-synthetic/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.jsonl':
    { [`${sShowcase}/agent-showcol1`]: c(2, 1, 0, 0) },
};

// ---------------------------------------------------------------------------------------------------------------

describe('claude-code adapter on the real fixtures (test/fixtures/real/claude-code)', () => {
  const files = jsonlFiles(dir);
  const rel = (file: string): string => relative(dir, file);
  type Parsed = Omit<FileResult, 'sessions'> & { sessions: ParsedSession[] };
  const parsed = new Map<string, Parsed>();
  const derived = new Map<string, Derived[]>();
  const parsedOf = (file: string): Parsed => {
    let result = parsed.get(file);
    if (!result) {
      const read = claudeCode.parseFile(file);
      result = { ...read, sessions: [...read.sessions] };
      parsed.set(file, result);
    }
    return result;
  };
  const derivedOf = (file: string): Derived[] => {
    let result = derived.get(file);
    if (!result) {
      result = derive(file);
      derived.set(file, result);
    }
    return result;
  };
  const sessionOf = (file: string, sourceId: string): ParsedSession => {
    const session = parsedOf(join(dir, file)).sessions.find((s) => s.sourceId === sourceId);
    if (!session) throw new Error(`no session ${sourceId} from ${file}`);
    return session;
  };

  it('covers every transcript file of the folder, and the pinned table covers exactly those', () => {
    expect(files.map(rel).sort()).toEqual(Object.keys(pinned).sort());
  });

  it('the raw lines stay within what the counting here assumes', () => {
    for (const file of files) {
      for (const { line, rec } of readRaw(file)) {
        const records = isAgentProgress(rec) ? [rec, rec.data?.message as RawRecord] : [rec];
        for (const r of records) {
          const where = `${rel(file)}:${line}`;
          if (r.type === 'assistant') expect(typeof r.message?.id, where).toBe('string');
          if (r.type === 'user' && Array.isArray(r.message?.content)) {
            const blocks = r.message.content;
            const others = blocks.filter((b) => b.type !== 'tool_result');
            // A user line is either all tool results or one block of prompt text/image: so it is at most one
            // 'tool' message plus at most one 'user' message.
            expect(others.length === 0 || others.length === blocks.length, where).toBe(true);
            expect(others.length, where).toBeLessThanOrEqual(1);
            for (const b of others) expect(['text', 'image'], where).toContain(b.type);
          }
          // Queued prompts (attachment/queued_command) would be messages too; none here.
          expect(r.type === 'attachment' && r.attachment?.type === 'queued_command', where).toBe(false);
        }
      }
    }
  });

  it('derives the pinned numbers from the raw lines', () => {
    for (const file of files) {
      const got = Object.fromEntries(derivedOf(file).map((d) => [d.sourceId, d.counts]));
      expect(got, rel(file)).toEqual(pinned[rel(file)]);
    }
  });

  it('each file gives the derived sessions with the derived message, turn, tool-call and tool-result counts', () => {
    for (const file of files) {
      const result = parsedOf(file);
      expect(result.warnings, rel(file)).toEqual([]);
      expect(result.skipped, rel(file)).toBe(0);
      expect(result.lines, rel(file)).toBe(readRaw(file).length);
      const got = result.sessions
        .map((session) => ({
          sourceId: session.sourceId,
          kind: session.kind,
          origin: session.origin,
          counts: countsOf(session),
        }))
        .sort((a, b) => a.sourceId.localeCompare(b.sourceId));
      const want = derivedOf(file).map(({ sourceId, kind, origin, counts }) => ({
        sourceId,
        kind,
        origin,
        counts,
      }));
      expect(got, rel(file)).toEqual(want);
      for (const session of result.sessions) {
        // No call and no result twice: each distinct id above is one part.
        const calls = session.messages.flatMap(toolCalls);
        const results = session.messages.flatMap(toolResults);
        expect(calls.length, `${rel(file)} ${session.sourceId}`).toBe(new Set(calls.map((x) => x.id)).size);
        expect(results.length, `${rel(file)} ${session.sourceId}`).toBe(
          new Set(results.map((x) => x.callId)).size,
        );
        expect(splitTurns(session.messages)).toHaveLength(countsOf(session).turns);
      }
    }
  });

  it('every tool call is paired with a result in its session or marked unanswered (and then given a synthetic one)', () => {
    for (const file of files) {
      for (const session of parsedOf(file).sessions) {
        const where = `${rel(file)} ${session.sourceId}`;
        const answered = new Set(session.messages.flatMap(toolResults).map((r) => r.callId));
        for (const call of session.messages.flatMap(toolCalls)) {
          if (answered.has(call.id)) expect(call.unanswered, `${where} ${call.id}`).toBeUndefined();
          else expect(call.unanswered, `${where} ${call.id}`).toBe(true);
        }
        for (const turn of splitTurns(session.messages)) {
          const calls = toolCalls(turn.response);
          expect(
            turn.results.map((r) => r.callId),
            where,
          ).toEqual(calls.map((x) => x.id));
          calls.forEach((call, i) => {
            const result = turn.results[i];
            if (call.unanswered)
              expect(result, `${where} ${call.id}`).toMatchObject({ synthetic: true, isError: true });
            // A recorded result is found within its own turn, not replaced by a synthetic one.
            else expect(result?.synthetic, `${where} ${call.id}`).toBeUndefined();
          });
        }
      }
    }
  });

  it('a prompt command is the user request it expands to; its invocation and local commands stay harness text', () => {
    const parent = sessionOf('spotter-subagent-progress.jsonl', sProgress);
    const users = parent.messages.filter((m) => m.role === 'user');
    const text = (m: Message) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
    // `/handgemacht:create-beads <args>` is logged as its invocation, then (isMeta) the prompt it expands to.
    const invocation = users.find((m) => text(m).includes('<command-name>/handgemacht:create-beads'));
    const expansion = users.find((m) => text(m).startsWith('Create beads (epic + tasks + dependencies)'));
    expect(invocation?.injected).toBe(true);
    expect(expansion?.injected).toBeUndefined();
    expect(text(expansion as Message)).toContain(
      '**Arguments**: websearch to learn how to fastest setup credo',
    );
    // It is the first thing the user asked: the session's first real user message, and its first turn's prompt.
    expect(users.find((m) => !m.injected)).toBe(expansion);
    // A local command (`/mcp`) and its output are not requests to the model.
    const tools = sessionOf('spotter-tool-heavy.jsonl', 'd6e0bada-1959-4eec-a9d2-0bfade768d8f');
    const local = tools.messages.filter(
      (m) => m.role === 'user' && /<command-name>\/mcp|local-command/.test(text(m)),
    );
    expect(local.length).toBeGreaterThan(0);
    for (const message of local) expect(message.injected).toBe(true);
  });

  it('the mirror-only sub-agent of spotter-subagent-progress is its own child session, spawned by the Task call', () => {
    const file = 'spotter-subagent-progress.jsonl';
    const parent = sessionOf(file, sProgress);
    const child = sessionOf(file, `${sProgress}/agent-afb92ff`);
    const want = derivedOf(join(dir, file)).find((d) => d.sourceId === child.sourceId);
    expect(child).toMatchObject({ kind: 'subagent', origin: 'mirror', parentId: parent.id });
    expect(child.parentToolCallId).toBe(want?.spawnedBy);
    const task = parent.messages.flatMap(toolCalls).find((call) => call.id === want?.spawnedBy);
    expect(task?.name).toBe('Task');
    // None of the mirrored messages is the parent's.
    const mirrored = new Set(child.messages.map((m) => m.nativeId));
    expect(parent.messages.filter((m) => mirrored.has(m.nativeId))).toEqual([]);
  });

  it('the compaction side call is kind compaction, child of the main session', () => {
    const side = sessionOf(
      'spotter-258c7280/subagents/agent-acompact-fffbd0.jsonl',
      `${s258}/agent-acompact-fffbd0`,
    );
    const main = sessionOf('spotter-258c7280.jsonl', s258);
    expect(side).toMatchObject({ kind: 'compaction', parentId: main.id });
  });

  it('respects the compaction in spotter-258c7280.jsonl: turns after it see the summary and nothing before', () => {
    const file = join(dir, 'spotter-258c7280.jsonl');
    const raw = readRaw(file);
    const boundaries = raw.filter(({ rec }) => rec.subtype === 'compact_boundary');
    const summaries = raw.filter(({ rec }) => rec.isCompactSummary === true);
    expect(boundaries).toHaveLength(1);
    expect(summaries).toHaveLength(1);
    const boundaryLine = (boundaries[0] as RawLine).line;
    const responsesBefore = new Set<string>();
    const responsesAfter = new Set<string>();
    for (const { line, rec } of raw) {
      if (rec.type !== 'assistant') continue;
      (line < boundaryLine ? responsesBefore : responsesAfter).add(rec.message?.id as string);
    }

    const session = sessionOf('spotter-258c7280.jsonl', s258);
    const marked = session.messages.filter((m) => m.compaction);
    expect(marked).toHaveLength(1);
    const summary = marked[0] as Message;
    expect(summary).toMatchObject({ role: 'user', injected: true, nativeId: summaries[0]?.rec.uuid });
    expect(summary.source).toMatchObject({ line: summaries[0]?.line });
    const at = session.messages.indexOf(summary);
    const lineOf = (m: Message): number => ('line' in m.source ? m.source.line : Number.NaN);

    const turns = splitTurns(session.messages);
    const before = turns.filter((t) => t.messageIndex < at);
    const after = turns.filter((t) => t.messageIndex > at);
    expect([before.length, after.length]).toEqual([responsesBefore.size, responsesAfter.size]);
    expect([before.length, after.length]).toEqual([102, 50]);
    for (const turn of before) expect(turn.context).not.toContain(summary);
    for (const turn of after) {
      expect(turn.context[0]).toBe(summary);
      // Nothing from before the boundary, by position in the session and by line in the file.
      expect(turn.context.every((m) => session.messages.indexOf(m) >= at)).toBe(true);
      expect(turn.context.filter((m) => lineOf(m) < boundaryLine)).toEqual([]);
    }
    // The first turn after the compaction sees exactly the summary and what followed it (nothing: it answers it).
    expect(after[0]?.context).toEqual([summary]);
  });

  it('drops the abandoned rewind branch of dag_compact_after_rewind_preserved.jsonl and keeps the preserved tail', () => {
    const session = sessionOf('claude-code-log-synthetic/dag_compact_after_rewind_preserved.jsonl', 's2');
    const ids = session.messages.map((m) => m.nativeId);
    // b1u "First attempt" / b1a "First answer" were rewound away.
    expect(ids).not.toContain('b1u');
    expect(ids).not.toContain('b1a');
    expect(ids).toEqual(
      expect.arrayContaining(['u1', 'a1', 'b2u', 'b2a', 'b2u2', 'cs', 'b2a2', 'p1u', 'p1a']),
    );
    const byId = (id: string): Message => session.messages.find((m) => m.nativeId === id) as Message;
    const turns = splitTurns(session.messages);
    const last = turns.find((t) => t.response.nativeId === 'p1a');
    // After the compaction the model saw: the summary, the preserved segment (b2a, b2u2, b2a2), then "After
    // compaction".
    expect(last?.context.map((m) => m.nativeId)).toEqual(['cs', 'b2a', 'b2u2', 'b2a2', 'p1u']);
    expect(byId('cs').compaction).toBe(true);
  });

  it('the preserved tail message b2a2 (written before the compaction) is a turn over the pre-compaction history', () => {
    // b2a2 "Kept going" has timestamp 10:21, before the boundary (10:30) and the summary (10:30:01), and the
    // boundary's logicalParentUuid names it as the last message before the compaction: the model wrote it seeing
    // the live branch, not a summary that did not exist yet. Only its parentUuid was re-pointed at the summary
    // when the segment was preserved. Its turn must not be given a context that starts with the summary.
    const session = sessionOf('claude-code-log-synthetic/dag_compact_after_rewind_preserved.jsonl', 's2');
    const turn = splitTurns(session.messages).find((t) => t.response.nativeId === 'b2a2');
    expect(turn?.context.map((m) => m.nativeId)).toEqual(['u1', 'a1', 'b2u', 'b2a', 'b2u2']);
  });

  describe('ingesting the whole folder', () => {
    let store: ReturnType<typeof tempStore>;
    let first: PathSummary;
    let second: PathSummary;
    let rows: ReturnType<SessionStore['list']> extends Generator<infer R> ? R[] : never;

    // What the store must hold: every derived session once by its own id; a session from its own file wins over
    // a mirror of it in the parent's file.
    const expected = (): Map<string, Derived> => {
      const out = new Map<string, Derived>();
      for (const file of files) {
        for (const d of derivedOf(file)) {
          const seen = out.get(d.sourceId);
          if (!seen || (seen.origin === 'mirror' && d.origin === 'file')) out.set(d.sourceId, d);
        }
      }
      return out;
    };

    beforeAll(() => {
      store = tempStore();
      [first] = ingest(store.db, [dir]) as [PathSummary];
      rows = [...new SessionStore(store.db).list()];
      [second] = ingest(store.db, [dir]) as [PathSummary];
    });
    afterAll(() => store?.close());

    it('reads every transcript and stores each expected session once', () => {
      const want = expected();
      expect(first.error).toBeUndefined();
      expect(first.warnings).toEqual([]);
      expect(first.files).toEqual({
        read: files.length,
        continued: 0,
        unchanged: 0,
        // SOURCES.md, the JSON schema, the sub-agent .meta.json sidecar.
        ignored: allFiles(dir).length - files.length,
        failed: 0,
      });
      // agent-a881341 has its own file, so its mirror in the parent is never built: nothing is stored twice.
      expect(first.sessions).toEqual({ new: want.size, updated: 0, unchanged: 0 });
      expect(rows).toHaveLength(want.size);
      // 10 sessions, and the abandoned branch of dag_compact_after_rewind_preserved.jsonl.
      expect(want.size).toBe(11);
      expect(new Set(rows.map((r) => r.source_id))).toEqual(new Set(want.keys()));
      for (const row of rows) {
        const d = want.get(row.source_id) as Derived;
        expect(
          {
            kind: row.kind,
            origin: row.origin,
            messages: row.message_count,
            turns: row.turn_count,
            toolCalls: row.tool_call_count,
            unanswered: row.unanswered_count,
          },
          row.source_id,
        ).toEqual({
          kind: d.kind,
          origin: d.origin,
          messages: (d.own ?? d.counts).messages,
          turns: (d.own ?? d.counts).turns,
          toolCalls: (d.own ?? d.counts).toolCalls,
          unanswered: (d.own ?? d.counts).unanswered,
        });
        const loaded = new SessionStore(store.db).load(row.id);
        expect(countsOf(loaded?.session as Session), row.source_id).toEqual(d.counts);
      }
    });

    it('gives every sub-agent and compaction session the id of its parent as parent_id', () => {
      const want = expected();
      const children = rows.filter((r) => r.kind !== 'main');
      expect(children.map((r) => r.source_id).sort()).toEqual(
        [...want.values()]
          .filter((d) => d.kind !== 'main')
          .map((d) => d.sourceId)
          .sort(),
      );
      for (const row of rows) {
        const parentSourceId = want.get(row.source_id)?.parentSourceId;
        if (parentSourceId === undefined) {
          expect(row.parent_id, row.source_id).toBeNull();
          continue;
        }
        const parent = rows.find((r) => r.source_id === parentSourceId && r.kind === 'main');
        expect(parent, row.source_id).toBeDefined();
        expect(row.parent_id, row.source_id).toBe(parent?.id);
      }
    });

    it('stores the mirror-derived sub-agent once, and agent-a881341 once with origin file despite its mirror', () => {
      const mirrored = rows.filter((r) => r.source_id === `${sProgress}/agent-afb92ff`);
      expect(mirrored).toHaveLength(1);
      expect(mirrored[0]).toMatchObject({ origin: 'mirror', kind: 'subagent' });
      const real = rows.filter((r) => r.source_id.endsWith('/agent-a881341'));
      expect(real).toHaveLength(1);
      expect(real[0]).toMatchObject({
        source_id: `${s258}/agent-a881341`,
        origin: 'file',
        source_file: join(dir, 'spotter-258c7280', 'subagents', 'agent-a881341.jsonl'),
        message_count:
          pinned['spotter-258c7280/subagents/agent-a881341.jsonl']?.[`${s258}/agent-a881341`]?.messages,
      });
    });

    it('reports every file unchanged when the folder is ingested again', () => {
      expect(second.files).toEqual({
        read: 0,
        continued: 0,
        unchanged: files.length,
        ignored: allFiles(dir).length - files.length,
        failed: 0,
      });
      expect(second.sessions).toEqual({ new: 0, updated: 0, unchanged: rows.length });
      expect(second.messages).toBe(0);
      expect([...new SessionStore(store.db).list()]).toEqual(rows);
    });
  });
});
