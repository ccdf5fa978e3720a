// How the collected records of a log become normalized messages, in the order the model met them. Pure.
import type { Message, Part, ToolResult } from '../../model/session.js';
import type { Spawn } from '../types.js';
import {
  callOf,
  contentParts,
  isObject,
  type Json,
  noticeTypes,
  sessionContextOpening,
  thoughtText,
  usageOf,
} from './records.js';

/** A message record as last written, and the lines it was written on. */
export interface Held {
  id: string;
  value: Json;
  line: number;
  endLine: number;
}

/** What the file holds, in the order the model met it: messages, and compressions of the history. */
export type Entry =
  | { kind: 'message'; held: Held }
  | { kind: 'compaction'; line: number; before: string[]; summary: Held; ack?: Held; kept: string[] }
  /** A rewrite's regenerated session context; `listed`: the history a resume put after it. */
  | { kind: 'context'; held: Held; listed?: string[] };

const textOf = (parts: readonly Part[]): string =>
  parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

function time(held: Held): { timestamp?: string } {
  return typeof held.value.timestamp === 'string' ? { timestamp: held.value.timestamp } : {};
}

/**
 * The messages of a log's entries: a model message, then a tool message of its results (each call id answered
 * once: the logged result messages repeat `toolCalls[].result`); a compression's snapshot with what it kept; a
 * resume's regenerated session context with the history after it. Native ids are the log's message ids.
 */
export function buildMessages(
  entries: readonly Entry[],
  file: string,
  sourceId: string,
  /** Call ids answered by messages before these entries (a continued read builds only the last ones). */
  answeredBefore?: { has(callId: string): boolean },
): { messages: Message[]; spawns: Spawn[]; starts: number[] } {
  const messages: Message[] = [];
  /** The index of each entry's first message (what a continued read starts from). */
  const starts: number[] = [];
  const produced = new Map<string, string[]>();
  const answered = new Set<string>();
  const spawns: Spawn[] = [];
  const source = (held: Held) => ({
    file: file,
    line: held.line,
    ...(held.endLine !== held.line ? { endLine: held.endLine } : {}),
  });
  const push = (held: Held, message: Message): void => {
    messages.push(message);
    const list = produced.get(held.id) ?? [];
    list.push(message.nativeId as string);
    produced.set(held.id, list);
  };
  const results = (held: Held, list: ToolResult[], suffix: string): void => {
    const fresh = list.filter(
      (result) => !answered.has(result.callId) && !answeredBefore?.has(result.callId),
    );
    for (const result of fresh) answered.add(result.callId);
    if (fresh.length === 0) return;
    push(held, {
      role: 'tool',
      parts: fresh,
      nativeId: `${held.id}/${suffix}`,
      source: source(held),
      ...time(held),
    });
  };

  for (const entry of entries) {
    starts.push(messages.length);
    if (entry.kind === 'compaction') {
      const summary: Message = {
        role: 'user',
        parts: contentParts(entry.summary.value.content, entry.summary.id),
        nativeId: entry.summary.id,
        injected: true,
        compaction: true,
        source: source(entry.summary),
        ...time(entry.summary),
      };
      // The CLI's own acknowledgement, never a model's answer: a harness-made assistant message, before the
      // summary so that the compaction finds it among what it kept (turns() shows it there, after the summary).
      if (entry.ack)
        push(entry.ack, {
          role: 'assistant',
          parts: contentParts(entry.ack.value.content, entry.ack.id),
          nativeId: entry.ack.id,
          injected: true,
          source: source(entry.ack),
          ...time(entry.ack),
        });
      push(entry.summary, summary);
      const ids = [...entry.before, entry.summary.id, ...(entry.ack ? [entry.ack.id] : []), ...entry.kept];
      summary.preserved = ids.flatMap((id) => produced.get(id) ?? []);
      continue;
    }
    if (entry.kind === 'context') {
      const { held } = entry;
      const message: Message = {
        role: 'user',
        parts: contentParts(held.value.content, held.id),
        nativeId: `${sourceId}/${held.id}@${held.line}`,
        injected: true,
        attachment: 'session_context',
        source: source(held),
        ...time(held),
      };
      messages.push(message);
      // A resume: the history it listed follows the new context (the old one is no longer sent).
      if (entry.listed) {
        message.compaction = true;
        message.preserved = [
          message.nativeId as string,
          ...entry.listed.flatMap((id) => produced.get(id) ?? []),
        ];
      }
      produced.set(held.id, [message.nativeId as string]);
      continue;
    }
    const { held } = entry;
    const { value } = held;
    const type = String(value.type);
    if (noticeTypes.has(type)) continue;
    if (type === 'gemini') {
      const parts: Part[] = [];
      for (const thought of Array.isArray(value.thoughts) ? value.thoughts : []) {
        const text = thoughtText(thought);
        if (text !== undefined) parts.push({ type: 'reasoning', text });
      }
      parts.push(...contentParts(value.content, held.id));
      const own: ToolResult[] = [];
      (Array.isArray(value.toolCalls) ? value.toolCalls : []).forEach((raw, index) => {
        if (!isObject(raw)) return;
        const { call, results: found } = callOf(raw, held.id, index);
        parts.push(call);
        own.push(...found);
        if (typeof raw.agentId === 'string')
          spawns.push({ parentSourceId: sourceId, childSourceId: raw.agentId, toolCallId: call.id });
      });
      const message: Message = {
        role: 'assistant',
        parts,
        nativeId: held.id,
        source: source(held),
        ...time(held),
      };
      if (typeof value.model === 'string') message.model = value.model;
      const usage = usageOf(value.tokens);
      if (usage) message.usage = usage;
      push(held, message);
      results(held, own, 'results');
      continue;
    }
    // A user message: typed text, the session context the CLI writes first, or the results sent back.
    const parts = contentParts(value.content, held.id);
    const sent = parts.filter((part): part is ToolResult => part.type === 'tool_result');
    const rest = parts.filter((part) => part.type !== 'tool_result');
    if (rest.length > 0) {
      const text = textOf(rest);
      const context = text.startsWith(sessionContextOpening);
      const message: Message = {
        role: 'user',
        parts: rest,
        // The session context's id is the same in every session: made the session's own.
        nativeId: context ? `${sourceId}/${held.id}` : held.id,
        source: source(held),
        ...time(held),
      };
      if (context) {
        message.injected = true;
        message.attachment = 'session_context';
      }
      push(held, message);
    }
    results(held, sent, 'results');
  }
  return { messages, spawns, starts };
}
