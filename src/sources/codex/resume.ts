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

import { continuedOf, readOn, refused, storedTail, touchesEarlierCalls } from '../continued.js';
import { HashSet } from '../hash-set.js';
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
  const refusal = refused(state, 1);
  if (refusal) return refusal;
  const tail = storedTail(stored, state);
  if (typeof tail === 'string') return tail;
  const warnings: Warning[] = [];
  const rollout = CodexRollout.continuing(file, fallbackId, warnings, state, tail);
  const read = readOn(file, warnings, { offset: from.offset, line: state.nextLine }, (value, line, stop) => {
    const record = readRecord(value, false);
    if (record === 'state') return undefined;
    if (!record) return 'not a rollout record (no "type" and "payload")';
    const why = breaks(record, line, state);
    if (why !== undefined) stop(why);
    rollout.add(record, line);
    return undefined;
  });
  if (typeof read === 'string') return read;

  const done = rollout.finishContinued(state, read.nextLine);
  const touched = touchesEarlierCalls(done.messages, tail.length, state);
  if (touched) return touched;
  const children = new HashSet(state.children);
  for (const spawn of done.spawns)
    if (children.mayHave(spawn.childSourceId))
      return `a new spawn may repeat the thread ${spawn.childSourceId} spawned earlier`;

  // A fork names the history it continues by line, as the full read does; a copied one is the store's to find.
  return continuedOf(
    done.session,
    state.tail,
    { ...read, skipped: read.skipped + rollout.skipped },
    { spawns: done.spawns, warnings, notes: done.notes },
    { count: done.state.count, state: done.state },
    true,
  );
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
