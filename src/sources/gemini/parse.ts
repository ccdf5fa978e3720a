import { createHash } from 'node:crypto';
import { sessionId } from '../../model/ids.js';
import { type Message, markUnanswered, nameResults, type Part } from '../../model/session.js';
import { HashSet } from '../hash-set.js';
import type { ParsedSession, Spawn, Warning } from '../types.js';
import { buildMessages, type Entry, type Held } from './build.js';
import {
  callOf,
  contentParts,
  type GeminiRecord,
  isObject,
  type Json,
  messageTypes,
  noticeTypes,
  sessionContextOpening,
  snapshotOpening,
} from './records.js';
import type { GeminiState } from './resume.js';

const agent = 'gemini';

export interface GeminiParseResult {
  sessions: ParsedSession[];
  spawns: Spawn[];
  notes: string[];
  /** What a later read needs to continue the file from `nextLine` (finish was given one). */
  state?: GeminiState;
}

/** Where the file is, as the caller found it: what the session's metadata does not say. */
export interface FileContext {
  file: string;
  /** The id to use when no metadata names one (the file's name). */
  fallbackId: string;
  /** A sub-agent's file lives in `chats/<parent session id>/`. */
  parentSessionId?: string;
  cwd?: string;
}

const textOf = (parts: readonly Part[]): string =>
  parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * Collects the records of one session log — an upsert list of messages keyed by id, rewritten whole by
 * `$set.messages` on resume and compression, truncated by `$rewindTo` — then builds its session.
 */
export class GeminiConversation {
  /** Records dropped with a warning. */
  skipped = 0;
  private readonly meta: Json = {};
  private metaSeen = false;
  private startTime: string | undefined;
  private readonly entries: Entry[] = [];
  private readonly held = new Map<string, Held>();
  /** A compression's copies of kept messages (new ids) → the messages they copy. */
  private readonly aliases = new Map<string, string>();
  /** The session context the model is sent now (a resume regenerates it: date, folder tree). */
  private contextText: string | undefined;
  private notices = 0;
  private readonly unknownTypes = new Map<string, number>();
  private unmatchedTail = 0;
  private droppedByRewrite = 0;
  private appendedByRewrite = 0;
  private lastTime: string | undefined;
  /** In a continued read (resume.ts): the state it started from, and the ids of the messages before its tail. */
  private from: GeminiState | undefined;
  private knownBefore: HashSet | undefined;
  /** Why the records read so far cannot simply continue the last read (a full read must be made instead). */
  stop: string | undefined;

  constructor(
    private readonly context: FileContext,
    private readonly warnings: Warning[],
  ) {}

  /**
   * A conversation continued from `state`: its tail (the last model message and what followed it) is rebuilt from
   * the records the state kept, raw, and the records after the last line read are added to it.
   */
  static continuing(context: FileContext, warnings: Warning[], state: GeminiState): GeminiConversation {
    const conversation = new GeminiConversation(context, warnings);
    conversation.from = state;
    conversation.knownBefore = new HashSet(state.known);
    Object.assign(conversation.meta, state.meta);
    conversation.metaSeen = state.metaSeen;
    if (state.startTime !== null) conversation.startTime = state.startTime;
    if (state.lastTime !== null) conversation.lastTime = state.lastTime;
    for (const held of state.tailHeld) {
      conversation.held.set(held.id, held);
      conversation.entries.push({ kind: 'message', held });
    }
    return conversation;
  }

  private warn(line: number, message: string, skip = true): void {
    this.warnings.push({ file: this.context.file, line, message });
    if (skip) this.skipped++;
  }

  add(record: GeminiRecord, line: number): void {
    if (this.from) {
      // What a continued read cannot do on its own: a full read of the file follows.
      if (record.kind === 'set' && Array.isArray(record.value.messages))
        this.stop = `line ${line} rewrites the history`;
      else if (record.kind === 'rewind') this.stop = `line ${line} rewinds the history`;
      else if (record.kind === 'message' && !this.held.has(record.id) && this.knownBefore?.mayHave(record.id))
        this.stop = `line ${line} may write again a message before the last model turn`;
      if (this.stop) return;
    }
    switch (record.kind) {
      case 'metadata':
        // A resume writes a fresh header: it merges over the first; the session started at the first one.
        if (!this.startTime && typeof record.value.startTime === 'string')
          this.startTime = record.value.startTime;
        Object.assign(this.meta, record.value);
        this.metaSeen = true;
        return;
      case 'set': {
        if (!this.metaSeen) this.warn(line, '"$set" before any metadata record; applied anyway', false);
        const { messages, ...rest } = record.value;
        Object.assign(this.meta, rest);
        if (Array.isArray(messages)) this.rewrite(messages, line);
        return;
      }
      case 'rewind':
        this.rewind(record.id, line);
        return;
      case 'message':
        this.message(record.value, record.id, record.type, line);
    }
  }

  private message(value: Json, id: string, type: string, line: number): void {
    if (!messageTypes.has(type)) {
      this.unknownTypes.set(type, (this.unknownTypes.get(type) ?? 0) + 1);
      this.skipped++;
      return;
    }
    if (typeof value.timestamp === 'string' && (!this.lastTime || value.timestamp > this.lastTime))
      this.lastTime = value.timestamp;
    if (!('content' in value) && !Array.isArray(value.toolCalls)) {
      this.warn(line, `${type} message ${id} has no content; skipped`);
      return;
    }
    const known = this.held.get(id);
    // An upsert: the first position stands, the last content wins (a model message is written again with its
    // tool calls once they finished).
    if (known) {
      known.value = value;
      known.endLine = line;
      return;
    }
    if (noticeTypes.has(type)) this.notices++;
    const held = { id, value, line, endLine: line };
    this.held.set(id, held);
    this.entries.push({ kind: 'message', held });
  }

  /** Is this id a message of the history (or a compression's copy of one)? */
  private known(id: string): boolean {
    return this.held.has(id) || this.aliases.has(id);
  }

  /** `$rewindTo`: that message and everything after it are gone. */
  private rewind(id: string, line: number): void {
    const target = this.aliases.get(id) ?? id;
    const at = this.entries.findIndex(
      (entry) =>
        (entry.kind === 'message' && entry.held.id === target) ||
        (entry.kind === 'compaction' && (entry.summary.id === target || entry.ack?.id === target)),
    );
    if (at === -1) {
      this.warn(line, `"$rewindTo" names message ${id}, which is not in the session; nothing removed`);
      return;
    }
    for (const entry of this.entries.splice(at)) {
      if (entry.kind === 'message') this.held.delete(entry.held.id);
      else if (entry.kind === 'compaction') {
        this.held.delete(entry.summary.id);
        if (entry.ack) this.held.delete(entry.ack.id);
      }
    }
  }

  /**
   * `$set.messages` replaces the whole history: at start (the session context alone), on each resume (the same
   * messages again, converted to parts, their tokens and model dropped: what was first written stands) and on
   * each compression (the context, a `<state_snapshot>`, the CLI's acknowledgement and the kept tail, anew).
   */
  private rewrite(list: unknown[], line: number): void {
    const items = list.filter(isObject).filter((item) => typeof item.id === 'string');
    const refreshed = this.refreshContext(items, line);
    const snapshot = items.findIndex(
      (item, index) =>
        index > 0 &&
        item.type === 'user' &&
        !this.known(String(item.id)) &&
        textOf(contentParts(item.content, String(item.id))).startsWith(snapshotOpening),
    );
    if (snapshot !== -1) {
      this.compaction(items, snapshot, line);
      return;
    }
    if (refreshed)
      refreshed.listed = items.slice(1).map((item) => this.aliases.get(String(item.id)) ?? String(item.id));
    const listed = new Set(items.map((item) => this.aliases.get(String(item.id)) ?? String(item.id)));
    // Only what followed the last compression can still be in the history.
    const since = this.entries.findLastIndex((entry) => entry.kind === 'compaction') + 1;
    // A fresh start writes the session context alone before a resume rewrites the history: not a loss.
    if (items.length > 1)
      for (const entry of this.entries.slice(since))
        if (
          entry.kind === 'message' &&
          !listed.has(entry.held.id) &&
          !noticeTypes.has(String(entry.held.value.type))
        )
          this.droppedByRewrite++;
    // The first rewrite of a log (the session context, or a legacy file's history) is its history.
    const fresh = this.entries.length === 0;
    for (const item of items) {
      const id = String(item.id);
      // Resume's copies of the results, beside the original result messages: the store keeps one.
      if (this.known(id) || (id.endsWith('_response') && this.known(id.slice(0, -'_response'.length))))
        continue;
      if (!fresh) this.appendedByRewrite++;
      this.message(item, id, String(item.type ?? ''), line);
    }
  }

  /**
   * A rewrite's first message is the session context, under the id it always has, but written anew: when its
   * text changed, the model is sent the new one from here on (kept as the last content would lose the one the
   * earlier turns saw).
   */
  private refreshContext(items: Json[], line: number): { listed?: string[] } | undefined {
    const first = items[0];
    if (!first || items.length < 2 || first.type !== 'user') return undefined;
    const id = String(first.id);
    const known = this.held.get(id);
    if (!known) return undefined;
    const text = textOf(contentParts(first.content, id));
    this.contextText ??= textOf(contentParts(known.value.content, id));
    if (!text.startsWith(sessionContextOpening) || text === this.contextText) return undefined;
    this.contextText = text;
    const entry: Entry & { kind: 'context' } = {
      kind: 'context',
      held: { id, value: first, line, endLine: line },
    };
    this.entries.push(entry);
    return entry;
  }

  private compaction(items: Json[], snapshot: number, line: number): void {
    const heldOf = (item: Json): Held => ({ id: String(item.id), value: item, line, endLine: line });
    const summary = heldOf(items[snapshot] as Json);
    const next = items[snapshot + 1];
    const ack = next && next.type === 'gemini' && !this.known(String(next.id)) ? heldOf(next) : undefined;
    const before = items
      .slice(0, snapshot)
      .map((item) => this.aliases.get(String(item.id)) ?? String(item.id))
      .filter((id) => this.held.has(id));
    const kept: string[] = [];
    const taken = new Set<string>();
    // The held messages by content key, the latest first: built once per compaction, and only if a kept item
    // has a new id (hashing every held message again for each kept item made a long session quadratic).
    type Candidate = typeof this.held extends Map<string, infer V> ? V : never;
    let byKey: Map<string, Candidate[]> | undefined;
    const candidates = (key: string): Candidate[] => {
      if (!byKey) {
        byKey = new Map();
        for (const candidate of [...this.held.values()].reverse()) {
          const key = contentKey(candidate.value);
          const list = byKey.get(key);
          if (list) list.push(candidate);
          else byKey.set(key, [candidate]);
        }
      }
      return byKey.get(key) ?? [];
    };
    // The kept tail gets new ids: each item points at the earlier message it copies, the latest one first.
    for (const item of items.slice(snapshot + (ack ? 2 : 1))) {
      const id = String(item.id);
      if (this.known(id)) {
        kept.push(this.aliases.get(id) ?? id);
        continue;
      }
      const match = candidates(contentKey(item)).find((candidate) => !taken.has(candidate.id));
      if (match) {
        taken.add(match.id);
        this.aliases.set(id, match.id);
        kept.push(match.id);
      } else if (item.type === 'user') {
        // Context the CLI wrote anew: a message of its own, just before the summary.
        this.message(item, id, 'user', line);
        kept.push(id);
      } else this.unmatchedTail++;
    }
    this.held.set(summary.id, summary);
    if (ack) this.held.set(ack.id, ack);
    this.entries.push({ kind: 'compaction', line, before, summary, kept, ...(ack ? { ack } : {}) });
  }

  private get ownId(): string {
    return typeof this.meta.sessionId === 'string' ? this.meta.sessionId : this.context.fallbackId;
  }

  /** Builds the session; with `nextLine` (the line after the last one read) also what a later read needs. */
  finish(nextLine?: number): GeminiParseResult {
    const sourceId = this.ownId;
    // A continued read builds its tail only: a result answered before it is left out, as a full read leaves it out
    // (one that only may have been is the full read's to decide).
    const before = this.from ? new HashSet(this.from.answered) : undefined;
    const answeredBefore = before && {
      has: (callId: string) => {
        if (!before.mayHave(callId)) return false;
        this.stop ??= `a tool result may answer the call ${callId} again`;
        return true;
      },
    };
    const { messages, spawns, starts } = buildMessages(
      this.entries,
      this.context.file,
      sourceId,
      answeredBefore,
    );
    nameResults(messages);
    markUnanswered(messages);
    const conversation =
      (this.from?.conversation ?? false) ||
      messages.some((message) => message.role === 'assistant' || message.attachment === undefined);
    const result: GeminiParseResult = {
      sessions: conversation ? [this.session(sourceId, messages)] : [],
      spawns,
      notes: this.notes(conversation),
    };
    const session = result.sessions[0];
    if (nextLine !== undefined && session) result.state = this.stateAt(nextLine, messages, starts, session);
    return result;
  }

  /**
   * What a continued read needs (see resume.ts): the last model message can still be written again (with its tool
   * calls once they finished), so the tail starts there; everything before it is final. Indices are the session's.
   */
  private stateAt(
    nextLine: number,
    messages: Message[],
    starts: number[],
    session: ParsedSession,
  ): GeminiState {
    const from = this.from;
    const entries = this.entries;
    let tailEntry = entries.findLastIndex(
      (entry) => entry.kind === 'message' && entry.held.value.type === 'gemini',
    );
    if (tailEntry === -1) tailEntry = entries.length;
    const tail = tailEntry < entries.length ? (starts[tailEntry] as number) : messages.length;
    const known = new HashSet(from?.known);
    for (const id of this.held.keys()) known.add(id);
    for (const id of this.aliases.keys()) known.add(id);
    const answered = new HashSet(from?.answered);
    const calls = new HashSet(from?.calls);
    for (const message of messages.slice(0, tail))
      for (const part of message.parts) {
        if (part.type === 'tool_result') answered.add(part.callId);
        if (part.type === 'tool_call') calls.add(part.id);
      }
    const { messages: _messages, ...meta } = this.meta;
    const before = messages.slice(0, tail);
    const state: GeminiState = {
      format: 1,
      nextLine,
      sessionId: session.id,
      count: (from?.tail ?? 0) + messages.length,
      tail: (from?.tail ?? 0) + tail,
      tailHeld: entries.slice(tailEntry).flatMap((entry) => (entry.kind === 'message' ? [entry.held] : [])),
      meta,
      metaSeen: this.metaSeen,
      startTime: this.startTime ?? null,
      lastTime: this.lastTime ?? null,
      conversation:
        (from?.conversation ?? false) ||
        before.some((message) => message.role === 'assistant' || message.attachment === undefined),
      known: known.pack(),
      answered: answered.pack(),
      calls: calls.pack(),
    };
    const prompt = from?.prompt ?? firstPrompt(before);
    if (prompt !== undefined) state.prompt = prompt;
    if (entries.slice(tailEntry).some((entry) => entry.kind !== 'message'))
      state.readWhole = 'a compression or resume comes after its last model message';
    return state;
  }

  private session(sourceId: string, messages: Message[]): ParsedSession {
    const sub = this.meta.kind === 'subagent' || this.context.parentSessionId !== undefined;
    const session: ParsedSession = {
      id: sessionId(agent, sourceId),
      agent,
      sourceId,
      kind: sub ? 'subagent' : 'main',
      messages,
      origin: 'file',
    };
    if (sub && this.context.parentSessionId)
      session.parentId = sessionId(agent, this.context.parentSessionId);
    const directories = Array.isArray(this.meta.directories) ? this.meta.directories : [];
    const cwd = this.context.cwd ?? (typeof directories[0] === 'string' ? directories[0] : undefined);
    if (cwd) session.cwd = cwd;
    if (this.startTime) session.startedAt = this.startTime;
    const ended = typeof this.meta.lastUpdated === 'string' ? this.meta.lastUpdated : this.lastTime;
    if (ended) session.endedAt = ended;
    const title = titleOf(this.meta.summary) ?? this.from?.prompt ?? firstPrompt(messages);
    if (title) session.title = title;
    return session;
  }

  private notes(conversation: boolean): string[] {
    const notes: string[] = [];
    if (!conversation)
      notes.push('no conversation in the file (only its metadata and session context: a resume left it)');
    if (this.notices > 0)
      notes.push(`${this.notices} info/error/warning notice(s) of the CLI's UI, not model context`);
    for (const [type, count] of this.unknownTypes)
      notes.push(`${count} message(s) of unknown type '${type}' not read`);
    if (this.unmatchedTail > 0)
      notes.push(
        `${this.unmatchedTail} model message(s) kept by a compression match no earlier message; later contexts leave them out`,
      );
    if (this.droppedByRewrite > 0)
      notes.push(
        `a history rewrite without a state snapshot left out ${this.droppedByRewrite} message(s); later contexts still show them`,
      );
    if (this.appendedByRewrite > 0)
      notes.push(
        `${this.appendedByRewrite} message(s) first seen in a history rewrite, read where the rewrite is`,
      );
    return notes;
  }
}

/** What a kept-tail copy shares with the message it copies: role, texts, call names and arguments, results. */
function contentKey(value: Json): string {
  const id = String(value.id);
  const parts = contentParts(value.content, id).filter((part) => part.type !== 'reasoning');
  if (Array.isArray(value.toolCalls))
    value.toolCalls.forEach((raw, index) => {
      if (isObject(raw)) parts.push(callOf(raw, id, index).call);
    });
  const comparable = parts.map((part) =>
    part.type === 'tool_call'
      ? { call: part.name, input: part.input }
      : part.type === 'tool_result'
        ? { result: part.name, output: part.output }
        : part,
  );
  return createHash('sha1')
    .update(String(value.type))
    .update('\0')
    .update(JSON.stringify(comparable))
    .digest('base64');
}

/** `$set.summary` (written by `--list-sessions`; a sub-agent's is its result, often JSON `{response}`). */
function titleOf(summary: unknown): string | undefined {
  if (typeof summary !== 'string' || summary.trim() === '') return undefined;
  try {
    const parsed = JSON.parse(summary) as unknown;
    if (isObject(parsed) && typeof parsed.response === 'string') return firstLine(parsed.response);
  } catch {
    // Plain text, as --list-sessions writes it.
  }
  return firstLine(summary);
}

function firstPrompt(messages: readonly Message[]): string | undefined {
  const prompt = messages.find((m) => m.role === 'user' && !m.injected && textOf(m.parts).trim() !== '');
  return prompt ? firstLine(textOf(prompt.parts)) : undefined;
}

const firstLine = (text: string): string => (text.trim().split('\n')[0] ?? '').slice(0, 80);
