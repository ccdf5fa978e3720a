// Continuing a transcript that grew (issue 21): a live Claude Code session appends lines to its file, and reading
// the whole file again for each new line is O(file). When the new lines only continue the conversation — each
// one a child of the line before it, later than everything read, of the one stream the file holds — the messages
// they make are those a full read would add, and only the new bytes are read. Request records (2.1.3xx) are read
// on too: a new record's tail names the messages appended since the record before it, so the lines after the
// last record are kept (raw) to resolve it. Anything else (a rewind, a compaction, a sub-agent's lines, a line
// that reuses an id, a tail hash not found there) is read whole again, and the note says why.
// test/sources/claude-code/incremental.test.ts proves the store ends as one full read leaves it.

import { sessionId } from '../../model/ids.js';
import {
  messageHash,
  type RequestLog,
  type RequestRecord,
  type RequestShape,
  type WireBlock,
  type WireMessage,
} from '../../model/request.js';
import { type Message, type Session, toolCalls, toolResults } from '../../model/session.js';
import { readOn, refused } from '../continued.js';
import { HashSet } from '../hash-set.js';
import type { Continued, GrownRequests, Resume, Spawn, StoredSession, Warning } from '../types.js';
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
import {
  type ConversationLine,
  findInTranscript,
  type PendingRecord,
  type RequestLine,
  recordEnvelope,
  takeRequestLine,
} from './requests.js';

type Meta = Omit<Session, 'messages' | 'requests' | 'continues' | 'title'>;

/** Bumped when State changes: a state kept by another version is not continued (the file is read whole once). */
const format = 2;

/** What is kept of a transcript's one stream to continue it. */
interface State {
  format: number;
  /** Set when the file cannot be continued: why (its next growth is read whole). */
  readWhole?: string;
  stream: string;
  nextLine: number;
  order: number;
  /** The conversation's last line, and whether it invoked a slash command (a meta line after it expands it). */
  leaf: string;
  leafCommand: boolean;
  /**
   * The latest timestamp of the stream's other childless lines: a full read takes the latest childless line as
   * the conversation's end, so a new line earlier than this one would end it elsewhere.
   */
  rival: string;
  /** The messages made so far, and the last assistant response among them (lines of it may still follow). */
  count: number;
  /** Its response id, index, first line's uuid (its nativeId) and largest output count. */
  tip?: { response: string; index: number; native: string; output: number };
  /** Tool calls without a result yet: id, name, index of their message. */
  open: [string, string, number][];
  /** Every uuid, response id and tool-call id of the stream; calls answered off the conversation; results of no call. */
  uuids: string;
  responses: string;
  calls: string;
  offPathAnswers: string;
  unnamed: string;
  /** Whether the file holds request records; then `log` says what the next record needs. */
  requests: boolean;
  log?: LogState;
  titles: { custom: string; ai: string; described?: string; first?: string };
  meta: Meta;
}

/** What is kept of the stream's request log to continue it. */
interface LogState {
  records: number;
  /** The last record still waits for the assistant line it produced. */
  awaiting: boolean;
  /** The hashes the log resolved, and the shapes its records use. */
  resolved: string;
  shapes: string;
  /**
   * The conversation lines after the last record, raw (type, uuid, response id, content): a new record's tail
   * names the messages they make. `sinceIndex`: the first message they may be part of.
   */
  since: ConversationLine[];
  sinceIndex: number;
  /** The tip response as merged so far may be a message a record names: a line added to it reads whole. */
  tipNamed: boolean;
  /** Shapes and blobs no record names yet (a record written after them will), raw. */
  pendingShapes: [string, RequestShape][];
  pendingBlobs: [string, WireMessage][];
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
  /** The file's request shapes and blobs, by hash. */
  shapes: ReadonlyMap<string, RequestShape>;
  blobs: ReadonlyMap<string, WireMessage>;
}): Resume {
  const { stream, session, ordered } = input;
  const reasons = [...input.readWhole];
  if (stream.loose.length > 0) reasons.push('it has conversation lines without a uuid');
  const log = session.requests;
  if (log?.records.some((record) => record.tail.some((hash) => !log.messages[hash])))
    reasons.push('some messages of its request records were not found');
  const leaf = latestLeaf(stream.byUuid);
  if (!leaf?.env.uuid) reasons.push('its lines have no uuids');

  const messages = session.messages;
  const { title: _title, messages: _messages, requests: _requests, continues: _continues, ...meta } = session;
  const state: State = {
    format,
    stream: stream.sourceId,
    nextLine: input.nextLine,
    order: input.order,
    leaf: leaf?.env.uuid ?? '',
    leafCommand: leaf !== undefined && leaf.env.type === 'user' && invokesCommand(leaf.env),
    rival: '',
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
    const parents = new Set<string>();
    for (const { env } of stream.byUuid.values()) {
      uuids.add(env.uuid as string);
      if (env.type === 'assistant') responses.add(env.message?.id ?? (env.uuid as string));
      if (typeof env.parentUuid === 'string') parents.add(env.parentUuid);
    }
    let rival = '';
    for (const { env } of stream.byUuid.values())
      if (env.uuid !== state.leaf && !parents.has(env.uuid as string) && (env.timestamp ?? '') > rival)
        rival = env.timestamp ?? '';
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
    messages.forEach((message, index) => {
      for (const call of toolCalls(message)) {
        calls.add(call.id);
        if (call.unanswered) state.open.push([call.id, call.name, index]);
      }
      for (const result of toolResults(message)) if (result.name === undefined) unnamed.add(result.callId);
    });
    const last = messages.findLastIndex((message) => message.role === 'assistant');
    if (last !== -1) state.tip = tipOf(messages[last] as Message, last, stream, ordered);
    if (log && log.records.length > 0) {
      const lastLine = log.records.at(-1)?.line ?? 0;
      const lineOf = (message: Message) => stream.byUuid.get(uuidOf(message.nativeId) ?? '')?.line;
      const since = [...stream.byUuid.values()]
        .filter((entry) => entry.line > lastLine)
        .sort((a, b) => a.order - b.order)
        .flatMap(sinceLine);
      const resolved = new HashSet();
      for (const hash of Object.keys(log.messages)) resolved.add(hash);
      const shapes = new HashSet();
      for (const record of log.records) shapes.add(record.shapeHash);
      state.log = {
        records: log.records.length,
        awaiting: stream.awaiting !== undefined,
        resolved: resolved.pack(),
        shapes: shapes.pack(),
        since,
        sinceIndex: sinceIndexOf(
          messages,
          0,
          (message) => {
            const line = lineOf(message);
            return line === undefined ? undefined : line < lastLine;
          },
          0,
        ),
        tipNamed: tipNamed(since, state.tip, resolved),
        ...pendingOf(input.shapes, input.blobs, log.records),
      };
    }
    Object.assign(state, {
      rival,
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
  return { response, index, native: message.nativeId ?? '', output };
}

/** The uuid of a message's first line (a line made into several messages numbers them `uuid#n`). */
function uuidOf(nativeId: string | undefined): string | undefined {
  return nativeId?.split('#')[0];
}

/** A conversation line as findInTranscript reads it: only what tells runs and responses apart, and content. */
function sinceLine(entry: Entry): ConversationLine[] {
  const { env, order } = entry;
  if (env.type === 'system') return [{ env: { type: 'system' }, order }];
  if (env.type !== 'user' && env.type !== 'assistant') return [];
  const message: NonNullable<Envelope['message']> = { content: env.message?.content } as NonNullable<
    Envelope['message']
  >;
  if (env.message?.id !== undefined) message.id = env.message.id;
  return [{ env: { type: env.type, ...(env.uuid ? { uuid: env.uuid } : {}), message }, order }];
}

/**
 * The first message the lines after a record may be part of: the last one whose first line is before it (a
 * message started before the record may take later lines; every message after it started after the record).
 * `messages` are the session's from index `from` on, `before` says of each (undefined when it cannot), and
 * `otherwise` is the answer when none of them is before it.
 */
function sinceIndexOf(
  messages: readonly Message[],
  from: number,
  before: (m: Message) => boolean | undefined,
  otherwise: number,
): number {
  for (let i = messages.length - 1; i >= 0; i--) if (before(messages[i] as Message) === true) return from + i;
  return otherwise;
}

/**
 * Whether the tip response as merged so far may be a message some record names: always when one of its lines
 * is before the last record (that record's tail may hold it), else when its hash is among the resolved ones.
 */
function tipNamed(since: readonly ConversationLine[], tip: State['tip'], resolved: HashSet): boolean {
  if (!tip) return false;
  const lines = since.filter(
    ({ env }) => env.type === 'assistant' && (env.message?.id ?? env.uuid) === tip.response,
  );
  if (lines[0]?.env.uuid !== tip.native.split('#')[0]) return true;
  const content: WireBlock[] = [];
  for (const { env } of lines)
    if (Array.isArray(env.message?.content)) content.push(...(env.message.content as WireBlock[]));
  return resolved.mayHave(messageHash({ role: 'assistant', content }));
}

/** The shapes and blobs no record uses yet: a record after them will name them, and only the file holds them. */
function pendingOf(
  shapes: ReadonlyMap<string, RequestShape>,
  blobs: ReadonlyMap<string, WireMessage>,
  records: readonly RequestRecord[],
  known?: { shapes: HashSet; messages: HashSet },
): Pick<LogState, 'pendingShapes' | 'pendingBlobs'> {
  const used = new Set<string>();
  const named = new Set<string>();
  for (const record of records) {
    used.add(record.shapeHash);
    for (const hash of record.tail) named.add(hash);
  }
  return {
    pendingShapes: [...shapes].filter(([hash]) => !used.has(hash) && !known?.shapes.mayHave(hash)),
    pendingBlobs: [...blobs].filter(([hash]) => !named.has(hash) && !known?.messages.mayHave(hash)),
  };
}

/**
 * Reads the lines after `offset` and, when they only continue the conversation, returns what they change; else
 * why the file must be read whole.
 */
export function continueTranscript(
  file: string,
  fallbackId: string,
  from: { offset: number; state: unknown },
  stored: StoredSession,
): Continued | string {
  const state = from.state as State;
  const refusal = refused(state, format);
  if (refusal) return refusal;
  const grown = new GrownLog(state.log);
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
  let { leaf, leafCommand, order } = state;
  let mergesTip = false;
  /** Responses and tool calls first seen in the new lines (later lines of a new response add to it). */
  const freshResponses = new Set<string>();
  const freshCalls = new Set<string>();
  /** The calls the new lines' tool results answer. */
  const answers = new Set<string>();

  const take = (value: unknown, line: number, stop: (why: string) => never): string | undefined => {
    if (!isEnvelope(value)) return 'not a transcript record (no "type")';
    order++;
    const { type } = value;
    if (!knownTypes.has(type)) unknown.set(type, (unknown.get(type) ?? 0) + 1);
    if (type.startsWith('api-request')) {
      if (!state.log) stop(`line ${line} is the file's first request record`);
      const taken = grown.take(value as RequestLine, line);
      if (typeof taken !== 'object') return taken;
      if (streamId(recordEnvelope(value as RequestLine), fallbackId) !== state.stream)
        stop(`line ${line} is a request record of another conversation`);
      grown.add(taken);
      return undefined;
    }
    if (type === 'summary') stop(`line ${line} is a 'summary' line`);
    if (type === 'progress' && value.data?.type === 'agent_progress')
      stop(`line ${line} is a sub-agent's progress`);
    if (type === 'ai-title' && value.aiTitle) titles.ai = value.aiTitle;
    if (type === 'custom-title' && value.customTitle) titles.custom = value.customTitle;
    if (typeof value.uuid !== 'string') {
      if (conversationTypes.has(type)) stop(`line ${line} is a conversation line without a uuid`);
      return undefined;
    }
    const why = continues(value, line);
    if (why !== undefined) stop(why);
    const entry: Entry = { env: slim(value), line, order: order - 1 };
    entries.push(entry);
    grown.see(entry);
    spawns.push(...spawnsOf(value, value.sessionId ?? fallbackId));
    leaf = value.uuid;
    leafCommand = type === 'user' && invokesCommand(value);
    return undefined;
  };
  const read = readOn(file, warnings, { offset: from.offset, line: state.nextLine }, take);
  if (typeof read === 'string') return read;

  /** Why this line does not simply continue the conversation; undefined when it does. */
  function continues(value: Envelope, line: number): string | undefined {
    if (streamId(value, fallbackId) !== state.stream) return `line ${line} belongs to another conversation`;
    if (value.parentUuid !== leaf) return `line ${line} does not continue the conversation's last line`;
    if (uuids.mayHave(value.uuid as string)) return `line ${line} may repeat the uuid of an earlier line`;
    if (typeof value.timestamp !== 'string' || value.timestamp < state.rival)
      return `line ${line} is earlier than a line that would then end the conversation`;
    if (value.subtype === 'compact_boundary' || value.isCompactSummary) return `line ${line} is a compaction`;
    uuids.add(value.uuid as string);
    const content = Array.isArray(value.message?.content) ? value.message.content : [];
    if (value.type === 'assistant') {
      const id = value.message?.id ?? (value.uuid as string);
      if (id === state.tip?.response) {
        // Adding to a response a record names would change what that record's tail resolves to.
        if (state.log?.tipNamed) return `line ${line} adds to a response its request records may name`;
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

  // What new request records name, resolved from the lines since the record before them.
  const log = grown.resolve(stored);
  if (typeof log === 'string') return log;

  // The messages the new lines change: the response they add to, and those whose open calls they answer; with
  // new request messages, also those the lines since the last record made (their tool results are named there).
  let first = state.count;
  if (mergesTip && state.tip) first = Math.min(first, state.tip.index);
  for (const [id, call] of open) if (answers.has(id)) first = Math.min(first, call.index);
  if (log.fromTranscript && state.log) first = Math.min(first, state.log.sinceIndex);
  const changed = first < state.count ? stored.messages(first) : [];
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
    const index = first + i;
    if (message.role !== 'assistant' || index < (state.tip?.index ?? 0)) return;
    if (index === state.tip?.index) {
      if (mergesTip) tip = { ...state.tip, output: seed.usageSeen.get(state.tip.response) ?? -1 };
    } else {
      const entry = entries.find(({ env }) => env.uuid === message.nativeId);
      const response = entry?.env.message?.id ?? message.nativeId ?? '';
      tip = { response, index, native: message.nativeId ?? '', output: outputOf(entries, response) };
    }
  });

  const next: State = {
    ...state,
    nextLine: read.nextLine,
    order,
    leaf,
    leafCommand,
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
  let requests: GrownRequests | undefined;
  if (state.log) {
    const made = new Map(entries.map((entry) => [entry.env.uuid, entry.line]));
    // An assistant message's nativeId is the uuid of its response's first line (as requestLog in parse.ts).
    const nativeOf = (response: string) =>
      response === state.tip?.response
        ? uuidOf(state.tip.native)
        : entries.find(({ env }) => env.type === 'assistant' && (env.message?.id ?? env.uuid) === response)
            ?.env.uuid;
    const after = grown.finish(log, nativeOf, tip, (at) =>
      sinceIndexOf(
        messages,
        first,
        (message) => {
          if (message.nativeId === undefined) return undefined;
          // A message none of the new lines started is older than all of them.
          const line = made.get(uuidOf(message.nativeId));
          return line === undefined || line < at;
        },
        // The messages before `first` all started before the new lines.
        Math.max(first - 1, 0),
      ),
    );
    next.log = after.state;
    requests = after.requests;
  }
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
    ...(requests ? { requests } : {}),
  };
}

/** What resolving the new records' tails found. */
interface Resolved {
  shapes: RequestLog['shapes'];
  messages: RequestLog['messages'];
  /** Some new message was built from conversation lines (the store then names tool results in it). */
  fromTranscript: boolean;
}

/**
 * The request records, shapes and blobs a continued read meets, bound and resolved as the full read would: a
 * record is answered by the next assistant line, and its tail hashes are blobs or messages built from the lines
 * since the record before it (kept in the state, then the new ones).
 */
class GrownLog {
  private readonly shapes = new Map<string, RequestShape>();
  private readonly blobs = new Map<string, WireMessage>();
  private readonly records: PendingRecord[] = [];
  /** The new record still waiting for its response, or whether the last stored one still is. */
  private pending?: PendingRecord;
  private storedAwaits: boolean;
  /** The response that answered the last stored record. */
  private storedAnswer?: string;
  /** Lines since the last record, and every line a new tail may name (the stored `since`, then all new ones). */
  private since: ConversationLine[];
  private readonly candidates: ConversationLine[];

  /** The hashes the stored log resolved (unpacked once: resolve() asks, finish() adds). */
  private readonly resolved: HashSet;

  constructor(private readonly log: LogState | undefined) {
    this.resolved = new HashSet(log?.resolved);
    for (const [hash, shape] of log?.pendingShapes ?? []) this.shapes.set(hash, shape);
    for (const [hash, blob] of log?.pendingBlobs ?? []) this.blobs.set(hash, blob);
    this.storedAwaits = log?.awaiting ?? false;
    this.since = log ? [...log.since] : [];
    this.candidates = log ? [...log.since] : [];
  }

  take(value: RequestLine, line: number): PendingRecord | string | undefined {
    return takeRequestLine(value, line, { shapes: this.shapes, blobs: this.blobs });
  }

  add(record: PendingRecord): void {
    this.records.push(record);
    this.pending = record;
    this.storedAwaits = false;
    this.since = [];
  }

  /** A conversation line that continues the stream. */
  see(entry: Entry): void {
    const { env } = entry;
    if (env.type === 'assistant') {
      const id = env.message?.id ?? env.uuid;
      if (this.pending) this.pending.responseMessageId = id;
      else if (this.storedAwaits) this.storedAnswer = id;
      this.pending = undefined;
      this.storedAwaits = false;
    }
    const line = sinceLine(entry);
    this.since.push(...line);
    this.candidates.push(...line);
  }

  /** The shapes and messages the new records name that the stored log lacks; a string when a full read must. */
  resolve(stored: StoredSession): Resolved | string {
    const out: Resolved = { shapes: {}, messages: {}, fromTranscript: false };
    if (!this.log) return out;
    const had = (hash: string) => (this.resolved.mayHave(hash) ? stored.requestMessage(hash) : undefined);
    // A full read takes a blob before the transcript for every record, the stored ones too.
    for (const hash of this.blobs.keys())
      if (had(hash) === 'transcript')
        return 'a new request blob is a message the log found in the transcript';
    const wanted = new Set<string>();
    for (const record of this.records) {
      const shape = this.shapes.get(record.shapeHash);
      if (shape) out.shapes[record.shapeHash] = shape;
      for (const hash of record.tail) {
        if (out.messages[hash] || wanted.has(hash) || had(hash) !== undefined) continue;
        const blob = this.blobs.get(hash);
        if (blob) out.messages[hash] = { message: blob, origin: 'blob' };
        else wanted.add(hash);
      }
    }
    if (wanted.size > 0) {
      findInTranscript(this.candidates, wanted, { records: [], shapes: {}, messages: out.messages });
      if (wanted.size > 0)
        return 'a new request record names a message not among the lines since the record before it';
      out.fromTranscript = true;
    }
    return out;
  }

  /**
   * What the store adds (the new records, bound to the responses they produced) and the log's next state.
   * `nativeOf` gives a response's nativeId; `sinceIndex(line)` the first message lines after `line` may be in.
   */
  finish(
    found: Resolved,
    nativeOf: (response: string) => string | undefined,
    tip: State['tip'],
    sinceIndex: (line: number) => number,
  ): { state: LogState; requests?: GrownRequests } {
    const log = this.log as LogState;
    const records: RequestRecord[] = this.records.map(({ responseMessageId, ...record }) => {
      const responseId = responseMessageId !== undefined ? nativeOf(responseMessageId) : undefined;
      return responseId !== undefined ? { ...record, responseId } : record;
    });
    const answer = this.storedAnswer !== undefined ? nativeOf(this.storedAnswer) : undefined;
    const resolved = this.resolved;
    for (const hash of Object.keys(found.messages)) resolved.add(hash);
    const shapes = new HashSet(log.shapes);
    for (const record of records) shapes.add(record.shapeHash);
    const lastLine = records.at(-1)?.line;
    const state: LogState = {
      records: log.records + records.length,
      awaiting: this.pending !== undefined || this.storedAwaits,
      resolved: resolved.pack(),
      shapes: shapes.pack(),
      since: this.since,
      sinceIndex: lastLine !== undefined ? sinceIndex(lastLine) : log.sinceIndex,
      tipNamed: tipNamed(this.since, tip, resolved),
      ...pendingOf(this.shapes, this.blobs, records, { shapes, messages: resolved }),
    };
    const result: { state: LogState; requests?: GrownRequests } = { state };
    if (records.length > 0 || answer !== undefined) {
      result.requests = { from: log.records, records, shapes: found.shapes, messages: found.messages };
      if (answer !== undefined) result.requests.bound = { seq: log.records - 1, responseId: answer };
    }
    return result;
  }
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
