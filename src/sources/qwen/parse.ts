// One Qwen Code session file into one normalized session: records in file order (one linear uuid/parentUuid
// chain, across `--continue` runs), usage from the api_response telemetry, compressions as compactions.
import { sessionId } from '../../model/ids.js';
import type { Message, Part, ToolResult, Usage } from '../../model/session.js';
import { markUnanswered, nameResults } from '../../model/session.js';
import { answeredCalls, openCalls } from '../continued.js';
import { HashSet } from '../hash-set.js';
import type { ParsedSession, Warning } from '../types.js';
import { contentKey, convertParts } from './parts.js';
import { type ApiResponseEvent, apiResponse, compression, partsOf, type QwenRecord } from './records.js';
import type { QwenState } from './resume.js';

/** Gemini CLI's fixed answer to a compression summary (kept by Qwen): harness text, never a model turn. */
export const summaryAcknowledgement = 'Got it. Thanks for the additional context!';

/** Subtypes of `system` records read past without a note: nothing in them is what the model saw. */
const quietSubtypes = new Set(['attribution_snapshot']);

interface SideCall {
  count: number;
  inputTokens: number;
  outputTokens: number;
}

const usageOf = (event: ApiResponseEvent): Usage => {
  const usage: Usage = {};
  if (event.inputTokens !== undefined) usage.inputTokens = event.inputTokens;
  if (event.outputTokens !== undefined) usage.outputTokens = event.outputTokens;
  if (event.cachedTokens !== undefined) usage.cacheReadTokens = event.cachedTokens;
  return usage;
};

const textOf = (message: Message): string =>
  message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

export class QwenChat {
  private readonly messages: Message[] = [];
  /** Every uuid read (a continued chat knows those before it only as hashes: a parent it may miss is not warned). */
  private uuids: { has(id: string): boolean; add(id: string): void } = new Set<string>();
  private uuidHashes: HashSet | undefined;
  /** In a continued chat: the calls of the stored tail that were answered already. */
  private answeredBefore: ReadonlySet<string> = new Set();
  private previous: string | null = null;
  /** api_response events since the last model turn: the last one is the next turn's (or summary's) request. */
  private pending: ApiResponseEvent[] = [];
  private readonly sideCalls = new Map<string, SideCall>();
  private readonly unknownSubtypes = new Map<string, number>();
  private readonly branches: number[] = [];
  private unknownParts = 0;
  private unnamedCalls = 0;
  private rebuiltModelEntries = 0;
  private sourceId: string | undefined;
  private cwd: string | undefined;
  private version: string | undefined;
  private firstTime: string | undefined;
  private lastTime: string | undefined;

  constructor(
    private readonly file: string,
    private readonly fallbackId: string,
    private readonly warnings: Warning[],
  ) {}

  /** Takes one record; returns a reason when the line is skipped. */
  add(record: QwenRecord, line: number): string | undefined {
    this.link(record, line);
    this.sourceId ??= record.sessionId;
    this.cwd ??= record.cwd;
    if (record.version) this.version = record.version;
    if (record.timestamp) {
      this.firstTime ??= record.timestamp;
      this.lastTime = record.timestamp;
    }
    switch (record.type) {
      case 'user':
        return this.user(record, line);
      case 'assistant':
        return this.assistant(record, line);
      case 'tool_result':
        return this.toolResult(record, line);
      default:
        return this.system(record, line);
    }
  }

  /** The chain is linear: a parent that is not in the file is reported, the record kept in file order. */
  private link(record: QwenRecord, line: number): void {
    const parent = record.parentUuid;
    if (parent !== null && !this.uuids.has(parent))
      this.warnings.push({
        file: this.file,
        line,
        message: `parentUuid ${parent} is not in the file; the record is read in file order`,
      });
    else if (parent !== null && parent !== this.previous) this.branches.push(line);
    this.uuids.add(record.uuid);
    this.previous = record.uuid;
  }

  private base(record: QwenRecord, line: number, role: Message['role'], parts: Part[]): Message {
    const message: Message = { role, parts, nativeId: record.uuid, source: { file: this.file, line } };
    if (record.timestamp) message.timestamp = record.timestamp;
    return message;
  }

  private convert(record: QwenRecord) {
    const converted = convertParts(partsOf(record), record.uuid, record.toolCallResult);
    this.unknownParts += converted.unknown;
    this.unnamedCalls += converted.unnamedCalls;
    return converted;
  }

  private user(record: QwenRecord, line: number): string | undefined {
    this.flushSideCalls();
    const { parts, results } = this.convert(record);
    if (parts.length > 0) {
      const message = this.base(record, line, 'user', parts);
      // Only Qwen's provenance says who typed it; without one (older files) the prompt is the user's.
      if (record.provenance !== undefined && record.provenance !== 'real_user') message.injected = true;
      this.messages.push(message);
    }
    if (results.length > 0) this.messages.push(this.base(record, line, 'tool', results));
    if (parts.length === 0 && results.length === 0) return 'user record with no readable part';
    return undefined;
  }

  private assistant(record: QwenRecord, line: number): string | undefined {
    const { parts } = this.convert(record);
    if (parts.length === 0) return 'assistant record with no readable part';
    const message = this.base(record, line, 'assistant', parts);
    if (record.model) message.model = record.model;
    const request = this.pending.pop();
    if (request) message.usage = usageOf(request);
    this.flushSideCalls();
    this.messages.push(message);
    return undefined;
  }

  private toolResult(record: QwenRecord, line: number): string | undefined {
    const { results } = this.convert(record);
    if (results.length === 0) return 'tool_result record without a functionResponse';
    this.messages.push(this.base(record, line, 'tool', results));
    return undefined;
  }

  private system(record: QwenRecord, line: number): string | undefined {
    const subtype = record.subtype as string;
    if (subtype === 'ui_telemetry') {
      const event = apiResponse(record);
      if (!event) return undefined;
      // A sub-agent's request (the memory extractor) is never a turn of this conversation.
      if (event.subagent) this.countSideCall(event.subagent, event);
      else this.pending.push(event);
      return undefined;
    }
    if (subtype === 'chat_compression') return this.compressed(record, line);
    if (!quietSubtypes.has(subtype))
      this.unknownSubtypes.set(subtype, (this.unknownSubtypes.get(subtype) ?? 0) + 1);
    return undefined;
  }

  private countSideCall(kind: string, event: ApiResponseEvent): void {
    const side = this.sideCalls.get(kind) ?? { count: 0, inputTokens: 0, outputTokens: 0 };
    side.count++;
    side.inputTokens += event.inputTokens ?? 0;
    side.outputTokens += event.outputTokens ?? 0;
    this.sideCalls.set(kind, side);
  }

  /** Requests no model turn followed: side calls (a retry's failed attempt counts among them). */
  private flushSideCalls(): void {
    for (const event of this.pending) this.countSideCall('side request', event);
    this.pending = [];
  }

  /**
   * A compression: from here on the model saw `compressedHistory` (the summary, Qwen's acknowledgement, the
   * files it re-embedded, and the recent turns it kept). The summary becomes the compaction message; kept
   * copies of earlier messages are named in `preserved`; harness text written anew becomes injected messages
   * just before it. The request that wrote the summary is the last one since the last turn.
   */
  private compressed(record: QwenRecord, line: number): string | undefined {
    const compacted = compression(record);
    if (!compacted) return 'chat_compression record without "compressedHistory"';
    const summarizer = this.pending.pop();
    if (summarizer) this.countSideCall('compaction summarizer', summarizer);
    this.flushSideCalls();

    const summary = this.base(record, line, 'user', []);
    summary.injected = true;
    summary.compaction = true;
    if (summarizer) summary.usage = usageOf(summarizer);
    const preserved: string[] = [];
    const taken = new Set<Message>();
    const fresh: Message[] = [];
    compacted.history.forEach((entry, index) => {
      const id = `${record.uuid}/${index}`;
      const converted = convertParts(entry.parts, id);
      if (entry.role === 'model') {
        this.keepModelEntry(converted.parts, taken, preserved, { record, line, id, fresh });
        return;
      }
      if (summary.parts.length === 0 && converted.parts.length > 0 && index === 0) {
        summary.parts = converted.parts;
        preserved.push(record.uuid);
        return;
      }
      if (converted.parts.length > 0) {
        const copy = this.earlier('user', converted.parts, taken);
        if (copy?.nativeId) preserved.push(copy.nativeId);
        else {
          const message: Message = { ...this.base(record, line, 'user', converted.parts), nativeId: id };
          message.injected = true;
          fresh.push(message);
          preserved.push(id);
        }
      }
      for (const result of converted.results) this.keepResult(result, record, line, id, fresh, preserved);
    });
    if (summary.parts.length === 0) {
      summary.parts = [{ type: 'text', text: '' }];
      preserved.unshift(record.uuid);
    }
    summary.preserved = preserved;
    this.messages.push(...fresh, summary);
    return undefined;
  }

  /**
   * A kept model turn points at the message it copies. One that was never a turn of the log — Qwen's fixed
   * acknowledgement of the summary, or a turn whose record is gone — is stored as harness-made (injected) text
   * where the compression put it: the model saw it, but it is no turn to replay.
   */
  private keepModelEntry(
    parts: Part[],
    taken: Set<Message>,
    preserved: string[],
    at: { record: QwenRecord; line: number; id: string; fresh: Message[] },
  ): void {
    // Each compression writes its acknowledgement anew: it is no copy of an earlier one.
    const ack = parts.length === 1 && parts[0]?.type === 'text' && parts[0].text === summaryAcknowledgement;
    const copy = ack ? undefined : this.earlier('assistant', parts, taken);
    if (copy?.nativeId) {
      preserved.push(copy.nativeId);
      return;
    }
    if (!ack) this.rebuiltModelEntries++;
    const message: Message = { ...this.base(at.record, at.line, 'assistant', parts), nativeId: at.id };
    message.injected = true;
    at.fresh.push(message);
    preserved.push(at.id);
  }

  private keepResult(
    result: ToolResult,
    record: QwenRecord,
    line: number,
    id: string,
    fresh: Message[],
    preserved: string[],
  ): void {
    const copy = this.messages.findLast(
      (m) => m.role === 'tool' && m.parts.some((p) => p.type === 'tool_result' && p.callId === result.callId),
    );
    if (copy?.nativeId) {
      if (!preserved.includes(copy.nativeId)) preserved.push(copy.nativeId);
      return;
    }
    const message: Message = {
      ...this.base(record, line, 'tool', [result]),
      nativeId: `${id}/${result.callId}`,
    };
    fresh.push(message);
    preserved.push(message.nativeId as string);
  }

  /** The latest earlier message of this role with the same content that no other kept entry took. */
  private earlier(role: 'user' | 'assistant', parts: Part[], taken: Set<Message>): Message | undefined {
    const key = contentKey(role, parts);
    const found = this.messages.findLast(
      (m) => m.role === role && !m.compaction && !taken.has(m) && contentKey(role, m.parts) === key,
    );
    if (found) taken.add(found);
    return found;
  }

  /**
   * A chat continued from `state` (resume.ts): `tail` is the session's stored messages from `state.tail` on, as the
   * last read left them; the records after the last one read are added to it as to the whole file.
   */
  static continuing(
    file: string,
    fallbackId: string,
    warnings: Warning[],
    state: QwenState,
    tail: Message[],
  ) {
    const chat = new QwenChat(file, fallbackId, warnings);
    chat.messages.push(...tail);
    const uuids = new HashSet(state.uuids);
    chat.uuidHashes = uuids;
    chat.uuids = { has: (id) => uuids.mayHave(id), add: (id) => uuids.add(id) };
    chat.previous = state.previous;
    chat.pending = [...state.pending];
    if (state.sourceId !== null) chat.sourceId = state.sourceId;
    if (state.cwd !== null) chat.cwd = state.cwd;
    if (state.version !== null) chat.version = state.version;
    if (state.firstTime !== null) chat.firstTime = state.firstTime;
    if (state.lastTime !== null) chat.lastTime = state.lastTime;
    chat.answeredBefore = answeredCalls(tail);
    return chat;
  }

  /**
   * Builds the session; with `nextLine` (the line after the last one read) also what a later read needs to go on
   * from there. A continued chat gives `before`, the state it started from: its messages are the session's from
   * `before.tail` on.
   */
  finish(
    nextLine?: number,
    before?: QwenState,
  ): { sessions: ParsedSession[]; notes: string[]; state?: QwenState } {
    // Requests not yet followed by their turn: the next read's records may bring it.
    const pending = [...this.pending];
    this.flushSideCalls();
    if (this.messages.length === 0 && this.sourceId === undefined)
      return { sessions: [], notes: this.notes() };
    nameResults(this.messages);
    // A call answered before a continued chat's tail stays answered (markUnanswered sees only the tail).
    markUnanswered(this.messages, this.answeredBefore);
    const own = this.sourceId ?? this.fallbackId;
    const session: ParsedSession = {
      id: sessionId('qwen', own),
      agent: 'qwen',
      sourceId: own,
      kind: 'main',
      messages: this.messages,
      origin: 'file',
    };
    if (this.cwd) session.cwd = this.cwd;
    if (this.version) session.version = this.version;
    if (this.firstTime) session.startedAt = this.firstTime;
    if (this.lastTime) session.endedAt = this.lastTime;
    const prompt = this.messages.find((m) => m.role === 'user' && !m.injected && textOf(m).trim() !== '');
    const title = prompt && textOf(prompt).trim().split('\n')[0]?.slice(0, 80);
    if (before?.title !== undefined) {
      if (before.title !== null) session.title = before.title;
    } else if (title) session.title = title;
    const result: { sessions: ParsedSession[]; notes: string[]; state?: QwenState } = {
      sessions: [session],
      notes: this.notes(),
    };
    if (nextLine !== undefined) result.state = this.stateAt(nextLine, session, pending, before, prompt);
    return result;
  }

  /**
   * What a continued read needs (see resume.ts): the first message new records could change — a turn whose calls
   * are still open since the last user message (one open before it was interrupted) — everything before it being
   * final, and what the chat was in the middle of.
   */
  private stateAt(
    nextLine: number,
    session: ParsedSession,
    pending: ApiResponseEvent[],
    before: QwenState | undefined,
    prompt: Message | undefined,
  ): QwenState {
    const messages = this.messages;
    const base = before?.tail ?? 0;
    const { first: tail, calls, answered } = openCalls(messages, before);
    const uuids = this.uuidHashes ?? HashSet.of(this.uuids as Set<string>);
    const state: QwenState = {
      format: 1,
      nextLine,
      sessionId: session.id,
      count: base + messages.length,
      tail: base + tail,
      previous: this.previous,
      pending,
      sourceId: this.sourceId ?? null,
      cwd: this.cwd ?? null,
      version: this.version ?? null,
      firstTime: this.firstTime ?? null,
      lastTime: this.lastTime ?? null,
      uuids: uuids.pack(),
      calls: calls.pack(),
      answered: answered.pack(),
    };
    // A title taken from a prompt before the tail cannot change; none yet, or one after, may.
    if (before?.title !== undefined) state.title = before.title;
    else if (prompt && messages.indexOf(prompt) < tail) state.title = session.title ?? null;
    if (messages.slice(tail).some((message) => message.compaction))
      state.readWhole = 'a compression comes after a message new records may change';
    return state;
  }

  private notes(): string[] {
    const notes: string[] = [];
    if (this.sideCalls.size > 0) {
      const list = [...this.sideCalls].map(([kind, side]) => `${kind} ×${side.count}`).join(', ');
      const input = [...this.sideCalls.values()].reduce((n, side) => n + side.inputTokens, 0);
      const output = [...this.sideCalls.values()].reduce((n, side) => n + side.outputTokens, 0);
      notes.push(
        `${[...this.sideCalls.values()].reduce((n, s) => n + s.count, 0)} side request(s) are not turns (${list}): ${input} input and ${output} output tokens`,
      );
    }
    for (const [subtype, count] of this.unknownSubtypes)
      notes.push(`${count} system record(s) of unknown subtype "${subtype}" read past`);
    if (this.unknownParts > 0) notes.push(`${this.unknownParts} message part(s) of unknown shape left out`);
    if (this.unnamedCalls > 0)
      notes.push(`${this.unnamedCalls} function call(s) without an id, named after their record`);
    if (this.rebuiltModelEntries > 0)
      notes.push(
        `${this.rebuiltModelEntries} model turn(s) of a compressed history match no turn of the log: kept in later contexts as harness text`,
      );
    if (this.branches.length > 0)
      notes.push(
        `${this.branches.length} record(s) whose parent is not the record before (lines ${this.branches.slice(0, 5).join(', ')}): read in file order`,
      );
    return notes;
  }
}
