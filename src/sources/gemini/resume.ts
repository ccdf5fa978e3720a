// Continuing a log that grew (issue 21): Gemini CLI appends records to its session log — each message, written
// again when it changes (a model message with its tool calls once they finished), and `$set` updates of the
// metadata. Only the last model message and what followed it can still change: a continued read rebuilds them
// from the records the state kept (raw) and adds the new records, as a full read would. A history rewrite
// (`$set.messages`: a resume or a compression), a rewind, a message before the last model message written again,
// a tool result that may answer an earlier call, or another file of the same session reads the log whole; the
// note says why. test/sources/gemini/incremental.test.ts proves the store ends as one full read leaves it.

import { continuedOf, readOn, refused, touchesEarlierCalls } from '../continued.js';
import type { Continued, StoredSession, Warning } from '../types.js';
import type { Held } from './build.js';
import { type FileContext, GeminiConversation } from './parse.js';
import { type Json, readRecord } from './records.js';

/** What a full read of a log leaves for the next read (JSON-safe). Indices are the session's messages. */
export interface GeminiState {
  format: 1;
  /** Set when the file cannot be continued: why (its next growth is read whole). */
  readWhole?: string;
  nextLine: number;
  sessionId: string;
  /** Messages made, and the first one new records may change (the last model message's): all before it are final. */
  count: number;
  tail: number;
  /** The message records from the last model message on, as last written. */
  tailHeld: Held[];
  /** The metadata as merged so far (without a history), and what it says of the session. */
  meta: Json;
  metaSeen: boolean;
  startTime: string | null;
  lastTime: string | null;
  /** The messages before the tail hold a conversation; the title their first prompt gives, if any. */
  conversation: boolean;
  prompt?: string;
  /** Every message id (and a compression's copies), call ids answered and made before the tail: packed hash sets. */
  known: string;
  answered: string;
  calls: string;
}

/** Reads the records after `offset` and, when they only continue the log, returns what they change. */
export function continueConversation(
  file: string,
  context: FileContext,
  from: { offset: number; state: unknown },
  _stored: StoredSession,
): Continued | string {
  const state = from.state as GeminiState;
  const refusal = refused(state, 1);
  if (refusal) return refusal;
  const warnings: Warning[] = [];
  const conversation = GeminiConversation.continuing(context, warnings, state);
  const read = readOn(file, warnings, { offset: from.offset, line: state.nextLine }, (value, line, stop) => {
    const record = readRecord(value);
    if (typeof record === 'string') return record;
    conversation.add(record, line);
    if (conversation.stop) stop(conversation.stop);
    return undefined;
  });
  if (typeof read === 'string') return read;
  const done = conversation.finish(read.nextLine);
  if (conversation.stop) return conversation.stop;
  const [session] = done.sessions;
  if (!session || !done.state) return 'the new records hold no conversation';
  // The tail is rebuilt from its records: every message is checked against the calls made before it.
  const touched = touchesEarlierCalls(session.messages, 0, state);
  if (touched) return touched;
  return continuedOf(
    session,
    state.tail,
    { ...read, skipped: read.skipped + conversation.skipped },
    { spawns: done.spawns, warnings, notes: done.notes },
    { count: done.state.count, state: done.state },
  );
}
