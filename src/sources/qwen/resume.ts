// Continuing a chat that grew (issue 21): Qwen Code appends records to its session file, in one chain read in file
// order, and a message never changes once its record is read, except a turn whose tool calls still wait for their
// results. A continued read takes the stored messages from the first such turn on (the state's `tail`), adds the
// new records to them with the same QwenChat, and finishes them as a full read does. A compression, a tool call
// id that may repeat an earlier one, or a result for a call before the tail reads the file whole; the note says
// why. test/sources/qwen/incremental.test.ts proves the store ends as one full read leaves it.

import { HashSet } from '../hash-set.js';
import { readJsonLines } from '../jsonl.js';
import type { Continued, StoredSession, Warning } from '../types.js';
import { QwenChat } from './parse.js';
import { type ApiResponseEvent, readRecord } from './records.js';

/** What a full read of a chat leaves for the next read (JSON-safe). Indices are the session's messages. */
export interface QwenState {
  format: 1;
  /** Set when the file cannot be continued: why (its next growth is read whole). */
  readWhole?: string;
  nextLine: number;
  sessionId: string;
  /** Messages made, and the first one new records may change: all before it are final. */
  count: number;
  tail: number;
  /** The last record's uuid; the requests (api_response events) not yet followed by their turn. */
  previous: string | null;
  pending: ApiResponseEvent[];
  sourceId: string | null;
  cwd: string | null;
  version: string | null;
  firstTime: string | null;
  lastTime: string | null;
  /** The session's title when new records cannot change it (null: it has none); absent when they may. */
  title?: string | null;
  /** Every record's uuid, every tool-call id, every id a result answers: packed hash sets. */
  uuids: string;
  calls: string;
  answered: string;
}

/** Reads the records after `offset` and, when they only continue the chat, returns what they change. */
export function continueChat(
  file: string,
  fallbackId: string,
  from: { offset: number; state: unknown },
  stored: StoredSession,
): Continued | string {
  const state = from.state as QwenState;
  if (state.format !== 1) return 'what the last read kept of it is from another version of the reader';
  if (state.readWhole) return state.readWhole;
  const tail = state.tail < state.count ? stored.messages(state.tail) : [];
  if (!tail || tail.length !== state.count - state.tail)
    return 'the stored session is not what the last read of this file made';
  const warnings: Warning[] = [];
  const chat = QwenChat.continuing(file, fallbackId, warnings, state, tail);

  let why: string | undefined;
  const stop = new Error('read whole');
  let read: ReturnType<typeof readJsonLines>;
  try {
    read = readJsonLines(
      file,
      warnings,
      (value, line) => {
        const record = readRecord(value);
        if (typeof record === 'string') return record;
        if (record.type === 'system' && record.subtype === 'chat_compression') {
          why = `line ${line} is a compression`;
          throw stop;
        }
        return chat.add(record, line);
      },
      { offset: from.offset, line: state.nextLine },
    );
  } catch (error) {
    // The first record that is no continuation ends the read: the rest is read by the full read that follows.
    if (error === stop) return why as string;
    throw error;
  }

  const done = chat.finish(read.nextLine, state);
  const [session] = done.sessions;
  if (!session || !done.state) return 'the new records hold no session';
  const calls = new HashSet(state.calls);
  const answered = new HashSet(state.answered);
  const known = new Set<string>();
  for (const message of tail)
    for (const part of message.parts) if (part.type === 'tool_call') known.add(part.id);
  for (const message of session.messages.slice(tail.length))
    for (const part of message.parts) {
      // A call id seen before (or answered before it was made) would change what a full read names and marks.
      if (part.type === 'tool_call' && (calls.mayHave(part.id) || answered.mayHave(part.id)))
        return `a new tool call may repeat the id ${part.id} of an earlier one`;
      // A result for a call before the tail is named from that call by a full read.
      if (part.type === 'tool_result' && !known.has(part.callId) && calls.mayHave(part.callId))
        return `a new tool result may answer the earlier call ${part.callId}`;
      if (part.type === 'tool_call') known.add(part.id);
    }
  const { messages, origin: _origin, requests: _requests, continues: _continues, ...meta } = session;
  return {
    sessionId: state.sessionId,
    from: state.tail,
    messages,
    meta,
    spawns: [],
    warnings,
    notes: done.notes,
    lines: read.lines,
    skipped: read.skipped,
    parsedBytes: read.parsedBytes,
    resume: { sessionId: state.sessionId, messages: done.state.count, state: done.state },
  };
}
