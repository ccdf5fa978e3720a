// Continuing a log that grew (issue 21): Gemini CLI appends records to its session log — each message, written
// again when it changes (a model message with its tool calls once they finished), and `$set` updates of the
// metadata. Only the last model message and what followed it can still change: a continued read rebuilds them
// from the records the state kept (raw) and adds the new records, as a full read would. A history rewrite
// (`$set.messages`: a resume or a compression), a rewind, a message before the last model message written again,
// a tool result that may answer an earlier call, or another file of the same session reads the log whole; the
// note says why. test/sources/gemini/incremental.test.ts proves the store ends as one full read leaves it.

import { HashSet } from '../hash-set.js';
import { readJsonLines } from '../jsonl.js';
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
  if (state.format !== 1) return 'what the last read kept of it is from another version of the reader';
  if (state.readWhole) return state.readWhole;
  const warnings: Warning[] = [];
  const conversation = GeminiConversation.continuing(context, warnings, state);
  const stop = new Error('read whole');
  let read: ReturnType<typeof readJsonLines>;
  try {
    read = readJsonLines(
      file,
      warnings,
      (value, line) => {
        const record = readRecord(value);
        if (typeof record === 'string') return record;
        conversation.add(record, line);
        if (conversation.stop) throw stop;
        return undefined;
      },
      { offset: from.offset, line: state.nextLine },
    );
  } catch (error) {
    // The first record that is no continuation ends the read: the rest is read by the full read that follows.
    if (error === stop) return conversation.stop as string;
    throw error;
  }
  const done = conversation.finish(read.nextLine);
  if (conversation.stop) return conversation.stop;
  const [session] = done.sessions;
  if (!session || !done.state) return 'the new records hold no conversation';
  const calls = new HashSet(state.calls);
  const answered = new HashSet(state.answered);
  const local = new Set<string>();
  for (const message of session.messages)
    for (const part of message.parts) if (part.type === 'tool_call') local.add(part.id);
  for (const message of session.messages)
    for (const part of message.parts) {
      // A result for a call before the tail is named from it and answers it in a full read.
      if (part.type === 'tool_result' && !local.has(part.callId) && calls.mayHave(part.callId))
        return `a tool result may answer the earlier call ${part.callId}`;
      // A call already answered before the tail would be marked answered by a full read.
      if (part.type === 'tool_call' && (answered.mayHave(part.id) || calls.mayHave(part.id)))
        return `a tool call may repeat the id ${part.id} of an earlier one`;
    }
  const { messages, origin: _origin, requests: _requests, continues: _continues, ...meta } = session;
  return {
    sessionId: state.sessionId,
    from: state.tail,
    messages,
    meta,
    spawns: done.spawns,
    warnings,
    notes: done.notes,
    lines: read.lines,
    skipped: read.skipped + conversation.skipped,
    parsedBytes: read.parsedBytes,
    resume: { sessionId: state.sessionId, messages: done.state.count, state: done.state },
  };
}
