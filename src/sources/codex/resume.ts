// Continuing a rollout that grew (issue 21): a live Codex thread appends lines to its rollout, and reading the
// whole file again for each new line is O(file). A rollout is written in order and each line only adds to what
// came before, except for a few things still open at the end of a read: the model turn being written (more items
// join it), the latest turn without its token count, a user item a prompt event may still mark as typed, and turns
// whose tool calls wait for their output. Everything before the first of those (the state's `tail`) is final, so
// a continued read takes the stored messages from the tail on, adds the new lines to them as the full read would
// (the same CodexRollout), and finishes them the same way. Anything a full read would treat otherwise — a second
// session_meta, a compaction, a compaction answer, the file's first prompt event, a tool-call id or spawned thread
// that may repeat an earlier one — reads the file whole, and the note says why.
// test/sources/codex/incremental.test.ts proves the store ends as one full read leaves it.

import { HashSet } from '../hash-set.js';
import { readJsonLines } from '../jsonl.js';
import type { Continued, StoredSession, Warning } from '../types.js';
import { CodexRollout } from './parse.js';
import { type RolloutRecord, readRecord, type SessionMeta } from './records.js';

/** What a full read of a rollout leaves for the next read (JSON-safe). Indices are the session's messages. */
export interface CodexState {
  format: 1;
  /** Set when the file cannot be continued: why (its next growth is read whole). */
  readWhole?: string;
  nextLine: number;
  sessionId: string;
  /** Messages made, and the first one new lines may change: all before it are final. */
  count: number;
  tail: number;
  /** The nativeId the id chain continues from at the tail (the message before it, or the chain's seed). */
  chainFrom: string;
  /** The open model turn, the latest turn still without usage, the user item a prompt event would mark (-1: none). */
  turn: number;
  lastTurn: number;
  promptCandidate: number;
  promptPending: boolean;
  promptEvents: boolean;
  lastTokenCount: string | null;
  searches: number;
  /** The session_meta payload without its instructions. */
  meta: SessionMeta | null;
  model: string | null;
  cwd: string | null;
  firstTime: string | null;
  lastTime: string | null;
  /** The session's title when new lines cannot change it (null: it has none); absent when they may. */
  title?: string | null;
  /** Every tool-call id, every id a tool output answers, every thread spawned: packed hash sets. */
  calls: string;
  answered: string;
  children: string;
}

/** Reads the lines after `offset` and, when they only continue the thread, returns what they change. */
export function continueRollout(
  file: string,
  fallbackId: string,
  from: { offset: number; state: unknown },
  stored: StoredSession,
): Continued | string {
  const state = from.state as CodexState;
  if (state.format !== 1) return 'what the last read kept of it is from another version of the reader';
  if (state.readWhole) return state.readWhole;
  const tail = state.tail < state.count ? stored.messages(state.tail) : [];
  if (!tail || tail.length !== state.count - state.tail)
    return 'the stored session is not what the last read of this file made';
  const warnings: Warning[] = [];
  const rollout = CodexRollout.continuing(file, fallbackId, warnings, state, tail);

  let why: string | undefined;
  const stop = new Error('read whole');
  let read: ReturnType<typeof readJsonLines>;
  try {
    read = readJsonLines(
      file,
      warnings,
      (value, line) => {
        const record = readRecord(value, false);
        if (record === 'state') return undefined;
        if (!record) return 'not a rollout record (no "type" and "payload")';
        why = breaks(record, line, state);
        if (why !== undefined) throw stop;
        rollout.add(record, line);
        return undefined;
      },
      { offset: from.offset, line: state.nextLine },
    );
  } catch (error) {
    // The first line that is no continuation ends the read: the rest is read by the full read that follows.
    if (error === stop) return why as string;
    throw error;
  }

  const done = rollout.finishContinued(state, read.nextLine);
  const calls = new HashSet(state.calls);
  const answered = new HashSet(state.answered);
  const children = new HashSet(state.children);
  const known = new Set<string>();
  for (const message of tail)
    for (const part of message.parts) if (part.type === 'tool_call') known.add(part.id);
  for (const message of done.messages.slice(tail.length))
    for (const part of message.parts) {
      // A call id seen before (or answered before it was made) would change what a full read names and marks.
      if (part.type === 'tool_call' && (calls.mayHave(part.id) || answered.mayHave(part.id)))
        return `a new tool call may repeat the id ${part.id} of an earlier one`;
      // An output for a call before the tail is named from that call by a full read.
      if (part.type === 'tool_result' && !known.has(part.callId) && calls.mayHave(part.callId))
        return `a new tool output may answer the earlier call ${part.callId}`;
      if (part.type === 'tool_call') known.add(part.id);
    }
  for (const spawn of done.spawns)
    if (children.mayHave(spawn.childSourceId))
      return `a new spawn may repeat the thread ${spawn.childSourceId} spawned earlier`;

  // A fork names the history it continues by line, as the full read does; a copied one is the store's to find.
  const { messages: _messages, origin: _origin, requests: _requests, continues, ...rest } = done.session;
  const meta = continues?.line !== undefined ? { ...rest, continues } : rest;
  return {
    sessionId: state.sessionId,
    from: state.tail,
    messages: done.messages,
    meta,
    spawns: done.spawns,
    warnings,
    notes: done.notes,
    lines: read.lines,
    skipped: read.skipped + rollout.skipped,
    parsedBytes: read.parsedBytes,
    resume: { sessionId: state.sessionId, messages: done.state.count, state: done.state },
  };
}

/** Why a new line does not simply continue what was read (a full read would treat it otherwise); else undefined. */
function breaks(record: RolloutRecord, line: number, state: CodexState): string | undefined {
  const { type, payload } = record;
  if (type === 'session_meta') return `line ${line} is another session_meta`;
  if (type === 'compacted') return `line ${line} is a compaction`;
  if (type === 'response_item' && record.compactionOutput) return `line ${line} answers a compaction request`;
  if (type === 'event_msg' && !state.promptEvents) {
    const prompt =
      payload.type === 'user_message' ||
      (payload.type === 'item_completed' &&
        typeof payload.item === 'object' &&
        payload.item !== null &&
        (payload.item as { type?: unknown }).type === 'UserMessage');
    // The first prompt event makes every user item no event mirrors Codex's own: earlier ones change.
    if (prompt) return `line ${line} is the file's first prompt event`;
  }
  return undefined;
}
