// Continuing a chat that grew (issue 21): Qwen Code appends records to its session file, in one chain read in file
// order, and a message never changes once its record is read, except a turn whose tool calls still wait for their
// results. A continued read takes the stored messages from the first such turn on (the state's `tail`), adds the
// new records to them with the same QwenChat, and finishes them as a full read does. A compression, a tool call
// id that may repeat an earlier one, or a result for a call before the tail reads the file whole; the note says
// why. test/sources/qwen/incremental.test.ts proves the store ends as one full read leaves it.

import { continuedOf, readOn, refused, storedTail, touchesEarlierCalls } from '../continued.js';
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
  const refusal = refused(state, 1);
  if (refusal) return refusal;
  const tail = storedTail(stored, state);
  if (typeof tail === 'string') return tail;
  const warnings: Warning[] = [];
  const chat = QwenChat.continuing(file, fallbackId, warnings, state, tail);
  const read = readOn(file, warnings, { offset: from.offset, line: state.nextLine }, (value, line, stop) => {
    const record = readRecord(value);
    if (typeof record === 'string') return record;
    if (record.type === 'system' && record.subtype === 'chat_compression')
      stop(`line ${line} is a compression`);
    return chat.add(record, line);
  });
  if (typeof read === 'string') return read;

  const done = chat.finish(read.nextLine, state);
  const [session] = done.sessions;
  if (!session || !done.state) return 'the new records hold no session';
  const touched = touchesEarlierCalls(session.messages, tail.length, state);
  if (touched) return touched;
  return continuedOf(
    session,
    state.tail,
    read,
    { spawns: [], warnings, notes: done.notes },
    { count: done.state.count, state: done.state },
  );
}
