// What every reader that continues a grown log shares (the claude-code, codex, gemini and qwen resume.ts): reading
// the lines after where the last read stopped until one is no continuation, taking up the stored messages a new
// line may change, and telling whether a new tool call or result may touch one made before them.

import type { Message } from '../model/session.js';
import { HashSet } from './hash-set.js';
import { type JsonLinesRead, readJsonLines } from './jsonl.js';
import type { Continued, ParsedSession, StoredSession, Warning } from './types.js';

/**
 * Reads the lines of `file` from `from` on, handing each parsed value to `take` as readJsonLines does. `take` calls
 * `stop(why)` at the first line that is no continuation: the read ends there and `why` is returned, since the
 * file must be read whole.
 */
export function readOn(
  file: string,
  warnings: Warning[],
  from: { offset: number; line: number },
  take: (value: unknown, line: number, stop: (why: string) => never) => string | undefined,
): JsonLinesRead | string {
  const stopped = new Error('read whole');
  let why = '';
  const stop = (reason: string): never => {
    why = reason;
    throw stopped;
  };
  try {
    return readJsonLines(file, warnings, (value, line) => take(value, line, stop), from);
  } catch (error) {
    // The rest is read by the full read that follows.
    if (error === stopped) return why;
    throw error;
  }
}

/** The stored messages from `state.tail` on, when the store holds what the last read made; else why not. */
export function storedTail(
  stored: StoredSession,
  state: { tail: number; count: number },
): Message[] | string {
  const tail = state.tail < state.count ? stored.messages(state.tail) : [];
  if (!tail || tail.length !== state.count - state.tail)
    return 'the stored session is not what the last read of this file made';
  return tail;
}

/**
 * Why the messages from index `from` on may touch a tool call made before `messages` (whose ids the kept state
 * packed in `calls`, and those answered in `answered`): a call id seen before, or answered before it was made,
 * would change what a full read names and marks; a result for an earlier call is named from it by a full read.
 * Undefined when none may. The messages before `from` are the stored ones taken up again: their calls are known.
 */
export function touchesEarlierCalls(
  messages: readonly Message[],
  from: number,
  before: { calls: string; answered: string },
): string | undefined {
  const calls = new HashSet(before.calls);
  const answered = new HashSet(before.answered);
  const known = new Set<string>();
  for (const message of messages.slice(0, from))
    for (const part of message.parts) if (part.type === 'tool_call') known.add(part.id);
  for (const message of messages.slice(from))
    for (const part of message.parts) {
      if (part.type === 'tool_call' && (calls.mayHave(part.id) || answered.mayHave(part.id)))
        return `a new tool call may repeat the id ${part.id} of an earlier one`;
      if (part.type === 'tool_result' && !known.has(part.callId) && calls.mayHave(part.callId))
        return `a new tool result may answer the earlier call ${part.callId}`;
      if (part.type === 'tool_call') known.add(part.id);
    }
  return undefined;
}

/**
 * The calls of `messages` (and those `before` held) made and answered, packed later into the state, and the first
 * message a turn with calls still open since the last user message holds: its results may still come. A call
 * left open before the last user message was interrupted (its output, should it come, reads the file whole) and
 * would otherwise hold the tail back for good.
 */
export function openCalls(
  messages: readonly Message[],
  before: { calls?: string; answered?: string } | undefined,
): { first: number; calls: HashSet; answered: HashSet } {
  const calls = new HashSet(before?.calls);
  const answered = new HashSet(before?.answered);
  const input = messages.findLastIndex((message) => message.role === 'user' && !message.compaction);
  let first = messages.length;
  messages.forEach((message, i) => {
    for (const part of message.parts) {
      if (part.type === 'tool_call') {
        calls.add(part.id);
        if (part.unanswered && i > input) first = Math.min(first, i);
      } else if (part.type === 'tool_result') answered.add(part.callId);
    }
  });
  return { first, calls, answered };
}

/** The calls of `messages` (stored ones, taken up again) that were answered: markUnanswered must keep them so. */
export function answeredCalls(messages: readonly Message[]): Set<string> {
  const answered = new Set<string>();
  for (const message of messages)
    for (const part of message.parts)
      if (part.type === 'tool_call' && !part.unanswered) answered.add(part.id);
  return answered;
}

/** Why a kept state is not continued (another version of the reader made it, or it said so); else undefined. */
export function refused(state: { format: number; readWhole?: string }, format: number): string | undefined {
  if (state.format !== format) return 'what the last read kept of it is from another version of the reader';
  return state.readWhole;
}

/**
 * A continued read's answer: the session's messages from `from` on and its metadata after the new lines (its
 * `continues` only when `byLine`, a history named by line, which the full read hashes as it is), what the read
 * reported, and the next state.
 */
export function continuedOf(
  session: ParsedSession,
  from: number,
  read: JsonLinesRead & { skipped: number },
  report: Pick<Continued, 'spawns' | 'warnings' | 'notes'>,
  next: { count: number; state: unknown },
  byLine = false,
): Continued {
  const { messages, origin: _origin, requests: _requests, continues, ...rest } = session;
  const meta = byLine && continues?.line !== undefined ? { ...rest, continues } : rest;
  return {
    sessionId: session.id,
    from,
    messages,
    meta,
    ...report,
    lines: read.lines,
    skipped: read.skipped,
    parsedBytes: read.parsedBytes,
    resume: { sessionId: session.id, messages: next.count, state: next.state },
  };
}
