// opencode messages and parts → the normalized model. Every storage generation is first read into RawMessage
// (records.ts); this file follows what opencode's own `toModelMessages` (packages/opencode/src/session/
// message-v2.ts) sends to the model, so contexts rebuilt from the store are the ones the model saw.

import { sessionId } from '../../model/ids.js';
import {
  type Message,
  markUnanswered,
  nameResults,
  type OutputBlock,
  type Part,
  type ResultDisplay,
  type SourceRef,
  type Usage,
} from '../../model/session.js';
import type { ParsedSession, Spawn } from '../types.js';
import {
  byId,
  clearedOutput,
  compactionPrompt,
  isObject,
  knownPartTypes,
  type MessageInfo,
  type PartData,
  parseJson,
  type RawMessage,
  type SessionInfo,
  subtaskPrompt,
  type Tokens,
  type ToolState,
} from './records.js';

const agent = 'opencode';

/** What a unit's sessions add up to beyond the sessions themselves: told to the user as notes. */
export class Tally {
  readonly unknownParts = new Map<string, number>();
  reverted = 0;

  unknown(type: string): void {
    this.unknownParts.set(type, (this.unknownParts.get(type) ?? 0) + 1);
  }

  notes(): string[] {
    const notes: string[] = [];
    for (const [type, count] of this.unknownParts)
      notes.push(`${count} part(s) of unknown type '${type}' left out of the conversation`);
    if (this.reverted > 0)
      notes.push(`${this.reverted} message(s) undone by a revert (still stored by opencode) left out`);
    return notes;
  }
}

type Group = { parts: Part[]; injected: boolean };

/** The user message as the model got it: ignored text and expanded file references left out. */
function userMessages(raw: RawMessage, tally: Tally, timestamp?: string): Message[] {
  const groups: Group[] = [];
  const add = (part: Part, injected: boolean): void => {
    const last = groups.at(-1);
    // Text opencode writes itself (file expansions, "Continue…" after a compaction) becomes its own message.
    if (last && last.injected === injected) last.parts.push(part);
    else groups.push({ parts: [part], injected });
  };
  for (const part of raw.parts) {
    switch (part.type) {
      case 'text':
        if (part.ignored !== true && typeof part.text === 'string')
          add({ type: 'text', text: part.text }, part.synthetic === true);
        break;
      case 'file': {
        const file = filePart(part);
        if (file) add(file, false);
        break;
      }
      case 'compaction':
        add({ type: 'text', text: compactionPrompt }, true);
        break;
      case 'subtask':
        add({ type: 'text', text: subtaskPrompt }, true);
        break;
      default:
        if (!knownPartTypes.has(part.type ?? '')) tally.unknown(String(part.type));
    }
  }
  return groups.map((group, index) => {
    const message: Message = { role: 'user', parts: group.parts, source: raw.source };
    message.nativeId = index === 0 ? raw.id : `${raw.id}#${index}`;
    if (timestamp) message.timestamp = timestamp;
    if (group.injected) message.injected = true;
    return message;
  });
}

/** Files the user attached: text files and directories were expanded into synthetic text, so they are left out. */
function filePart(part: PartData): Part | undefined {
  const mime = part.mime ?? '';
  if (mime === 'text/plain' || mime === 'application/x-directory') return undefined;
  const data = dataUrl(part.url);
  if (mime.startsWith('image/') && data !== undefined) return { type: 'image', mediaType: mime, data };
  return { type: 'text', text: `[Attached ${mime || 'file'}: ${part.filename ?? part.url ?? 'file'}]` };
}

function dataUrl(url: unknown): string | undefined {
  if (typeof url !== 'string' || !url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  return comma === -1 ? undefined : url.slice(comma + 1);
}

function usage(tokens: Tokens | undefined): Usage | undefined {
  if (!tokens) return undefined;
  const out: Usage = {};
  if (typeof tokens.input === 'number') out.inputTokens = tokens.input;
  if (typeof tokens.output === 'number') out.outputTokens = tokens.output;
  if (typeof tokens.cache?.read === 'number') out.cacheReadTokens = tokens.cache.read;
  if (typeof tokens.cache?.write === 'number') out.cacheWriteTokens = tokens.cache.write;
  const total = Object.values(out).reduce((sum, n) => sum + n, 0);
  return total > 0 ? out : undefined;
}

function errorText(error: MessageInfo['error']): string {
  const name = error?.name ?? 'Error';
  const message = error?.data?.message ?? error?.message;
  return typeof message === 'string' && message !== '' ? `${name}: ${message}` : name;
}

/** Provider signatures ride in the reasoning part's metadata (e.g. `{anthropic: {signature}}`). */
function reasoningPart(part: PartData): Part {
  const out: Part = { type: 'reasoning', text: part.text ?? '' };
  for (const value of Object.values(part.metadata ?? {})) {
    if (!isObject(value)) continue;
    if (typeof value.signature === 'string') out.signature = value.signature;
    if (typeof value.redactedData === 'string') {
      out.redacted = true;
      out.signature = value.redactedData;
    }
  }
  return out;
}

function toolInput(state: ToolState | undefined): unknown {
  const input = state?.input;
  // A pending call may only have the raw JSON text so far.
  if (typeof input === 'string') return parseJson(input) ?? input;
  return input ?? {};
}

/**
 * Metadata over this many bytes of JSON is not kept (an edit's metadata holds the whole file before and after):
 * the store holds what the model saw in full, and the UI's copy only where it is small.
 */
export const displayLimit = 64 * 1024;

/** The title and metadata opencode kept for the call, for a replay to give back as they were. */
function displayOf(state: ToolState): ResultDisplay | undefined {
  const display: ResultDisplay = {};
  if (typeof state.title === 'string' && state.title !== '') display.title = state.title;
  const metadata = state.metadata;
  if (metadata && typeof metadata === 'object' && Object.keys(metadata).length > 0) {
    if (JSON.stringify(metadata).length <= displayLimit) display.metadata = metadata;
  }
  return display.title !== undefined || display.metadata !== undefined ? display : undefined;
}

/** The result the model got for a tool part, or undefined while it never finished (pending, running). */
function toolResult(part: PartData): Part | undefined {
  const state = part.state;
  const callId = part.callID ?? '';
  const name = part.tool ?? '';
  if (state?.status === 'completed') {
    if (state.time?.compacted !== undefined) return result(callId, name, clearedOutput, false);
    const text = typeof state.output === 'string' ? state.output : '';
    const images: OutputBlock[] = [];
    for (const attachment of state.attachments ?? []) {
      const data = dataUrl(attachment.url);
      if (data !== undefined && attachment.mime?.startsWith('image/'))
        images.push({ type: 'image', mediaType: attachment.mime, data });
    }
    const output = images.length > 0 ? [{ type: 'text' as const, text }, ...images] : text;
    return result(callId, name, output, false, displayOf(state));
  }
  if (state?.status === 'error') {
    // An interrupted tool that had output is sent as a normal result with that output.
    const partial = state.metadata?.interrupted === true ? state.metadata.output : undefined;
    if (typeof partial === 'string') return result(callId, name, partial, false);
    return result(callId, name, typeof state.error === 'string' ? state.error : 'error', true);
  }
  return undefined;
}

function result(
  callId: string,
  name: string,
  output: string | OutputBlock[],
  isError: boolean,
  display?: ResultDisplay,
): Part {
  return { type: 'tool_result', callId, name, output, isError, ...(display ? { display } : {}) };
}

/** The child session a `task` call started: `metadata.sessionId`, else the id its output names. */
export function taskChild(part: PartData): string | undefined {
  if (part.type !== 'tool' || part.tool !== 'task') return undefined;
  const id = part.state?.metadata?.sessionId;
  if (typeof id === 'string' && id !== '') return id;
  const output = part.state?.output ?? '';
  return /<task id="(ses_[^"]+)"/.exec(output)?.[1] ?? /task_id: (ses_\w+)/.exec(output)?.[1];
}

/**
 * An assistant message: one model call per step (`step-start` … `step-finish`), as opencode's
 * toModelMessages splits it; each step is an assistant message followed by a tool message with its results.
 */
function assistantMessages(raw: RawMessage, tally: Tally, timestamp?: string): Message[] {
  const { info } = raw;
  const base = (message: Message): Message => {
    if (info.modelID) message.model = info.modelID;
    if (timestamp) message.timestamp = timestamp;
    return message;
  };
  const aborted = info.error?.name === 'MessageAbortedError';
  const hasContent = raw.parts.some((part) => part.type !== 'step-start' && part.type !== 'reasoning');
  if (info.error && !(aborted && hasContent)) {
    // A failed model call: opencode leaves it out of every later context.
    const message: Message = {
      role: 'assistant',
      parts: [{ type: 'text', text: errorText(info.error) }],
      nativeId: raw.id,
      injected: true,
      source: raw.source,
    };
    return [base(message)];
  }

  const steps: (PartData & { id: string })[][] = [[]];
  for (const part of raw.parts) {
    if (part.type === 'step-start' && (steps.at(-1)?.length ?? 0) > 0) steps.push([]);
    steps.at(-1)?.push(part);
  }
  const messages: Message[] = [];
  let index = 0;
  for (const step of steps) {
    const parts: Part[] = [];
    const results: Part[] = [];
    let stepUsage: Usage | undefined;
    for (const part of step) {
      switch (part.type) {
        case 'text':
          if (typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
          break;
        case 'reasoning':
          parts.push(reasoningPart(part));
          break;
        case 'tool': {
          parts.push({
            type: 'tool_call',
            id: part.callID ?? part.id,
            name: part.tool ?? '',
            input: toolInput(part.state),
          });
          const answer = toolResult(part);
          if (answer) results.push(answer);
          break;
        }
        case 'step-finish':
          stepUsage = usage(part.tokens);
          break;
        default:
          if (!knownPartTypes.has(part.type ?? '')) tally.unknown(String(part.type));
      }
    }
    // A step that produced nothing was never sent back (toModelMessages drops bare step-starts).
    if (parts.length === 0) continue;
    const nativeId = index === 0 ? raw.id : `${raw.id}#${index}`;
    index++;
    const message = base({ role: 'assistant', parts, nativeId, source: raw.source });
    stepUsage ??= steps.length === 1 ? usage(info.tokens) : undefined;
    if (stepUsage) message.usage = stepUsage;
    messages.push(message);
    if (results.length > 0)
      messages.push(
        base({ role: 'tool', parts: results, nativeId: `${nativeId}:results`, source: raw.source }),
      );
  }
  return messages;
}

function iso(ms: number | undefined): string | undefined {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** Messages from the one a revert points at are undone (opencode deletes them at the next prompt). */
function withoutReverted(info: SessionInfo, raw: RawMessage[], tally: Tally): RawMessage[] {
  const revert = info.revert;
  if (!revert?.messageID) return raw;
  const at = raw.findIndex((message) => message.id === revert.messageID);
  if (at === -1) return raw;
  const kept = raw.slice(0, at);
  const partial = raw[at] as RawMessage;
  const partID = revert.partID;
  if (partID) {
    const parts = partial.parts.filter((part) => part.id < partID);
    if (parts.length > 0) kept.push({ ...partial, parts });
  }
  tally.reverted += raw.length - kept.length;
  return kept;
}

const placeholderTitle = /^(New session|Child session) - \d{4}-\d{2}-\d{2}T/;

export interface Built {
  session: ParsedSession;
  spawns: Spawn[];
}

/**
 * One opencode session in the normalized model. `raw` is in opencode's order with parts sorted by id;
 * `spawnedBy` maps child session ids to the `task` call that started them, where the parent was read first.
 */
export function buildSession(
  info: SessionInfo,
  raw: RawMessage[],
  options: { origin: ParsedSession['origin']; tally: Tally; spawnedBy?: Map<string, string> },
): Built {
  const { tally } = options;
  const kept = withoutReverted(info, raw, tally);
  const messages: Message[] = [];
  const spawns: Spawn[] = [];
  /** Where each raw message's converted messages start, to resolve compaction tails. */
  const firstOf = new Map<string, number>();
  const compactionParts = new Map<string, PartData>();

  for (const message of kept) {
    message.parts.sort(byId);
    const timestamp = iso(message.info.time?.created);
    firstOf.set(message.id, messages.length);
    if (message.info.role === 'user') {
      const compaction = message.parts.find((part) => part.type === 'compaction');
      if (compaction) compactionParts.set(message.id, compaction);
      messages.push(...userMessages(message, tally, timestamp));
      continue;
    }
    const converted = assistantMessages(message, tally, timestamp);
    for (const part of message.parts) {
      const child = taskChild(part);
      if (child && part.callID)
        spawns.push({ parentSourceId: info.id, childSourceId: child, toolCallId: part.callID });
    }
    const summary = converted.find((m) => m.role === 'assistant' && !m.injected);
    if (message.info.summary === true && summary) {
      // The summary replaces the history for every later call; a `tail_start_id` keeps recent messages too.
      summary.compaction = true;
      const trigger = message.info.parentID;
      const tail = trigger ? compactionParts.get(trigger)?.tail_start_id : undefined;
      const from = tail !== undefined ? firstOf.get(tail) : undefined;
      const to = trigger !== undefined ? firstOf.get(trigger) : undefined;
      if (from !== undefined && to !== undefined && from < to)
        summary.preserved = messages
          .slice(from, to)
          .map((m) => m.nativeId)
          .filter((id): id is string => id !== undefined);
    }
    messages.push(...converted);
  }

  nameResults(messages);
  markUnanswered(messages);
  const session: ParsedSession = {
    id: sessionId(agent, info.id),
    agent,
    sourceId: info.id,
    kind: info.parentID ? 'subagent' : 'main',
    messages,
    origin: options.origin,
  };
  if (info.parentID) {
    session.parentId = sessionId(agent, info.parentID);
    const call = options.spawnedBy?.get(info.id);
    if (call) session.parentToolCallId = call;
  }
  if (info.directory) session.cwd = info.directory;
  if (info.version) session.version = info.version;
  const started = iso(info.time?.created) ?? messages.find((m) => m.timestamp)?.timestamp;
  const ended = iso(info.time?.updated) ?? messages.findLast((m) => m.timestamp)?.timestamp;
  if (started) session.startedAt = started;
  if (ended) session.endedAt = ended;
  const title = info.title && !placeholderTitle.test(info.title) ? info.title : firstPrompt(messages);
  if (title) session.title = title;
  for (const spawn of spawns) options.spawnedBy?.set(spawn.childSourceId, spawn.toolCallId);
  return { session, spawns };
}

function firstPrompt(messages: Message[]): string | undefined {
  const first = messages.find(
    (m) => m.role === 'user' && !m.injected && m.parts.some((p) => p.type === 'text'),
  );
  const text = first?.parts.find((p) => p.type === 'text');
  return text && text.type === 'text' ? text.text.trim().split('\n')[0]?.slice(0, 80) : undefined;
}

/** Where a message came from, for the row-backed generations. */
export function rowSource(db: string, table: string, row: string): SourceRef {
  return { db, table, row };
}
