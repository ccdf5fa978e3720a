// Continuing a transcript that grew (issue 21): a live Claude Code session appends lines to its file, and reading
// the whole file again for each new line is O(file). When the new lines only continue the conversation — each
// one a child of the line before it, later than everything read, of the one stream the file holds — the messages
// they make are those a full read would add, and only the new bytes are read. Anything else (a rewind, a
// compaction, a sub-agent's lines, request records, a line that reuses an id) is read whole again, and the note
// says why. test/sources/claude-code/incremental.test.ts proves the store ends as one full read leaves it.

import { sessionId } from '../../model/ids.js';
import { type Message, type Session, toolCalls, toolResults } from '../../model/session.js';
import { HashSet } from '../hash-set.js';
import { readJsonLines } from '../jsonl.js';
import type { Continued, Resume, Spawn, Warning } from '../types.js';
import {
  type ConvertSeed,
  convert,
  type Entry,
  firstTitle,
  invokesCommand,
  latestLeaf,
  type Stream,
  slim,
  spanOf,
  spawnsOf,
  streamId,
} from './parse.js';
import { conversationTypes, type Envelope, isEnvelope, knownTypes } from './records.js';

type Meta = Omit<Session, 'messages' | 'requests' | 'continues' | 'title'>;

/** What is kept of a transcript's one stream to continue it. */
interface State {
  /** Set when the file cannot be continued: why (its next growth is read whole). */
  readWhole?: string;
  stream: string;
  nextLine: number;
  order: number;
  /** The conversation's last line, and whether it invoked a slash command (a meta line after it expands it). */
  leaf: string;
  leafCommand: boolean;
  /** The latest timestamp of any line of the stream. */
  latest: string;
  /** The messages made so far, and the last assistant response among them (lines of it may still follow). */
  count: number;
  tip?: { response: string; index: number; output: number };
  /** Tool calls without a result yet: id, name, index of their message. */
  open: [string, string, number][];
  /** Every uuid, response id and tool-call id of the stream; calls answered off the conversation; results of no call. */
  uuids: string;
  responses: string;
  calls: string;
  offPathAnswers: string;
  unnamed: string;
  requests: boolean;
  titles: { custom: string; ai: string; described?: string; first?: string };
  meta: Meta;
}

/** The state after a full read of a file whose only stream is `stream`. */
export function resumeOf(input: {
  stream: Stream;
  session: Session;
  ordered: Entry[];
  readWhole: string[];
  titles: { custom: string; ai: string; described?: string };
  order: number;
  nextLine: number;
}): Resume {
  const { stream, session, ordered } = input;
  const reasons = [...input.readWhole];
  if (stream.loose.length > 0) reasons.push('it has conversation lines without a uuid');
  if (stream.awaiting) reasons.push('its last request record still waits for its response');
  const log = session.requests;
  if (log?.records.some((record) => record.tail.some((hash) => !log.messages[hash])))
    reasons.push('some messages of its request records were not found');
  const leaf = latestLeaf(stream.byUuid);
  if (!leaf?.env.uuid) reasons.push('its lines have no uuids');

  const messages = session.messages;
  const { title: _title, messages: _messages, requests: _requests, continues: _continues, ...meta } = session;
  const state: State = {
    stream: stream.sourceId,
    nextLine: input.nextLine,
    order: input.order,
    leaf: leaf?.env.uuid ?? '',
    leafCommand: leaf !== undefined && leaf.env.type === 'user' && invokesCommand(leaf.env),
    latest: '',
    count: messages.length,
    open: [],
    uuids: '',
    responses: '',
    calls: '',
    offPathAnswers: '',
    unnamed: '',
    requests: (log?.records.length ?? 0) > 0,
    titles: { ...input.titles },
    meta: meta as Meta,
  };
  if (reasons.length > 0) state.readWhole = reasons.join('; ');
  else {
    const uuids = new HashSet();
    const responses = new HashSet();
    let latest = '';
    for (const { env } of stream.byUuid.values()) {
      uuids.add(env.uuid as string);
      if (env.type === 'assistant') responses.add(env.message?.id ?? (env.uuid as string));
      if (env.timestamp && env.timestamp > latest) latest = env.timestamp;
    }
    const kept = new Set(ordered.map((entry) => entry.env.uuid));
    const offPath = new HashSet();
    for (const entry of stream.byUuid.values()) {
      if (kept.has(entry.env.uuid) || entry.env.type !== 'user') continue;
      const content = entry.env.message?.content;
      if (!Array.isArray(content)) continue;
      for (const block of content) {
        const id = (block as { tool_use_id?: unknown }).tool_use_id;
        if (block.type === 'tool_result' && typeof id === 'string') offPath.add(id);
      }
    }
    const calls = new HashSet();
    const unnamed = new HashSet();
    const answered = new Set<string>();
    messages.forEach((message, index) => {
      for (const call of toolCalls(message)) {
        calls.add(call.id);
        if (call.unanswered) state.open.push([call.id, call.name, index]);
      }
      for (const result of toolResults(message)) {
        answered.add(result.callId);
        if (result.name === undefined) unnamed.add(result.callId);
      }
    });
    const last = messages.findLastIndex((message) => message.role === 'assistant');
    if (last !== -1) state.tip = tipOf(messages[last] as Message, last, stream, ordered);
    Object.assign(state, {
      latest,
      uuids: uuids.pack(),
      responses: responses.pack(),
      calls: calls.pack(),
      offPathAnswers: offPath.pack(),
      unnamed: unnamed.pack(),
    });
    state.titles.first = firstTitle(messages);
  }
  return { sessionId: session.id, messages: messages.length, state };
}

/** The assistant message at `index` as the tip lines may still add to: its response id and largest output count. */
function tipOf(message: Message, index: number, stream: Stream, ordered: Entry[]): State['tip'] {
  // The message's nativeId is the uuid of its response's first line; the response id is on that line.
  const first = message.nativeId ? stream.byUuid.get(message.nativeId) : undefined;
  const response = first?.env.message?.id ?? message.nativeId ?? '';
  const output = outputOf(ordered, response);
  return { response, index, output };
}

/**
 * Reads the lines after `offset` and, when they only continue the conversation, returns what they change; else
 * why the file must be read whole.
 */
export function continueTranscript(
  file: string,
  fallbackId: string,
  from: { offset: number; state: unknown },
  stored: (index: number) => Message[] | undefined,
): Continued | string {
  const state = from.state as State;
  if (state.readWhole) return state.readWhole;
  const warnings: Warning[] = [];
  const spawns: Spawn[] = [];
  const unknown = new Map<string, number>();
  const entries: Entry[] = [];
  const uuids = new HashSet(state.uuids);
  const responses = new HashSet(state.responses);
  const calls = new HashSet(state.calls);
  const offPathAnswers = new HashSet(state.offPathAnswers);
  const unnamed = new HashSet(state.unnamed);
  const titles = { ...state.titles };
  const open = new Map(state.open.map(([id, name, index]) => [id, { name, index }]));
  let { leaf, leafCommand, latest, order } = state;
  let mergesTip = false;
  let why: string | undefined;
  /** Responses and tool calls first seen in the new lines (later lines of a new response add to it). */
  const freshResponses = new Set<string>();
  const freshCalls = new Set<string>();
  /** The calls the new lines' tool results answer. */
  const answers = new Set<string>();

  const stop = new Error('read whole');
  const take = (value: unknown, line: number): string | undefined => {
    if (!isEnvelope(value)) return 'not a transcript record (no "type")';
    order++;
    const { type } = value;
    if (!knownTypes.has(type)) unknown.set(type, (unknown.get(type) ?? 0) + 1);
    if (type.startsWith('api-request')) why = `line ${line} is a request record`;
    else if (type === 'summary') why = `line ${line} is a 'summary' line`;
    else if (type === 'progress' && value.data?.type === 'agent_progress')
      why = `line ${line} is a sub-agent's progress`;
    if (why !== undefined) throw stop;
    if (type === 'ai-title' && value.aiTitle) titles.ai = value.aiTitle;
    if (type === 'custom-title' && value.customTitle) titles.custom = value.customTitle;
    if (typeof value.uuid !== 'string') {
      if (conversationTypes.has(type)) {
        why = `line ${line} is a conversation line without a uuid`;
        throw stop;
      }
      return undefined;
    }
    why = continues(value, line);
    if (why !== undefined) throw stop;
    entries.push({ env: slim(value), line, order: order - 1 });
    spawns.push(...spawnsOf(value, value.sessionId ?? fallbackId));
    leaf = value.uuid;
    leafCommand = type === 'user' && invokesCommand(value);
    latest = value.timestamp as string;
    return undefined;
  };
  let read: ReturnType<typeof readJsonLines>;
  try {
    read = readJsonLines(file, warnings, take, { offset: from.offset, line: state.nextLine });
  } catch (error) {
    // The first line that is no continuation ends the read: the rest is read by the full read that follows.
    if (error === stop) return why as string;
    throw error;
  }

  /** Why this line does not simply continue the conversation; undefined when it does. */
  function continues(value: Envelope, line: number): string | undefined {
    if (streamId(value, fallbackId) !== state.stream) return `line ${line} belongs to another conversation`;
    if (value.parentUuid !== leaf) return `line ${line} does not continue the conversation's last line`;
    if (uuids.mayHave(value.uuid as string)) return `line ${line} may repeat the uuid of an earlier line`;
    if (typeof value.timestamp !== 'string' || value.timestamp < latest)
      return `line ${line} is not later than the lines before it`;
    if (value.subtype === 'compact_boundary' || value.isCompactSummary) return `line ${line} is a compaction`;
    uuids.add(value.uuid as string);
    const content = Array.isArray(value.message?.content) ? value.message.content : [];
    if (value.type === 'assistant') {
      const id = value.message?.id ?? (value.uuid as string);
      if (id === state.tip?.response) {
        // Lines of a response recorded with its request would change what that request's messages resolve to.
        if (state.requests) return `line ${line} adds to a response its request records already name`;
        mergesTip = true;
      } else if (!freshResponses.has(id)) {
        if (responses.mayHave(id)) return `line ${line} may continue an earlier response`;
        freshResponses.add(id);
        responses.add(id);
      }
      for (const block of content) {
        const callId = (block as { id?: unknown }).id;
        if ((block.type !== 'tool_use' && block.type !== 'server_tool_use') || typeof callId !== 'string')
          continue;
        if (freshCalls.has(callId)) continue;
        if (calls.mayHave(callId) || offPathAnswers.mayHave(callId) || unnamed.mayHave(callId))
          return `line ${line} may repeat a tool call id already answered or called`;
        freshCalls.add(callId);
        calls.add(callId);
      }
    }
    if (value.type === 'user')
      for (const block of content) {
        const callId = (block as { tool_use_id?: unknown }).tool_use_id;
        if (block.type !== 'tool_result' || typeof callId !== 'string') continue;
        answers.add(callId);
        if (open.has(callId)) continue;
        // A result of a call made in these new lines is named from it; of an earlier closed call it is not.
        if (calls.mayHave(callId) && !freshCalls.has(callId))
          return `line ${line} answers an earlier call that already has its result`;
      }
    return undefined;
  }

  // The messages the new lines change: the response they add to, and those whose open calls they answer.
  let first = state.count;
  if (mergesTip && state.tip) first = Math.min(first, state.tip.index);
  for (const [id, call] of open) if (answers.has(id)) first = Math.min(first, call.index);
  const changed = first < state.count ? stored(first) : [];
  if (!changed || changed.length !== state.count - first)
    return 'the stored session is not what the last read of this file made';

  const seed: ConvertSeed = { responses: new Map(), usageSeen: new Map(), commands: new Set() };
  if (mergesTip && state.tip) {
    const tip = changed[state.tip.index - first] as Message;
    seed.responses.set(state.tip.response, tip);
    seed.usageSeen.set(state.tip.response, state.tip.output);
  }
  if (state.leafCommand) seed.commands.add(state.leaf);
  const added = convert(entries, file, new Map(), seed);
  const messages = [...changed, ...added];

  // What nameResults and markUnanswered do over the whole session, for the calls and results that changed.
  const names = new Map([...open].map(([id, call]) => [id, call.name]));
  for (const message of messages) for (const call of toolCalls(message)) names.set(call.id, call.name);
  for (const message of added)
    for (const result of toolResults(message)) {
      if (result.name !== undefined) continue;
      const name = names.get(result.callId);
      if (name !== undefined) result.name = name;
      else unnamed.add(result.callId);
    }
  messages.forEach((message, i) => {
    for (const call of toolCalls(message)) {
      if (answers.has(call.id)) {
        delete call.unanswered;
        open.delete(call.id);
      } else if (freshCalls.has(call.id) || open.has(call.id)) {
        call.unanswered = true;
        open.set(call.id, { name: call.name, index: first + i });
      }
    }
  });

  const span: Meta = { ...state.meta };
  spanOf(span, entries);
  const meta: Meta & { title?: string } = { ...span };
  if (titles.first === undefined) titles.first = firstTitle(added);
  const title = titles.custom || titles.ai || (state.meta.kind !== 'main' ? titles.described : undefined);
  if (title) meta.title = title;
  else if (titles.first !== undefined) meta.title = titles.first;

  let tip = state.tip;
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    const index = first + i;
    if (index === state.tip?.index) {
      if (mergesTip) tip = { ...state.tip, output: seed.usageSeen.get(state.tip.response) ?? -1 };
    } else {
      const entry = entries.find(({ env }) => env.uuid === message.nativeId);
      const response = entry?.env.message?.id ?? message.nativeId ?? '';
      tip = { response, index, output: outputOf(entries, response) };
    }
  });

  const next: State = {
    ...state,
    nextLine: read.nextLine,
    order,
    leaf,
    leafCommand,
    latest,
    count: first + messages.length,
    open: [...open].map(([id, call]) => [id, call.name, call.index]),
    uuids: uuids.pack(),
    responses: responses.pack(),
    calls: calls.pack(),
    offPathAnswers: offPathAnswers.pack(),
    unnamed: unnamed.pack(),
    titles,
    meta: span,
  };
  if (tip) next.tip = tip;
  const notes = [...unknown].map(
    ([type, count]) => `${count} line(s) of unknown type '${type}' kept out of the conversation`,
  );
  const id = sessionId('claude-code', state.stream);
  return {
    sessionId: id,
    from: first,
    messages,
    meta,
    spawns,
    warnings,
    notes,
    lines: read.lines,
    skipped: read.skipped,
    parsedBytes: read.parsedBytes,
    resume: { sessionId: id, messages: next.count, state: next },
  };
}

/** The largest output count among the lines of one response (what convert keeps as its usage). */
function outputOf(entries: readonly Entry[], response: string): number {
  let output = -1;
  for (const { env } of entries) {
    if (env.type !== 'assistant' || (env.message?.id ?? env.uuid) !== response || !env.message?.usage)
      continue;
    const count = env.message.usage.output_tokens ?? -1;
    if (count >= output) output = count;
  }
  return output;
}
