// Builds sessions from docker-agent's items, in either storage generation: rows of `session_items` (migration
// 014 on) or the legacy JSON array in `sessions.messages`. Messages become messages; a summary item becomes
// the "Session Summary: …" message docker-agent shows the model in place of the history before it; a
// sub-session item links the child session to the tool call that ran it.

import { sessionId } from '../../model/ids.js';
import { type Message, markUnanswered, nameResults, toolCalls, toolResults } from '../../model/session.js';
import type { FileResult, ParsedSession, Warning } from '../types.js';
import { convert, isoTime, type Origin } from './convert.js';
import {
  defaultImplicitPrompt,
  isObject,
  type LegacyItem,
  type LegacySession,
  spawningTools,
  summaryPrefix,
  taskOf,
  text,
} from './records.js';

const agent = 'docker-agent';

/** One item of a session, whichever generation stored it. `index`: its place in docker-agent's item list. */
export type Entry =
  | { kind: 'message'; raw: unknown; agentName?: string; origin: Origin; index: number; where: string }
  | { kind: 'summary'; text: string; firstKept: number; origin: Origin; index: number }
  | { kind: 'subsession'; childId: string; task: () => string | undefined; index: number }
  /** A row that cannot be read: warned about in row order, with the others. */
  | { kind: 'bad'; where: string; problem: string };

export interface SessionMeta {
  sourceId: string;
  parentSourceId?: string;
  title?: string;
  cwd?: string;
  createdAt?: string;
}

/** What is counted across a file and reported once, as notes. */
export class Tally {
  readonly unknownKinds = new Map<string, number>();
  empty = 0;
  outOfConversation = 0;
  danglingSubsessions = 0;

  notes(): string[] {
    const notes: string[] = [];
    for (const [kind, count] of this.unknownKinds)
      notes.push(`${count} item(s) of unknown kind '${kind}' kept out of the conversation`);
    if (this.empty > 0)
      notes.push(
        `${this.empty} empty message(s) skipped (a reply cut off before any text; never sent to a model)`,
      );
    if (this.outOfConversation > 0)
      notes.push(
        `${this.outOfConversation} error/termination item(s) kept out of the conversation (never sent to a model)`,
      );
    if (this.danglingSubsessions > 0)
      notes.push(`${this.danglingSubsessions} sub-session reference(s) to deleted sessions skipped`);
    return notes;
  }
}

export class SessionBuilder {
  constructor(
    private readonly file: string,
    private readonly result: FileResult,
    private readonly tally: Tally,
  ) {}

  build(meta: SessionMeta, entries: Entry[]): ParsedSession | undefined {
    const messages: Message[] = [];
    const nativeIdAt = new Map<number, string>();
    const claimed = new Set<string>();
    for (const entry of entries) {
      if (entry.kind === 'message') {
        const converted = convert(entry.raw, entry.origin);
        if ('problem' in converted) this.skip(entry.where, `${converted.problem}; skipped`);
        else if ('empty' in converted) this.tally.empty++;
        else {
          messages.push(converted.message);
          nativeIdAt.set(entry.index, entry.origin.nativeId);
        }
      } else if (entry.kind === 'summary') {
        messages.push(summaryMessage(entry, nativeIdAt));
      } else if (entry.kind === 'bad') {
        this.skip(entry.where, `${entry.problem}; skipped`);
      } else {
        const call = spawningCall(messages, claimed, entry.task);
        if (call) {
          claimed.add(call);
          this.result.spawns.push({
            parentSourceId: meta.sourceId,
            childSourceId: entry.childId,
            toolCallId: call,
          });
        }
      }
    }
    if (messages.length === 0) return undefined;
    nameResults(messages);
    markUnanswered(messages);
    return finish(meta, entries, messages);
  }

  skip(where: string, message: string): void {
    this.result.skipped++;
    this.result.warnings.push({ file: this.file, message: `${where}: ${message}` } satisfies Warning);
  }

  /** The entries of a legacy `messages` array, and the sub-sessions embedded in it. */
  legacyEntries(
    items: unknown[],
    path: string,
  ): { entries: Entry[]; children: { session: LegacySession; path: string }[] } {
    const entries: Entry[] = [];
    const children: { session: LegacySession; path: string }[] = [];
    items.forEach((raw, index) => {
      this.result.lines++;
      const row = `${path}/${index}`;
      const origin: Origin = {
        nativeId: row,
        source: { db: this.file, table: 'sessions', row },
        implicit: false,
      };
      const where = `sessions row ${row}`;
      const item = (isObject(raw) ? raw : {}) as LegacyItem;
      const wrapped = isObject(item.message) ? item.message : undefined;
      if (wrapped && isObject(wrapped.message)) {
        origin.implicit = wrapped.implicit === true;
        entries.push({
          kind: 'message',
          raw: wrapped.message,
          agentName: text(wrapped.agentName),
          origin,
          index,
          where,
        });
      } else if (wrapped && 'role' in wrapped) {
        // The oldest builds stored bare session.Message values: {agentFilename, agentName, message}.
        entries.push({
          kind: 'message',
          raw: wrapped,
          agentName: text(item.agentName),
          origin,
          index,
          where,
        });
      } else if (isObject(item.sub_session) && typeof item.sub_session.id === 'string') {
        const child = item.sub_session;
        const childPath = `${row}/sub_session/messages`;
        children.push({ session: child, path: childPath });
        entries.push({
          kind: 'subsession',
          childId: child.id as string,
          task: () => legacyTask(child),
          index,
        });
      } else if (typeof item.summary === 'string' && item.summary !== '') {
        const firstKept = typeof item.first_kept_entry === 'number' ? item.first_kept_entry : 0;
        entries.push({ kind: 'summary', text: item.summary, firstKept, origin, index });
      } else {
        entries.push({ kind: 'bad', where, problem: 'not a message, sub-session or summary item' });
      }
    });
    return { entries, children };
  }
}

/** docker-agent's context after a summary: the summary, the kept tail (first_kept_entry on), then what follows. */
function summaryMessage(
  entry: Extract<Entry, { kind: 'summary' }>,
  nativeIdAt: Map<number, string>,
): Message {
  const message: Message = {
    role: 'user',
    parts: [{ type: 'text', text: summaryPrefix + entry.text }],
    nativeId: entry.origin.nativeId,
    injected: true,
    compaction: true,
    source: entry.origin.source,
  };
  if (entry.firstKept > 0 && entry.firstKept < entry.index) {
    const preserved: string[] = [];
    for (let index = entry.firstKept; index < entry.index; index++) {
      const id = nativeIdAt.get(index);
      if (id !== undefined) preserved.push(id);
    }
    if (preserved.length > 0) message.preserved = preserved;
  }
  return message;
}

/**
 * The tool call that ran a sub-session. transfer_task blocks until its child is done, so the child is stored
 * between the call and its result; background and delegated agents finish later, so they are matched by the
 * task text, which the child's first system message repeats.
 */
function spawningCall(
  messages: Message[],
  claimed: Set<string>,
  task: () => string | undefined,
): string | undefined {
  const calls = messages
    .flatMap(toolCalls)
    .filter((call) => spawningTools.has(call.name) && !claimed.has(call.id));
  if (calls.length === 0) return undefined;
  const wanted = task();
  if (wanted !== undefined) {
    const match = calls.findLast((call) => isObject(call.input) && call.input.task === wanted);
    if (match) return match.id;
  }
  const answered = new Set(
    messages.flatMap((message) => toolResults(message).map((result) => result.callId)),
  );
  const last = messages.findLast((message) => message.role === 'assistant' && toolCalls(message).length > 0);
  const pending = calls.filter(
    (call) => call.name === 'transfer_task' && !answered.has(call.id) && last?.parts.includes(call),
  );
  return pending.length === 1 ? pending[0]?.id : undefined;
}

/** The task a sub-session was given: in its system message, or as its implicit first prompt (skills). */
export function taskFrom(opening: { raw: unknown; implicit: boolean }[]): string | undefined {
  for (const { raw, implicit } of opening) {
    if (!isObject(raw)) continue;
    const content = text(raw.content) ?? '';
    if (raw.role === 'system') {
      const task = taskOf(content);
      if (task !== undefined) return task;
    }
    if (raw.role === 'user' && implicit && content !== defaultImplicitPrompt) return content;
  }
  return undefined;
}

function legacyTask(session: LegacySession): string | undefined {
  if (!Array.isArray(session.messages)) return undefined;
  const opening = (session.messages as LegacyItem[]).slice(0, 3).flatMap((item) => {
    const wrapped = isObject(item) && isObject(item.message) ? item.message : undefined;
    return wrapped ? [{ raw: wrapped.message, implicit: wrapped.implicit === true }] : [];
  });
  return taskFrom(opening);
}

function finish(meta: SessionMeta, entries: Entry[], messages: Message[]): ParsedSession {
  const session: ParsedSession = {
    id: sessionId(agent, meta.sourceId),
    agent,
    sourceId: meta.sourceId,
    kind: meta.parentSourceId ? 'subagent' : 'main',
    messages,
    origin: 'file',
  };
  if (meta.parentSourceId) session.parentId = sessionId(agent, meta.parentSourceId);
  if (meta.cwd) session.cwd = meta.cwd;
  const times = messages.flatMap((message) => (message.timestamp ? [message.timestamp] : [])).sort();
  const started = isoTime(meta.createdAt) ?? times[0];
  if (started) session.startedAt = started;
  const ended = times.at(-1) ?? started;
  if (ended) session.endedAt = ended;
  const title = meta.parentSourceId ? subagentTitle(entries) : undefined;
  const fallback = title ?? (meta.title || firstPrompt(messages));
  if (fallback) session.title = fallback;
  return session;
}

/** A sub-session is titled by who ran it and what it was asked ("librarian: find the config loader"). */
function subagentTitle(entries: Entry[]): string | undefined {
  const opening = entries.flatMap((entry) =>
    entry.kind === 'message' ? [{ raw: entry.raw, implicit: entry.origin.implicit }] : [],
  );
  const task = taskFrom(opening.slice(0, 3));
  if (task === undefined) return undefined;
  let name: string | undefined;
  for (const entry of entries) {
    if (entry.kind === 'message' && entry.agentName) {
      name = entry.agentName;
      break;
    }
  }
  const line = task.trim().split('\n')[0]?.slice(0, 80) ?? '';
  return name ? `${name}: ${line}` : line;
}

function firstPrompt(messages: Message[]): string | undefined {
  const first = messages.find(
    (m) => m.role === 'user' && !m.injected && m.parts.some((p) => p.type === 'text'),
  );
  const part = first?.parts.find((p) => p.type === 'text');
  return part?.type === 'text' ? part.text.trim().split('\n')[0]?.slice(0, 80) : undefined;
}
