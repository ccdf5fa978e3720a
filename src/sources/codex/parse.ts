import { createHash } from 'node:crypto';
import { sessionId } from '../../model/ids.js';
import {
  type Message,
  markUnanswered,
  nameResults,
  outputText,
  type Part,
  type SessionKind,
  type ToolResult,
} from '../../model/session.js';
import { answeredCalls, openCalls } from '../continued.js';
import { HashSet } from '../hash-set.js';
import { recordPartsJson } from '../parts-json.js';
import type { ParsedSession, Spawn, Warning } from '../types.js';
import {
  argumentsOf,
  callOf,
  contentParts,
  hiddenItemTypes,
  instructionsOf,
  isInjectedText,
  isObject,
  outputItemTypes,
  outputOf,
  type Payload,
  quietRecordTypes,
  type RolloutRecord,
  reasoningPart,
  type SessionMeta,
  serverSearchOutput,
  subagentOf,
  summaryItemTypes,
  type TokenUsage,
  usageOf,
} from './records.js';
import type { CodexState } from './resume.js';

const agent = 'codex';

/** Older local compaction kept about 20k tokens of earlier prompts; Codex counts 4 characters a token. */
const legacyPromptBudget = 80_000;

/** Lines listed in a note before the rest are only counted. */
const listedLines = 5;

type Source = { file: string; line: number; endLine?: number };

/** One response item as the normalized model sees it. */
type Converted =
  | { kind: 'model'; parts: Part[] }
  | { kind: 'input'; role: 'user' | 'system'; parts: Part[]; injected: boolean }
  | { kind: 'output'; result: ToolResult }
  | { kind: 'summary'; part: Part }
  | { kind: 'hidden' }
  | { kind: 'unknown'; type: string };

/** Pure conversion, shared by live items and a compaction's replacement history so that copies compare equal. */
function convert(item: Payload, fallbackId: string): Converted {
  const type = typeof item.type === 'string' ? item.type : '';
  if (type === 'message') {
    const parts = contentParts(item.content);
    if (item.role === 'assistant') {
      const phase = item.phase;
      if (typeof phase === 'string') for (const part of parts) if (part.type === 'text') part.phase = phase;
      return { kind: 'model', parts };
    }
    if (item.role === 'developer' || item.role === 'system')
      return { kind: 'input', role: 'system', parts, injected: true };
    const first = parts.find((part) => part.type === 'text');
    return {
      kind: 'input',
      role: 'user',
      parts,
      injected: first !== undefined && isInjectedText(first.text),
    };
  }
  // Another agent's message delivered as input: not typed by a person.
  if (type === 'agent_message')
    return { kind: 'input', role: 'user', parts: contentParts(item.content), injected: true };
  if (type === 'reasoning') return { kind: 'model', parts: [reasoningPart(item)] };
  const call = callOf(item, fallbackId);
  if (call) {
    const parts: Part[] = [call];
    // Server-side tools have no output item: their result is part of the same response.
    if (type === 'web_search_call')
      parts.push({ type: 'tool_result', callId: call.id, output: serverSearchOutput, isError: false });
    if (type === 'image_generation_call' && typeof item.result === 'string')
      parts.push({
        type: 'tool_result',
        callId: call.id,
        output: [{ type: 'image', mediaType: 'image/png', data: item.result }],
        isError: false,
      });
    return { kind: 'model', parts };
  }
  if (outputItemTypes.has(type)) {
    const { output, isError } =
      type === 'tool_search_output'
        ? { output: JSON.stringify(item.tools ?? []), isError: false }
        : outputOf(item.output);
    return {
      kind: 'output',
      result: { type: 'tool_result', callId: String(item.call_id ?? ''), output, isError },
    };
  }
  if (summaryItemTypes.has(type)) {
    const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : '';
    return { kind: 'summary', part: { type: 'reasoning', text: '', redacted: true, signature: encrypted } };
  }
  if (hiddenItemTypes.has(type)) return { kind: 'hidden' };
  return { kind: 'unknown', type };
}

/**
 * Responses input items (what Codex sends its model; a driver's proxy sees them) as normalized messages:
 * consecutive model items one assistant turn, each output a tool message, each input message its own. What the
 * model cannot see (hidden items) is left out; an unknown item type is named in `unknown`. Each message's
 * source is `file` and the position of its first item.
 */
export function messagesOfItems(
  items: readonly Payload[],
  file: string,
): { messages: Message[]; unknown: string[] } {
  const messages: Message[] = [];
  const unknown: string[] = [];
  let turn: Message | undefined;
  for (const [index, item] of items.entries()) {
    const converted = convert(item, `item-${index}`);
    const source = { file, line: index + 1 };
    // What the model does not see splits no turn.
    if (converted.kind !== 'model' && converted.kind !== 'hidden' && converted.kind !== 'unknown')
      turn = undefined;
    switch (converted.kind) {
      case 'model':
        if (!turn) {
          turn = { role: 'assistant', parts: [], source };
          messages.push(turn);
        }
        turn.parts.push(...converted.parts);
        break;
      case 'input':
        messages.push({
          role: converted.role,
          parts: converted.parts,
          source,
          ...(converted.injected ? { injected: true } : {}),
        });
        break;
      case 'output':
        messages.push({ role: 'tool', parts: [converted.result], source });
        break;
      case 'summary':
        messages.push({ role: 'user', parts: [converted.part], source, injected: true, compaction: true });
        break;
      case 'unknown':
        unknown.push(converted.type);
        break;
      default:
        break;
    }
  }
  return { messages, unknown };
}

/**
 * What makes two messages the same for a replacement history: role and parts (an assistant's minus reasoning). A
 * digest, so that keys kept for a whole session stay small.
 */
function contentKey(message: Message): string {
  const parts =
    message.role === 'assistant' ? message.parts.filter((p) => p.type !== 'reasoning') : message.parts;
  return createHash('sha1').update(message.role).update('\0').update(JSON.stringify(parts)).digest('base64');
}

/** The title a prompt gives its session: its first line, cut at 80 characters. */
function promptTitle(prompt: Message): string | undefined {
  return textOf(prompt).trim().split('\n')[0]?.slice(0, 80);
}

function textOf(message: Message): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * What Codex asks the model for a compaction (its `templates/compact/prompt.md`, Apache-2.0), sent as the last
 * user item of the request; the rollout does not record it. As 0.169.0's requests carry it.
 */
export const compactionPrompt =
  'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping the next LLM seamlessly continue the work.\n';

/**
 * Where a 0.169 fork's history starts: `history_base {thread_id, end_ordinal_exclusive}` names the parent
 * thread and how many lines of its rollout the fork inherits (the fork's file copies none of them).
 */
function historyBase(meta: SessionMeta): { thread: string; line: number } | undefined {
  const base = meta.history_base;
  if (!isObject(base)) return undefined;
  const { thread_id, end_ordinal_exclusive } = base as {
    thread_id?: unknown;
    end_ordinal_exclusive?: unknown;
  };
  if (typeof thread_id !== 'string' || typeof end_ordinal_exclusive !== 'number') return undefined;
  // Ordinals count lines from 0, so lines 1..end are the parent's part.
  return { thread: thread_id, line: end_ordinal_exclusive };
}

/**
 * Native ids chain each message to all before it, from the id of the session whose history the file starts
 * with: a fork or sub-agent that copied its parent's history gives the copy the parent's ids, so the store keeps
 * it once, while two unrelated sessions that open with the same instructions never share an id.
 */
function assignIds(messages: Message[], seed: string): void {
  let previous = seed;
  for (const message of messages) {
    previous = createHash('sha256')
      .update(previous)
      .update('\0')
      .update(message.role)
      .update('\0')
      // Its parts are final here (finish names results and marks unanswered calls first): the store reuses this JSON.
      .update(recordPartsJson(message.parts))
      .digest('hex')
      .slice(0, 24);
    message.nativeId = previous;
  }
}

export interface CodexParseResult {
  sessions: ParsedSession[];
  spawns: Spawn[];
  /** Things worth telling the user that are not errors (unknown record types, raw arguments). */
  notes: string[];
  /** What a later read needs to continue the file from `nextLine` (finish was given one). */
  state?: CodexState;
}

/** Collects the lines of one rollout file in order, then builds its session. */
export class CodexRollout {
  /** Lines dropped with a warning (a record without the fields it needs). */
  skipped = 0;
  private meta: SessionMeta | undefined;
  private instructions: Message | undefined;
  /** The session whose history this file starts with, when that is a copy of another one's (fork, sub-agent). */
  private historyOf: string | undefined;
  /** A second session_meta was seen: what follows starts with another session's copied history. */
  private copied = false;
  /** A fork that points at its parent's rollout instead of copying it (0.169 `history_base`): which, how far. */
  private forkOf: { thread: string; line: number } | undefined;
  private readonly messages: Message[] = [];
  /** The model turn being written: consecutive model items until the next input. */
  private turn: Message | undefined;
  private lastTurn: Message | undefined;
  private model: string | undefined;
  private cwd: string | undefined;
  private lastTokenCount: string | undefined;
  /** User items mirrored by an `event_msg user_message`: what a person typed. */
  private readonly prompts = new Set<Message>();
  private promptCandidate: Message | undefined;
  private promptPending = false;
  private promptEvents = false;
  /** Compaction summary → the messages the model still saw after it (resolved to ids at the end). */
  private readonly kept = new Map<Message, Message[]>();
  /** Content keys of closed messages, computed once for all the compactions of a session. */
  private readonly keys = new Map<Message, string>();
  private readonly spawns = new Map<string, Spawn>();
  private readonly callNames = new Map<string, string>();
  private readonly unknownRecords = new Map<string, number>();
  private readonly unknownItems = new Map<string, number>();
  private readonly rawArguments: number[] = [];
  /** Answers to compaction requests, each the response of a compaction session (`compactionAnswer`). */
  private readonly compactionAnswers: Message[] = [];
  private readonly rebuiltCompactions: number[] = [];
  private unkeptAssistantItems = 0;
  private rollbacks = 0;
  /** In a continued rollout: the calls of the stored tail that were answered already. */
  private answeredBefore: ReadonlySet<string> = new Set();
  private searches = 0;
  private firstTime: string | undefined;
  private lastTime: string | undefined;

  constructor(
    private readonly file: string,
    private readonly fallbackId: string,
    private readonly warnings: Warning[],
  ) {}

  private get ownId(): string {
    return this.meta?.id ?? this.fallbackId;
  }

  add(record: RolloutRecord, line: number): void {
    const { payload, timestamp } = record;
    if (timestamp) {
      if (!this.firstTime || timestamp < this.firstTime) this.firstTime = timestamp;
      if (!this.lastTime || timestamp > this.lastTime) this.lastTime = timestamp;
    }
    switch (record.type) {
      case 'session_meta':
        this.sessionMeta(payload as SessionMeta, line);
        return;
      case 'turn_context':
        if (typeof payload.model === 'string') this.model = payload.model;
        if (!this.cwd && typeof payload.cwd === 'string') this.cwd = payload.cwd;
        return;
      case 'response_item':
        if (record.compactionOutput) this.compactionAnswer(payload, line, timestamp);
        else this.item(payload, line, timestamp);
        return;
      case 'event_msg':
        this.event(payload);
        return;
      case 'compacted':
        this.compacted(payload, line, timestamp);
        return;
      default:
        if (quietRecordTypes.has(record.type)) return;
        this.unknownRecords.set(record.type, (this.unknownRecords.get(record.type) ?? 0) + 1);
    }
  }

  /**
   * The answer to a compaction request (0.169 marks it `compaction_output`): not a turn of the conversation —
   * the model was asked for a summary, with no tools and Codex's compaction prompt last — but a compaction
   * session of its own, which continues this one up to the line before it.
   */
  private compactionAnswer(item: Payload, line: number, timestamp: string | undefined): void {
    this.turn = undefined;
    const converted = convert(item, `line-${line}`);
    if (converted.kind !== 'model') {
      this.unknownItem(String(item.type));
      return;
    }
    const answer: Message = { role: 'assistant', parts: converted.parts, source: { file: this.file, line } };
    if (this.model) answer.model = this.model;
    if (timestamp) answer.timestamp = timestamp;
    this.compactionAnswers.push(answer);
    // The token count that follows is this request's.
    this.lastTurn = answer;
  }

  /** A response item of a type this adapter does not read: counted for the file's note. */
  private unknownItem(type: string): void {
    this.unknownItems.set(type, (this.unknownItems.get(type) ?? 0) + 1);
  }

  private warn(line: number, message: string, skip = true): void {
    this.warnings.push({ file: this.file, line, message });
    if (skip) this.skipped++;
  }

  private sessionMeta(meta: SessionMeta, line: number): void {
    if (!this.meta) {
      this.meta = meta;
      if (typeof meta.id !== 'string')
        this.warn(line, 'session_meta has no id; the session is named after the file', false);
      this.forkOf = historyBase(meta);
      const text = instructionsOf(meta);
      // A fork's model saw its parent's history first, the instructions included: they are the parent's.
      if (text !== undefined && !this.forkOf) {
        // The system prompt goes with every request: it is the first thing every turn saw.
        this.instructions = {
          role: 'system',
          parts: [{ type: 'text', text }],
          injected: true,
          source: { file: this.file, line },
        };
        if (meta.timestamp) this.instructions.timestamp = meta.timestamp;
        this.messages.push(this.instructions);
      }
      return;
    }
    // Only the first session_meta is this session's; a later one opens a copy of another session's history.
    if (typeof meta.id === 'string' && meta.id !== this.meta.id) {
      this.copied = true;
      if (this.messages.every((message) => message === this.instructions)) this.historyOf = meta.id;
    }
  }

  private item(item: Payload, line: number, timestamp: string | undefined): void {
    const type = typeof item.type === 'string' ? item.type : '';
    if (type === 'message' && (typeof item.role !== 'string' || !('content' in item))) {
      this.warn(line, 'message without a role or content; skipped');
      return;
    }
    if (outputItemTypes.has(type) && typeof item.call_id !== 'string') {
      this.warn(line, `${type} without a call_id; skipped (it cannot be paired with its call)`);
      return;
    }
    if ((type === 'function_call' || type === 'custom_tool_call') && typeof item.call_id !== 'string')
      this.warn(line, `${type} without a call_id; kept, but no output can answer it`, false);
    if (type === 'function_call' && argumentsOf(item.arguments).raw) this.rawArguments.push(line);

    const fallbackId = type === 'web_search_call' ? `web_search_${++this.searches}` : `line-${line}`;
    const converted = convert(item, fallbackId);
    const source: Source = { file: this.file, line };
    switch (converted.kind) {
      case 'model':
        this.promptCandidate = undefined;
        this.promptPending = false;
        for (const part of converted.parts)
          if (part.type === 'tool_call') this.callNames.set(part.id, part.name);
        if (!this.turn) {
          this.turn = { role: 'assistant', parts: [], source };
          if (this.model) this.turn.model = this.model;
          if (timestamp) this.turn.timestamp = timestamp;
          this.messages.push(this.turn);
          this.lastTurn = this.turn;
        } else (this.turn.source as Source).endLine = line;
        this.turn.parts.push(...converted.parts);
        return;
      case 'input': {
        this.turn = undefined;
        const message: Message = { role: converted.role, parts: converted.parts, source };
        if (converted.injected) message.injected = true;
        if (timestamp) message.timestamp = timestamp;
        this.messages.push(message);
        this.notePrompt(converted.role === 'user' ? message : undefined, converted.injected);
        return;
      }
      case 'output': {
        this.turn = undefined;
        this.promptCandidate = undefined;
        const message: Message = { role: 'tool', parts: [converted.result], source };
        if (timestamp) message.timestamp = timestamp;
        this.messages.push(message);
        this.noteSpawnOutput(converted.result);
        return;
      }
      case 'summary':
      case 'unknown':
        // A compaction item outside a `compacted` line is not something this adapter knows how to place.
        this.unknownItem(type);
        return;
      case 'hidden':
        return;
    }
  }

  /**
   * The prompt a person typed is the user item that an `event_msg user_message` mirrors, written right after it
   * (whatever its text looks like); the other user items are context Codex wrote. Should the event come first,
   * it goes to the next user item that does not look like Codex's own context.
   */
  private notePrompt(candidate: Message | undefined, looksInjected: boolean): void {
    if (candidate && this.promptPending && !looksInjected) {
      this.prompts.add(candidate);
      this.promptPending = false;
      this.promptCandidate = undefined;
    } else this.promptCandidate = candidate;
  }

  /** An event saying a person typed the user item just written (or the next one). */
  private promptEvent(): void {
    this.promptEvents = true;
    if (this.promptCandidate) {
      this.prompts.add(this.promptCandidate);
      this.promptCandidate = undefined;
    } else this.promptPending = true;
  }

  private event(payload: Payload): void {
    switch (payload.type) {
      case 'item_completed':
        // 0.169 writes no user_message events: a prompt is mirrored by an item_completed UserMessage instead.
        if (isObject(payload.item) && payload.item.type === 'UserMessage') this.promptEvent();
        return;
      case 'user_message':
        this.promptEvent();
        return;
      case 'token_count':
        this.tokenCount(payload);
        return;
      case 'collab_agent_spawn_end':
        if (typeof payload.call_id === 'string' && typeof payload.new_thread_id === 'string') {
          const parent = typeof payload.sender_thread_id === 'string' ? payload.sender_thread_id : this.ownId;
          this.spawn(parent, payload.new_thread_id, payload.call_id);
        }
        return;
      case 'thread_rolled_back':
        this.rollbacks++;
        return;
    }
  }

  /**
   * `token_count` follows each model response with the cumulative total and the response's own usage
   * (`last_token_usage`), and is often written twice: a count whose figures equal the previous one is a repeat.
   * A new count belongs to the latest model turn, if that has none yet.
   */
  private tokenCount(payload: Payload): void {
    const info = payload.info;
    if (!isObject(info)) return;
    const figures = JSON.stringify([info.total_token_usage ?? null, info.last_token_usage ?? null]);
    if (figures === this.lastTokenCount) return;
    this.lastTokenCount = figures;
    const last = info.last_token_usage;
    if (isObject(last) && this.lastTurn && !this.lastTurn.usage)
      this.lastTurn.usage = usageOf(last as TokenUsage);
  }

  private spawn(parentSourceId: string, childSourceId: string, toolCallId: string): void {
    if (!this.spawns.has(childSourceId))
      this.spawns.set(childSourceId, { parentSourceId, childSourceId, toolCallId });
  }

  /** `spawn_agent` answers `{"agent_id": …}`. In a copied history the spawner is not this session: skip there. */
  private noteSpawnOutput(result: ToolResult): void {
    if (this.copied || this.callNames.get(result.callId) !== 'spawn_agent') return;
    try {
      const answer = JSON.parse(outputText(result.output)) as unknown;
      if (isObject(answer) && typeof answer.agent_id === 'string')
        this.spawn(this.ownId, answer.agent_id, result.callId);
    } catch {
      // Not the JSON answer of a successful spawn.
    }
  }

  /**
   * A compaction: the model saw only the replacement history afterwards. The summary message carries the
   * compaction's summary; `preserved` lists what else stayed visible (the instructions, then the replacement
   * history in order). Items of the replacement that are copies of earlier messages point at them; the others
   * are new messages written just before the summary.
   */
  private compacted(payload: Payload, line: number, timestamp: string | undefined): void {
    this.turn = undefined;
    this.lastTurn = undefined;
    this.promptCandidate = undefined;
    const message = typeof payload.message === 'string' ? payload.message : '';
    const summary: Message = {
      role: 'user',
      parts: [],
      injected: true,
      compaction: true,
      source: { file: this.file, line },
    };
    if (timestamp) summary.timestamp = timestamp;
    const kept = this.instructions ? [this.instructions] : [];
    const history = payload.replacement_history;
    if (Array.isArray(history)) kept.push(...this.replace(history.filter(isObject), message, summary, line));
    else {
      summary.parts = [{ type: 'text', text: message }];
      kept.push(...this.rebuilt());
      this.rebuiltCompactions.push(line);
    }
    this.messages.push(summary);
    this.kept.set(summary, kept);
  }

  private replace(history: Payload[], message: string, summary: Message, line: number): Message[] {
    // Grouped as live items are (a run of model items is one turn); each model item is also kept on its own, for
    // a run that joins what were separate turns (the input between them was not kept).
    const units: { message: Message; pieces: Message[] }[] = [];
    let turn: { message: Message; pieces: Message[] } | undefined;
    for (const item of history) {
      const converted = convert(item, `line-${line}`);
      if (converted.kind !== 'model') turn = undefined;
      const source: Source = { file: this.file, line };
      switch (converted.kind) {
        case 'summary':
          // Where the opaque compaction item sits is where the model saw the summary.
          if (summary.parts.length === 0) units.push({ message: summary, pieces: [] });
          summary.parts.push(converted.part);
          break;
        case 'model':
          if (!turn) {
            turn = { message: { role: 'assistant', parts: [], source }, pieces: [] };
            units.push(turn);
          }
          turn.message.parts.push(...converted.parts);
          turn.pieces.push({ role: 'assistant', parts: converted.parts, source });
          break;
        case 'input': {
          const input: Message = { role: converted.role, parts: converted.parts, source };
          if (converted.injected) input.injected = true;
          units.push({ message: input, pieces: [] });
          break;
        }
        case 'output':
          units.push({ message: { role: 'tool', parts: [converted.result], source }, pieces: [] });
          break;
        case 'unknown':
          this.unknownItem(converted.type);
          break;
        case 'hidden':
          break;
      }
    }
    // Without an opaque compaction item, the summary is the user item that holds the compaction's message.
    if (summary.parts.length === 0) {
      const at =
        message === ''
          ? -1
          : units.findLastIndex((u) => u.message.role === 'user' && textOf(u.message).includes(message));
      // The summary takes that item's place: the model saw it there, after the items kept before it.
      if (at >= 0)
        summary.parts = (
          units.splice(at, 1, { message: summary, pieces: [] })[0] as { message: Message }
        ).message.parts;
      else summary.parts = [{ type: 'text', text: message }];
    }

    // Only roles the replacement holds are worth keying (tool outputs are the bulk of a session and rarely kept).
    const roles = new Set(units.map((unit) => unit.message.role));
    const earlier = new Map<string, Message[]>();
    for (const previous of this.messages) {
      if (previous === this.instructions || previous.compaction || !roles.has(previous.role)) continue;
      let key = this.keys.get(previous);
      if (key === undefined) {
        key = contentKey(previous);
        this.keys.set(previous, key);
      }
      const list = earlier.get(key);
      if (list) list.push(previous);
      else earlier.set(key, [previous]);
    }
    // A repeated item (the same prompt twice) points at as many distinct earlier copies, the latest ones.
    const wanted = new Map<string, number>();
    // each unit's key, made once (a digest of its parts: the replacement history can be most of a session)
    const unitKeys = new Map<Message, string>();
    for (const { message: unit } of units) {
      if (unit === summary) continue;
      const key = contentKey(unit);
      unitKeys.set(unit, key);
      wanted.set(key, (wanted.get(key) ?? 0) + 1);
    }
    const taken = new Map<string, number>();
    const pick = (unit: Message): Message | undefined => {
      const key = unitKeys.get(unit) ?? contentKey(unit);
      const candidates = earlier.get(key) ?? [];
      const index = taken.get(key) ?? 0;
      taken.set(key, index + 1);
      return candidates[candidates.length - (wanted.get(key) ?? 1) + index];
    };
    const kept: Message[] = [];
    for (const { message: unit, pieces } of units) {
      // The summary itself, at its place among the kept items (turns.ts puts it there).
      if (unit === summary) {
        kept.push(summary);
        continue;
      }
      const match = pick(unit);
      if (match) kept.push(match);
      else if (unit.role !== 'assistant') {
        // Context Codex wrote anew (regenerated instructions, re-encoded images): a message of its own.
        this.messages.push(unit);
        kept.push(unit);
      } else {
        for (const piece of pieces.length > 1 ? pieces : [unit]) {
          if (piece.parts.every((part) => part.type === 'reasoning')) continue;
          const found = pieces.length > 1 ? pick(piece) : undefined;
          if (found) kept.push(found);
          else if (piece.parts.every((part) => part.type === 'text' || part.type === 'reasoning')) {
            // Model text no stored message is on its own (the answer after a web search, which the stored
            // message holds with the search; text Codex wrote): the model saw it, so later contexts hold it —
            // as context the harness put there (injected), never a turn of this session.
            const copy: Message = { ...piece, injected: true };
            this.messages.push(copy);
            kept.push(copy);
          }
          // A model turn with calls that was never written: nothing here can stand for it without its results.
          else this.unkeptAssistantItems++;
        }
      }
    }
    return kept;
  }

  /**
   * Older local compaction recorded only the summary; Codex rebuilt the history as the initial context, the
   * latest prompts (about 20k tokens) and the summary. Rebuilt here from the messages that are in the file.
   */
  private rebuilt(): Message[] {
    const isPrompt = (m: Message): boolean =>
      this.promptEvents ? this.prompts.has(m) : m.role === 'user' && !m.injected && !m.compaction;
    const first = this.messages.findIndex(isPrompt);
    const initial = this.messages
      .slice(0, Math.max(first, 0))
      .filter((m) => m !== this.instructions && (m.role === 'user' || m.role === 'system') && !m.compaction);
    const prompts: Message[] = [];
    let budget = legacyPromptBudget;
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const message = this.messages[i] as Message;
      if (!isPrompt(message)) continue;
      budget -= textOf(message).length;
      if (budget < 0) break;
      prompts.unshift(message);
    }
    return [...initial, ...prompts];
  }

  finish(nextLine?: number): CodexParseResult {
    // The model turn still open: items after the last line read would be added to it.
    const open = this.turn;
    this.turn = undefined;
    const sourceId = this.ownId;
    // With prompt events in the log, a user item no event mirrors was written by Codex, not typed.
    if (this.promptEvents) {
      for (const message of this.messages) {
        if (message.role !== 'user' || message.compaction) continue;
        if (this.prompts.has(message)) delete message.injected;
        else message.injected = true;
      }
    }
    nameResults(this.messages);
    markUnanswered(this.messages);
    assignIds(this.messages, this.historyOf ?? sourceId);
    for (const [summary, kept] of this.kept)
      summary.preserved = kept.map((message) => message.nativeId as string);
    const sessions = this.messages.some((message) => message !== this.instructions)
      ? [this.session(sourceId)]
      : [];
    if (sessions[0])
      sessions.push(...this.compactionAnswers.map((answer) => this.compaction(sourceId, answer)));
    const result: CodexParseResult = {
      sessions,
      spawns: [...this.spawns.values()],
      notes: this.notes(sessions.length),
    };
    if (nextLine !== undefined && sessions[0]) result.state = this.stateAt(nextLine, open, sessions[0]);
    return result;
  }

  /**
   * What a continued read needs (see resume.ts): the first message lines after the last one could change (the
   * open model turn, the latest one still without usage, a prompt an event may still mark, turns with open calls),
   * everything before it being final, and what the rollout was in the middle of. For a continued rollout,
   * `before` is the state it started from (its messages are the session's from `before.tail` on).
   */
  private stateAt(
    nextLine: number,
    open: Message | undefined,
    session: ParsedSession,
    before?: CodexState,
  ): CodexState {
    const messages = this.messages;
    const base = before?.tail ?? 0;
    const index = (message: Message | undefined) => (message ? messages.indexOf(message) : -1);
    const global = (local: number) => (local === -1 ? -1 : base + local);
    const lastTurn = this.lastTurn && !this.lastTurn.usage ? index(this.lastTurn) : -1;
    const { first, calls, answered } = openCalls(messages, before);
    let tail = first;
    for (const at of [index(open), lastTurn, index(this.promptCandidate)])
      if (at >= 0) tail = Math.min(tail, at);
    const reasons: string[] = [];
    if (this.copied) reasons.push("it holds another session's copied history");
    if (this.lastTurn && !this.lastTurn.usage && lastTurn === -1)
      reasons.push('its last model response is a compaction answer still without usage');
    if (messages.slice(tail).some((message) => message.compaction))
      reasons.push('a compaction comes after a message new lines may change');
    const children = new HashSet(before?.children);
    for (const child of this.spawns.keys()) children.add(child);
    const { instructions: _i, base_instructions: _b, ...meta } = this.meta ?? {};
    const title = this.titleIndex(session);
    const state: CodexState = {
      format: 1,
      nextLine,
      sessionId: session.id,
      count: base + messages.length,
      tail: base + tail,
      chainFrom:
        tail > 0
          ? (messages[tail - 1]?.nativeId as string)
          : (before?.chainFrom ?? this.historyOf ?? this.ownId),
      turn: global(index(open)),
      lastTurn: global(lastTurn),
      promptCandidate: global(index(this.promptCandidate)),
      promptPending: this.promptPending,
      promptEvents: this.promptEvents,
      lastTokenCount: this.lastTokenCount ?? null,
      searches: this.searches,
      meta: this.meta ? meta : null,
      model: this.model ?? null,
      cwd: this.cwd ?? null,
      firstTime: this.firstTime ?? null,
      lastTime: this.lastTime ?? null,
      calls: calls.pack(),
      answered: answered.pack(),
      children: children.pack(),
    };
    // A title taken from a prompt before the tail (or a sub-agent's name) cannot change; one after may.
    if (before?.title !== undefined) state.title = before.title;
    else if (title < tail) state.title = session.title ?? null;
    if (reasons.length > 0) state.readWhole = reasons.join('; ');
    return state;
  }

  /** Index of the prompt the session's title was taken from; -1 for a sub-agent's name; length for none. */
  private titleIndex(session: ParsedSession): number {
    const prompt = this.titlePrompt();
    if (session.title !== undefined && (!prompt || promptTitle(prompt) !== session.title)) return -1;
    return prompt ? this.messages.indexOf(prompt) : this.messages.length;
  }

  private titlePrompt(): Message | undefined {
    return this.messages.find((m) => m.role === 'user' && !m.injected && textOf(m).trim() !== '');
  }

  /**
   * A rollout continued from `state` (resume.ts): `tail` is the session's stored messages from `state.tail` on,
   * final as the last read left them; the lines after the last one read are added to it as to the full rollout.
   */
  static continuing(
    file: string,
    fallbackId: string,
    warnings: Warning[],
    state: CodexState,
    tail: Message[],
  ) {
    const rollout = new CodexRollout(file, fallbackId, warnings);
    const at = (index: number) => (index >= state.tail ? tail[index - state.tail] : undefined);
    rollout.messages.push(...tail);
    if (state.meta) {
      rollout.meta = state.meta;
      rollout.forkOf = historyBase(state.meta);
    }
    rollout.turn = at(state.turn);
    rollout.lastTurn = at(state.lastTurn);
    rollout.promptCandidate = at(state.promptCandidate);
    rollout.promptPending = state.promptPending;
    rollout.promptEvents = state.promptEvents;
    if (state.lastTokenCount !== null) rollout.lastTokenCount = state.lastTokenCount;
    rollout.searches = state.searches;
    if (state.model !== null) rollout.model = state.model;
    if (state.cwd !== null) rollout.cwd = state.cwd;
    if (state.firstTime !== null) rollout.firstTime = state.firstTime;
    if (state.lastTime !== null) rollout.lastTime = state.lastTime;
    rollout.answeredBefore = answeredCalls(tail);
    for (const message of tail) {
      for (const part of message.parts)
        if (part.type === 'tool_call') rollout.callNames.set(part.id, part.name);
      if (state.promptEvents && message.role === 'user' && !message.compaction && !message.injected)
        rollout.prompts.add(message);
    }
    return rollout;
  }

  /**
   * The continued rollout's messages from the state's tail on, finished as finish() finishes the whole file, and
   * the session's metadata; `state` is the one it was continued from.
   */
  finishContinued(
    state: CodexState,
    nextLine: number,
  ): { messages: Message[]; session: ParsedSession; spawns: Spawn[]; notes: string[]; state: CodexState } {
    const open = this.turn;
    this.turn = undefined;
    const messages = this.messages;
    if (this.promptEvents)
      for (const message of messages) {
        if (message.role !== 'user' || message.compaction) continue;
        if (this.prompts.has(message)) delete message.injected;
        else message.injected = true;
      }
    nameResults(messages);
    // A call answered before the tail stays answered (markUnanswered sees only the tail).
    markUnanswered(messages, this.answeredBefore);
    assignIds(messages, state.chainFrom);
    const session = this.session(this.ownId);
    if (state.title !== undefined) {
      if (state.title === null) delete session.title;
      else session.title = state.title;
    }
    return {
      messages,
      session,
      spawns: [...this.spawns.values()],
      notes: this.notes(1),
      state: this.stateAt(nextLine, open, session, state),
    };
  }

  /**
   * A compaction request as a session: it saw this session's history up to the line before its answer, then
   * Codex's compaction prompt (which the rollout does not record: 0.169's, as its requests carry it), and it
   * answered with the summary.
   */
  private compaction(sourceId: string, answer: Message): ParsedSession {
    const line = (answer.source as Source).line;
    const prompt: Message = {
      role: 'user',
      parts: [{ type: 'text', text: compactionPrompt }],
      injected: true,
      source: { file: this.file, line },
    };
    if (answer.timestamp) prompt.timestamp = answer.timestamp;
    const messages = [prompt, answer];
    const own = `${sourceId}/compaction-${line}`;
    assignIds(messages, own);
    const session: ParsedSession = {
      id: sessionId(agent, own),
      agent,
      sourceId: own,
      kind: 'compaction',
      parentId: sessionId(agent, sourceId),
      continues: { sessionId: sessionId(agent, sourceId), line: line - 1, sourceId },
      messages,
      origin: 'file',
      title: 'compaction',
    };
    const cwd = this.meta?.cwd ?? this.cwd;
    if (cwd) session.cwd = cwd;
    if (this.meta?.cli_version) session.version = this.meta.cli_version;
    if (answer.timestamp) {
      session.startedAt = answer.timestamp;
      session.endedAt = answer.timestamp;
    }
    return session;
  }

  private session(sourceId: string): ParsedSession {
    const meta = this.meta ?? {};
    const sub = subagentOf(meta);
    const kind: SessionKind = sub ? (sub.compaction ? 'compaction' : 'subagent') : 'main';
    const session: ParsedSession = {
      id: sessionId(agent, sourceId),
      agent,
      sourceId,
      kind,
      messages: this.messages,
      origin: 'file',
    };
    if (sub?.parent) session.parentId = sessionId(agent, sub.parent);
    if (this.forkOf)
      session.continues = {
        sessionId: sessionId(agent, this.forkOf.thread),
        line: this.forkOf.line,
        sourceId: this.forkOf.thread,
      };
    const cwd = meta.cwd ?? this.cwd;
    if (cwd) session.cwd = cwd;
    if (meta.cli_version) session.version = meta.cli_version;
    // A copied parent's lines can be older than this session: its own session_meta says when it started.
    const startedAt = meta.timestamp ?? this.firstTime;
    if (startedAt) session.startedAt = startedAt;
    if (this.lastTime) session.endedAt = this.lastTime;
    const prompt = this.titlePrompt();
    const named = [meta.agent_nickname, meta.agent_role].filter((s) => typeof s === 'string' && s !== '');
    const title =
      sub && named.length > 0
        ? named.length === 2
          ? `${named[0]} (${named[1]})`
          : named[0]
        : prompt && promptTitle(prompt);
    if (title) session.title = title;
    return session;
  }

  private notes(sessions: number): string[] {
    const notes: string[] = [];
    const lines = (list: number[]): string =>
      `line${list.length > 1 ? 's' : ''} ${list.slice(0, listedLines).join(', ')}${list.length > listedLines ? ', …' : ''}`;
    if (sessions === 0) notes.push('no conversation in the file (only its session metadata)');
    for (const [type, count] of this.unknownRecords)
      notes.push(`${count} line(s) of unknown type '${type}' not read`);
    for (const [type, count] of this.unknownItems)
      notes.push(`${count} response item(s) of unknown type '${type}' not read`);
    if (this.rawArguments.length > 0)
      notes.push(
        `${this.rawArguments.length} tool call(s) whose arguments are not valid JSON, kept as the raw string (${lines(this.rawArguments)})`,
      );
    if (this.rebuiltCompactions.length > 0)
      notes.push(
        `compaction without a replacement history (${lines(this.rebuiltCompactions)}): later contexts are the initial context, recent prompts and the summary, rebuilt approximately`,
      );
    if (this.unkeptAssistantItems > 0)
      notes.push(
        `${this.unkeptAssistantItems} model turn(s) of a replacement history match no earlier turn; later contexts leave them out`,
      );
    if (this.rollbacks > 0)
      notes.push(
        `${this.rollbacks} thread rollback(s) not applied: later contexts still show the rolled-back turns`,
      );
    return notes;
  }
}
