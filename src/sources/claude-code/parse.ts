import { sessionId } from '../../model/ids.js';
import { type RequestShape, toolResultOutput, type WireMessage } from '../../model/request.js';
import {
  type Message,
  markUnanswered,
  nameResults,
  type Part,
  type Session,
  type SessionKind,
  type Usage,
} from '../../model/session.js';
import type { ParsedSession, Resume, Spawn, Warning } from '../types.js';
import {
  type ApiUsage,
  type Block,
  conversationTypes,
  type Envelope,
  isInjectedText,
  knownTypes,
} from './records.js';
import {
  buildRequestLog,
  type PendingRecord,
  type RequestLine,
  recordEnvelope,
  takeRequestLine,
} from './requests.js';
import { resumeOf } from './resume.js';

const agent = 'claude-code';

/** A line kept for the chain: heavy payloads of progress lines are dropped on the way in. */
export interface Entry {
  env: Envelope;
  line: number;
  order: number;
}

export interface Stream {
  sourceId: string;
  kind: SessionKind;
  parentSourceId?: string;
  byUuid: Map<string, Entry>;
  /** Entries without a uuid that still carry conversation (very old builds). */
  loose: Entry[];
  /** `api-request` records, in file order; the last one waits for the assistant line it produced. */
  requests: PendingRecord[];
  awaiting?: PendingRecord;
}

/** A sub-agent as its parent's inline `agent_progress` lines show it. */
interface Mirror {
  parentSourceId: string;
  toolCallId?: string;
  entries: Entry[];
  /** The sub-agent has its own transcript file, which will be read instead: keep nothing. */
  ownFile: boolean;
}

export interface ClaudeParseResult {
  sessions: ParsedSession[];
  spawns: Spawn[];
  /** Problems with the file's structure that were worked around (a compaction's missing logical parent). */
  warnings: Warning[];
  /** Things worth telling the user that are not errors (unknown line types). */
  notes: string[];
  /** What a later read needs to continue the file from where this one stopped, when it can. */
  resume?: Resume;
}

/**
 * Collects the lines of one transcript file, then builds its sessions: the main conversation (or the sub-agent
 * the file holds), plus sub-agents known only from inline `agent_progress` mirrors.
 */
export class ClaudeTranscript {
  private readonly streams = new Map<string, Stream>();
  private readonly mirrors = new Map<string, Mirror>();
  private readonly titles = { custom: '', ai: '', summaries: new Map<string, string>() };
  private readonly unknown = new Map<string, number>();
  private readonly spawns: Spawn[] = [];
  private readonly warnings: Warning[] = [];
  private readonly shapes = new Map<string, RequestShape>();
  private readonly blobs = new Map<string, WireMessage>();
  private order = 0;
  /** Compaction joins warned about, per stream (a stream with any is not continued, only read whole). */
  private readonly joined = new Set<string>();

  constructor(
    private readonly file: string,
    private readonly fallbackId: string,
    private readonly meta: { toolUseId?: string; description?: string } = {},
    /** Whether the sub-agent `agentId` of session `sessionId` has its own transcript file (which then wins). */
    private readonly hasOwnFile: (sessionId: string, agentId: string) => boolean = () => false,
  ) {}

  /** Takes one line; returns why it was skipped when it is a malformed request record. */
  add(value: Envelope, line: number): string | undefined {
    const order = this.order++;
    const { type } = value;
    if (!knownTypes.has(type)) this.unknown.set(type, (this.unknown.get(type) ?? 0) + 1);
    if (type.startsWith('api-request')) return this.addRequestLine(value as RequestLine, line);
    if (type === 'summary' && value.summary && value.leafUuid)
      this.titles.summaries.set(value.leafUuid, value.summary);
    if (type === 'ai-title' && value.aiTitle) this.titles.ai = value.aiTitle;
    if (type === 'custom-title' && value.customTitle) this.titles.custom = value.customTitle;
    if (type === 'progress' && value.data?.type === 'agent_progress') this.addMirror(value, line, order);
    if (typeof value.uuid !== 'string' && !conversationTypes.has(type)) return undefined;

    const stream = this.streamOf(value);
    const entry: Entry = { env: slim(value), line, order };
    if (typeof value.uuid !== 'string') stream.loose.push(entry);
    // The same uuid twice (a rewritten line, copied history): the first one stands.
    else if (!stream.byUuid.has(value.uuid)) stream.byUuid.set(value.uuid, entry);
    // The request written just before an assistant line is the one that produced it.
    if (type === 'assistant' && stream.awaiting) {
      const id = value.message?.id ?? value.uuid;
      if (id !== undefined) stream.awaiting.responseMessageId = id;
      stream.awaiting = undefined;
    }
    this.noteSpawn(value);
    return undefined;
  }

  private addRequestLine(value: RequestLine, line: number): string | undefined {
    const taken = takeRequestLine(value, line, { shapes: this.shapes, blobs: this.blobs });
    if (taken === undefined || typeof taken === 'string') return taken;
    const stream = this.streamOf(recordEnvelope(value));
    stream.requests.push(taken);
    stream.awaiting = taken;
    return undefined;
  }

  /** Builds the sessions; `nextLine` (the number of the line after the last one read) lets a later read continue. */
  finish(nextLine?: number): ClaudeParseResult {
    const sessions: ParsedSession[] = [];
    const notes: string[] = [];
    let resume: Resume | undefined;
    for (const [type, count] of this.unknown) {
      notes.push(`${count} line(s) of unknown type '${type}' kept out of the conversation`);
    }
    for (const stream of this.streams.values()) {
      const built = this.buildStream(stream);
      if (!built) continue;
      sessions.push(built.session);
      // After the session: the store finds the prefix a branch shares with it only once the session is saved.
      const branches = this.buildBranches(stream, built.session, built.ordered);
      sessions.push(...branches);
      if (nextLine !== undefined && this.streams.size === 1)
        resume = resumeOf({
          stream,
          session: built.session,
          ordered: built.ordered,
          readWhole: [
            ...(branches.length > 0 ? ['it has abandoned branches'] : []),
            ...(this.joined.has(stream.sourceId) ? ['a compaction lost its logical parent'] : []),
            ...(this.titles.summaries.size > 0 ? ["it has old-style 'summary' lines"] : []),
          ],
          titles: { custom: this.titles.custom, ai: this.titles.ai, described: this.meta.description },
          order: this.order,
          nextLine,
          shapes: this.shapes,
          blobs: this.blobs,
        });
    }
    for (const [sourceId, mirror] of this.mirrors) {
      // Rebuilding a mirror that its own file will replace is wasted work (and would be counted twice).
      if (this.streams.has(sourceId) || mirror.ownFile) continue;
      const entries = dedupe(mirror.entries);
      const messages = convert(entries, this.file, new Map());
      if (messages.length === 0) continue;
      sessions.push(
        finishSession(
          {
            sourceId,
            kind: 'subagent',
            parentId: sessionId(agent, mirror.parentSourceId),
            ...(mirror.toolCallId ? { parentToolCallId: mirror.toolCallId } : {}),
          },
          entries,
          messages,
          'mirror',
        ),
      );
    }
    return { sessions, spawns: this.spawns, notes, warnings: this.warnings, ...(resume ? { resume } : {}) };
  }

  private streamOf(value: Envelope): Stream {
    const main = value.sessionId ?? this.fallbackId;
    const sub = value.isSidechain === true && typeof value.agentId === 'string';
    const sourceId = streamId(value, this.fallbackId);
    let stream = this.streams.get(sourceId);
    if (!stream) {
      stream = {
        sourceId,
        // Auto-compaction runs as a pseudo sub-agent `acompact-*`: it is the call that wrote a summary.
        kind: sub ? (value.agentId?.startsWith('acompact') ? 'compaction' : 'subagent') : 'main',
        byUuid: new Map(),
        loose: [],
        requests: [],
      };
      if (sub) stream.parentSourceId = main;
      this.streams.set(sourceId, stream);
    }
    return stream;
  }

  private addMirror(value: Envelope, line: number, order: number): void {
    const data = value.data as { agentId?: string; message?: Envelope };
    const inner = data.message;
    if (!data.agentId || !inner || typeof inner !== 'object' || typeof inner.type !== 'string') return;
    const parentSourceId = value.sessionId ?? this.fallbackId;
    const sourceId = `${parentSourceId}/agent-${data.agentId}`;
    let mirror = this.mirrors.get(sourceId);
    if (!mirror) {
      mirror = { parentSourceId, entries: [], ownFile: this.hasOwnFile(parentSourceId, data.agentId) };
      if (value.parentToolUseID) {
        mirror.toolCallId = value.parentToolUseID;
        this.spawns.push({ parentSourceId, childSourceId: sourceId, toolCallId: value.parentToolUseID });
      }
      this.mirrors.set(sourceId, mirror);
    }
    if (!mirror.ownFile) mirror.entries.push({ env: inner, line, order });
  }

  /** The Task/Agent tool result names the sub-agent it started: remember which call spawned which child. */
  private noteSpawn(value: Envelope): void {
    this.spawns.push(...spawnsOf(value, value.sessionId ?? this.fallbackId));
  }

  private buildStream(stream: Stream): { session: ParsedSession; ordered: Entry[] } | undefined {
    const joins: Join[] = [];
    const ordered = reanchorPreserved(orderChain(stream, joins));
    if (joins.length > 0) this.joined.add(stream.sourceId);
    for (const { boundary, parent, at } of joins)
      this.warnings.push({
        file: this.file,
        line: boundary,
        message: at
          ? `compact_boundary: its logical parent ${parent ?? '(none)'} is not in the file; the history before it is taken to end at line ${at}, the last conversation line before the boundary`
          : `compact_boundary: its logical parent ${parent ?? '(none)'} is not in the file, and no conversation line comes before it`,
      });
    const messages = convert(ordered, this.file, preservedMap(ordered));
    if (messages.length === 0) return undefined;
    const base: Pick<Session, 'sourceId' | 'kind' | 'parentId' | 'parentToolCallId' | 'title'> = {
      sourceId: stream.sourceId,
      kind: stream.kind,
    };
    if (stream.parentSourceId) base.parentId = sessionId(agent, stream.parentSourceId);
    if (stream.kind !== 'main' && this.meta.toolUseId) base.parentToolCallId = this.meta.toolUseId;
    // An old-style `summary` line titles the conversation whose leaf it names; take the one nearest the end.
    let summary: string | undefined;
    for (let i = ordered.length - 1; i >= 0 && summary === undefined; i--) {
      const uuid = ordered[i]?.env.uuid;
      if (uuid) summary = this.titles.summaries.get(uuid);
    }
    const title =
      this.titles.custom ||
      this.titles.ai ||
      summary ||
      (stream.kind !== 'main' ? this.meta.description : undefined);
    if (title) base.title = title;
    const session = finishSession(base, ordered, messages, 'file');
    if (stream.requests.length > 0) session.requests = this.requestLog(stream, ordered);
    return { session, ordered };
  }

  /**
   * Each abandoned branch of the stream as a session of its own (kind `branch`, parent = the session): its whole
   * chain, so the store keeps the prefix it shares with the session once (`continues`).
   */
  private buildBranches(stream: Stream, main: ParsedSession, kept: Entry[]): ParsedSession[] {
    if (stream.kind !== 'main' || stream.byUuid.size === 0) return [];
    const sessions: ParsedSession[] = [];
    const keptUuids = new Set(kept.map((entry) => entry.env.uuid));
    for (const ordered of abandonedBranches(stream, kept)) {
      const messages = convert(ordered, this.file, preservedMap(ordered));
      const leaf = ordered.filter((entry) => entry.env.uuid !== undefined).at(-1);
      const first = messages.find(
        (m) => m.role === 'user' && !m.injected && m.nativeId !== undefined && !keptUuids.has(m.nativeId),
      );
      const text = first?.parts.find((p) => p.type === 'text');
      const base: Pick<Session, 'sourceId' | 'kind' | 'parentId' | 'title'> = {
        sourceId: `${stream.sourceId}/branch-${leaf?.env.uuid ?? sessions.length}`,
        kind: 'branch',
        parentId: main.id,
        title: `branch: ${text && text.type === 'text' ? text.text.trim().split('\n')[0]?.slice(0, 72) : (main.title ?? '')}`,
      };
      const session = finishSession(base, ordered, messages, 'file');
      if (stream.requests.length > 0) session.requests = this.requestLog(stream, ordered);
      sessions.push(session);
    }
    return sessions;
  }

  private requestLog(stream: Stream, ordered: Entry[]): NonNullable<ParsedSession['requests']> {
    // An assistant message's nativeId is the uuid of its first line in conversation order (see convert).
    const nativeIds = new Map<string, string>();
    for (const { env } of ordered) {
      if (env.type !== 'assistant' || !env.uuid) continue;
      const id = env.message?.id ?? env.uuid;
      if (!nativeIds.has(id)) nativeIds.set(id, env.uuid);
    }
    const lines = [...stream.byUuid.values(), ...stream.loose];
    return buildRequestLog(stream.requests, lines, this.shapes, this.blobs, (id) => nativeIds.get(id));
  }
}

/**
 * What an entry keeps of its line until the file is built. Progress lines can hold megabytes of command output;
 * only their place in the chain matters here. A user line's `toolUseResult` (the tool's output again, for an
 * edit the whole file) is read once, by noteSpawn, before the entry is kept: dropped here, it dies young instead
 * of being copied by every scavenge until the file is done (issue 21: that copying was the largest GC cost).
 */
export function slim(value: Envelope): Envelope {
  if (value.type === 'user' && value.toolUseResult !== undefined) {
    const { toolUseResult: _dropped, ...kept } = value;
    return kept;
  }
  if (value.type !== 'progress') return value;
  const kept: Envelope = { type: value.type };
  if (value.uuid !== undefined) kept.uuid = value.uuid;
  if (value.parentUuid !== undefined) kept.parentUuid = value.parentUuid;
  if (value.timestamp !== undefined) kept.timestamp = value.timestamp;
  if (value.sessionId !== undefined) kept.sessionId = value.sessionId;
  if (value.cwd !== undefined) kept.cwd = value.cwd;
  return kept;
}

function dedupe(entries: Entry[]): Entry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    const uuid = entry.env.uuid;
    if (!uuid) return true;
    if (seen.has(uuid)) return false;
    seen.add(uuid);
    return true;
  });
}

/**
 * Conversation order from the uuid/parentUuid tree: the branch that reaches the latest leaf (what a rewind
 * continued), walked from its root, with the siblings that parallel tool calls leave beside it.
 */
/** A compaction boundary whose logical parent was missing, and the line the history before it was joined at. */
interface Join {
  boundary: number;
  parent: string | null | undefined;
  at?: number;
}

function childrenOf(byUuid: Map<string, Entry>): Map<string, Entry[]> {
  const children = new Map<string, Entry[]>();
  for (const entry of byUuid.values()) {
    const parent = entry.env.parentUuid;
    if (typeof parent !== 'string') continue;
    const list = children.get(parent);
    if (list) list.push(entry);
    else children.set(parent, [entry]);
  }
  return children;
}

/** The entries no other entry continues and the kept conversation does not hold, latest last. */
function leavesOf(stream: Stream, kept: Set<string | undefined>): Entry[] {
  const parents = new Set<string>();
  for (const entry of stream.byUuid.values())
    if (typeof entry.env.parentUuid === 'string') parents.add(entry.env.parentUuid);
  return [...stream.byUuid.values()]
    .filter((entry) => !parents.has(entry.env.uuid as string) && !kept.has(entry.env.uuid))
    .sort((a, b) => (later(a, b) ? 1 : later(b, a) ? -1 : 0));
}

/**
 * The abandoned branches of a rewind: leaves whose chain holds a model response that the kept conversation (and
 * every branch found before) does not. Leaves that only add lines of no turn (hook progress, a prompt edited and
 * never answered) are no branch.
 */
function abandonedBranches(stream: Stream, kept: Entry[]): Entry[][] {
  const seen = new Set<string>();
  for (const entry of kept)
    if (entry.env.type === 'assistant') seen.add(entry.env.message?.id ?? (entry.env.uuid as string));
  const keptUuids = new Set(kept.map((entry) => entry.env.uuid));
  const branches: Entry[][] = [];
  const leaves = leavesOf(stream, keptUuids);
  const fresh = (entry: Entry): boolean =>
    entry.env.type === 'assistant' &&
    !keptUuids.has(entry.env.uuid) &&
    !seen.has(entry.env.message?.id ?? (entry.env.uuid as string)) &&
    entry.env.message?.model !== '<synthetic>' &&
    entry.env.isApiErrorMessage !== true;
  for (const leaf of leaves) {
    // Most leaves are a hook's progress line beside the kept chain: walking up to the kept chain finds no
    // response of its own, and the leaf is passed over without building its chain.
    let unseen = false;
    for (let at: Entry | undefined = leaf; at && !keptUuids.has(at.env.uuid); ) {
      if (fresh(at)) {
        unseen = true;
        break;
      }
      const parent: string | null | undefined = at.env.parentUuid;
      at = typeof parent === 'string' ? stream.byUuid.get(parent) : undefined;
    }
    if (!unseen) continue;
    const ordered = reanchorPreserved(orderChain(stream, [], leaf));
    const own = ordered.filter(fresh);
    if (own.length === 0) continue;
    for (const entry of own) seen.add(entry.env.message?.id ?? (entry.env.uuid as string));
    branches.push(ordered);
  }
  return branches;
}

function orderChain(stream: Stream, joins: Join[] = [], chosen?: Entry): Entry[] {
  const { byUuid } = stream;
  if (byUuid.size === 0) return stream.loose;
  const children = childrenOf(byUuid);

  const leaf = chosen ?? latestLeaf(byUuid, children);

  const path: Entry[] = [];
  const onPath = new Set<string>();
  for (let current = leaf; current && !onPath.has(current.env.uuid as string); ) {
    path.push(current);
    onPath.add(current.env.uuid as string);
    current = predecessor(current, byUuid, onPath) ?? lostHistory(current, byUuid, onPath, joins);
  }
  path.reverse();

  // Parallel tool calls: later blocks of the same API response and their results can hang off the path as
  // siblings instead of continuing it. They belong to the conversation; a rewound branch does not.
  const responses = new Set<string>();
  for (const entry of path)
    if (entry.env.type === 'assistant' && entry.env.message?.id) responses.add(entry.env.message.id);
  const extra = new Set<string>();
  const calls = new Set<string>();
  for (const entry of byUuid.values()) {
    const id = entry.env.message?.id;
    if (entry.env.type !== 'assistant' || !id || !responses.has(id)) continue;
    if (!onPath.has(entry.env.uuid as string)) extra.add(entry.env.uuid as string);
    for (const block of blocks(entry.env))
      if (block.type === 'tool_use' && typeof block.id === 'string') calls.add(block.id);
  }
  for (const entry of byUuid.values()) {
    if (entry.env.type !== 'user' || onPath.has(entry.env.uuid as string)) continue;
    const content = blocks(entry.env);
    const answers = content.length > 0 && content.every((block) => block.type === 'tool_result');
    if (
      answers &&
      content.some((block) => calls.has((block as { tool_use_id?: string }).tool_use_id ?? ''))
    ) {
      extra.add(entry.env.uuid as string);
    }
  }

  const ordered: Entry[] = [...stream.loose];
  const emitted = new Set<string>();
  const visit = (uuid: string): void => {
    for (const child of children.get(uuid) ?? []) {
      const id = child.env.uuid as string;
      if (onPath.has(id) || emitted.has(id)) continue;
      emitted.add(id);
      if (extra.has(id)) ordered.push(child);
      visit(id);
    }
  };
  for (const entry of path) {
    ordered.push(entry);
    visit(entry.env.uuid as string);
  }
  return ordered;
}

/** The source id of the stream a line belongs to: its session, or a sub-agent of it for a sidechain line. */
export function streamId(value: Envelope, fallbackId: string): string {
  const main = value.sessionId ?? fallbackId;
  return value.isSidechain === true && typeof value.agentId === 'string'
    ? `${main}/agent-${value.agentId}`
    : main;
}

/** The leaf the conversation is taken to end at: the latest entry no other entry continues. */
export function latestLeaf(
  byUuid: Map<string, Entry>,
  children: Map<string, Entry[]> = childrenOf(byUuid),
): Entry | undefined {
  let leaf: Entry | undefined;
  for (const entry of byUuid.values()) {
    if (children.has(entry.env.uuid as string)) continue;
    if (!leaf || later(entry, leaf)) leaf = entry;
  }
  return leaf;
}

function later(a: Entry, b: Entry): boolean {
  const ta = a.env.timestamp ?? '';
  const tb = b.env.timestamp ?? '';
  return ta === tb ? a.order > b.order : ta > tb;
}

/** Each compaction boundary's preserved messages, by the boundary's uuid. */
function preservedMap(ordered: Entry[]): Map<string, string[]> {
  const preserved = new Map<string, string[]>();
  for (const entry of ordered) {
    const uuids = preservedUuids(entry.env);
    if (uuids.length > 0 && entry.env.uuid) preserved.set(entry.env.uuid, uuids);
  }
  return preserved;
}

/** The messages a compaction kept verbatim after its summary (`compactMetadata.preservedMessages`). */
function preservedUuids(env: Envelope): string[] {
  if (env.subtype !== 'compact_boundary') return [];
  const meta = env.compactMetadata as { preservedMessages?: { uuids?: unknown } } | undefined;
  const uuids = meta?.preservedMessages?.uuids;
  return Array.isArray(uuids) ? uuids.filter((uuid): uuid is string => typeof uuid === 'string') : [];
}

/**
 * A preserved tail is re-parented under the summary in the file, but it was written before the compaction:
 * its turns saw the old history, not the summary. Put it back before the boundary; the summary lists it as
 * preserved, so contexts after the summary still show it.
 */
function reanchorPreserved(ordered: Entry[]): Entry[] {
  let result = ordered;
  for (let i = 0; i < result.length; i++) {
    // Most entries are no compaction boundary: no set is made for them.
    const uuids = preservedUuids((result[i] as Entry).env);
    if (uuids.length === 0) continue;
    const kept = new Set(uuids);
    const after = (entry: Entry, j: number) => j > i && kept.has(entry.env.uuid ?? '');
    const moved = result.filter(after);
    if (moved.length === 0) continue;
    const rest = result.filter((entry, j) => !after(entry, j));
    rest.splice(i, 0, ...moved);
    result = rest;
    i += moved.length;
  }
  return result;
}

/**
 * A compaction boundary whose logical parent is not in the file (older 2.1.3x builds name a uuid they never
 * wrote): the history before it is still the conversation's, so it continues at the last conversation line
 * written before the boundary that is not already on the path. Said in a warning, never dropped silently.
 */
function lostHistory(
  entry: Entry,
  byUuid: Map<string, Entry>,
  seen: Set<string>,
  joins: Join[],
): Entry | undefined {
  const { env } = entry;
  if (env.subtype !== 'compact_boundary' || typeof env.parentUuid === 'string') return undefined;
  // A logical parent that is in the file but already on the path (a preserved tail) ends the walk as before.
  if (typeof env.logicalParentUuid === 'string' && byUuid.has(env.logicalParentUuid)) return undefined;
  let found: Entry | undefined;
  for (const candidate of byUuid.values()) {
    if (candidate.order >= entry.order || seen.has(candidate.env.uuid as string)) continue;
    if (!conversationTypes.has(candidate.env.type)) continue;
    if (!found || candidate.order > found.order) found = candidate;
  }
  const join: Join = { boundary: entry.line, parent: env.logicalParentUuid };
  if (found) join.at = found.line;
  joins.push(join);
  return found;
}

/** The entry before this one: its parent, or across a compaction boundary the last message before it. */
function predecessor(entry: Entry, byUuid: Map<string, Entry>, seen: Set<string>): Entry | undefined {
  const { env } = entry;
  if (typeof env.parentUuid === 'string') return byUuid.get(env.parentUuid);
  if (env.subtype !== 'compact_boundary') return undefined;
  const kept = preservedUuids(env);
  // A preserved tail is re-parented under the summary, so the logical parent may already be on the path;
  // then the history continues at the last preserved message that is not.
  const candidates = [env.logicalParentUuid, ...kept.slice().reverse()];
  for (const uuid of candidates) {
    if (typeof uuid === 'string' && byUuid.has(uuid) && !seen.has(uuid)) return byUuid.get(uuid);
  }
  return undefined;
}

function blocks(env: Envelope): Block[] {
  const content = env.message?.content;
  return Array.isArray(content) ? content : [];
}

/**
 * Where a conversion picks up when it continues one that stopped (a grown file read on): the response lines may
 * still add to, the largest output count seen for it, and the command lines a meta line may expand.
 */
export interface ConvertSeed {
  responses: Map<string, Message>;
  usageSeen: Map<string, number>;
  commands: Set<string>;
}

/** Build messages from entries in conversation order: one per API response, tool results apart. */
export function convert(
  entries: Entry[],
  file: string,
  preservedBy: Map<string, string[]>,
  seed?: ConvertSeed,
): Message[] {
  const messages: Message[] = [];
  const responses = seed?.responses ?? new Map<string, Message>();
  const usageSeen = seed?.usageSeen ?? new Map<string, number>();
  const nativeOf = new Map<string, string>();
  /** User lines that invoke a slash command (`<command-name>…`): a meta line right after one is its prompt. */
  const commands = seed?.commands ?? new Set<string>();
  let boundary: string | undefined;

  for (const { env, line } of entries) {
    if (env.type === 'system' && env.subtype === 'compact_boundary') boundary = env.uuid;
    const source = { file, line };
    if (env.type === 'assistant') {
      const api = env.message ?? {};
      const id = api.id ?? env.uuid ?? `line-${line}`;
      const parts = assistantParts(blocks(env));
      let message = responses.get(id);
      if (!message) {
        message = { role: 'assistant', parts: [], source };
        if (env.uuid) message.nativeId = env.uuid;
        if (api.model) message.model = api.model;
        if (env.timestamp) message.timestamp = env.timestamp;
        if (api.model === '<synthetic>' || env.isApiErrorMessage) message.injected = true;
        responses.set(id, message);
        messages.push(message);
      } else if ('line' in message.source && line > (message.source.endLine ?? message.source.line)) {
        message.source.endLine = line;
      }
      for (const part of parts) {
        // A block repeated on two lines of one response (a rewritten line) is one block.
        if (
          part.type === 'tool_call' &&
          message.parts.some((p) => p.type === 'tool_call' && p.id === part.id)
        )
          continue;
        message.parts.push(part);
      }
      // Streaming writes a usage snapshot per line; the largest output count is the final one.
      const output = api.usage?.output_tokens ?? -1;
      if (api.usage && output >= (usageSeen.get(id) ?? -1)) {
        usageSeen.set(id, output);
        message.usage = usage(api.usage);
      }
      if (env.uuid && message.nativeId) nativeOf.set(env.uuid, message.nativeId);
      continue;
    }
    let made: Message[] = [];
    if (env.type === 'user') {
      // A prompt command or skill (`/review`, `/plugin:skill args`) is logged as its invocation and then, as
      // a meta line, the prompt it expands to, arguments filled in. The model acts on that prompt: it is the
      // user's request, not harness text (the invocation itself, and local commands' output, still are).
      const expansion =
        env.isMeta === true &&
        env.parentUuid !== undefined &&
        env.parentUuid !== null &&
        commands.has(env.parentUuid);
      made = userMessages(env, source, expansion);
      if (env.uuid && invokesCommand(env)) commands.add(env.uuid);
    } else if (env.type === 'attachment' && env.attachment?.type === 'queued_command') {
      // A prompt typed while the model was working: a real user message, delivered mid-turn.
      const prompt = env.attachment.prompt;
      if (typeof prompt === 'string' && prompt)
        made = [{ role: 'user', parts: [{ type: 'text', text: prompt }], source }];
    } else if (env.type === 'attachment') {
      const rendered = renderedMessage(env, source);
      if (rendered) made = [rendered];
    }
    for (const [index, message] of made.entries()) {
      if (env.uuid) message.nativeId = index === 0 ? env.uuid : `${env.uuid}#${index}`;
      if (env.timestamp) message.timestamp = env.timestamp;
      if (env.isCompactSummary) {
        message.compaction = true;
        message.injected = true;
        const kept = boundary ? preservedBy.get(boundary) : undefined;
        if (kept) {
          message.preserved = kept
            .map((uuid) => nativeOf.get(uuid))
            .filter((id): id is string => id !== undefined);
        }
      }
      messages.push(message);
    }
    if (env.uuid && made[0]?.nativeId) nativeOf.set(env.uuid, made[0].nativeId);
  }
  return messages;
}

/**
 * An attachment Claude Code rendered into the request (2.1.3xx: the environment, model and date system messages,
 * the agent listing, gitStatus and attribution reminders, file re-reads after a compaction, the TodoWrite nudge):
 * harness text, where the chain puts it. A system-role text is sent without its `<system-reminder>` wrapper.
 */
function renderedMessage(env: Envelope, source: { file: string; line: number }): Message | undefined {
  if (!Array.isArray(env.rendered)) return undefined;
  const role = env.renderedRole === 'system' ? 'system' : 'user';
  const parts: Part[] = [];
  for (const piece of env.rendered) {
    if (typeof piece?.content !== 'string') continue;
    const text =
      role === 'system'
        ? piece.content.replace(/^<system-reminder>\n([\s\S]*)\n<\/system-reminder>$/, '$1')
        : piece.content;
    parts.push({ type: 'text', text });
  }
  if (parts.length === 0) return undefined;
  const message: Message = { role, parts, injected: true, source };
  if (env.attachment?.type) message.attachment = env.attachment.type;
  return message;
}

function assistantParts(content: Block[]): Part[] {
  const parts: Part[] = [];
  for (const block of content) {
    const b = block as Record<string, unknown>;
    switch (block.type) {
      case 'text':
        if (typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
        break;
      case 'thinking': {
        const part: Part = { type: 'reasoning', text: typeof b.thinking === 'string' ? b.thinking : '' };
        if (typeof b.signature === 'string') part.signature = b.signature;
        parts.push(part);
        break;
      }
      case 'redacted_thinking':
        parts.push({ type: 'reasoning', text: '', redacted: true, signature: String(b.data ?? '') });
        break;
      case 'tool_use':
      case 'server_tool_use':
        parts.push({
          type: 'tool_call',
          id: String(b.id ?? ''),
          name: String(b.name ?? ''),
          input: b.input ?? {},
        });
        break;
      default:
        // Results of server-side tools (web search) come back inside the assistant message itself.
        if (block.type.endsWith('_tool_result') && typeof b.tool_use_id === 'string') {
          parts.push({
            type: 'tool_result',
            callId: b.tool_use_id,
            output: JSON.stringify(b.content ?? null),
            isError: false,
          });
        }
    }
  }
  return parts;
}

/** The sub-agents a user line's Task/Agent tool results name as started by their call. */
export function spawnsOf(value: Envelope, main: string): Spawn[] {
  if (value.type !== 'user' || !Array.isArray(value.message?.content)) return [];
  const spawns: Spawn[] = [];
  const structured = (value.toolUseResult as { agentId?: unknown } | undefined)?.agentId;
  for (const block of value.message.content) {
    if (block.type !== 'tool_result') continue;
    const callId = (block as { tool_use_id?: string }).tool_use_id;
    if (!callId) continue;
    let agentId = typeof structured === 'string' ? structured : undefined;
    if (!agentId) {
      const text = resultText((block as { content?: unknown }).content);
      // The substring test first: the regex over every tool output cost more than the rest of noteSpawn.
      if (text.includes('agentId: ')) agentId = /\bagentId: ([\w-]+)/.exec(text)?.[1];
    }
    if (agentId)
      spawns.push({ parentSourceId: main, childSourceId: `${main}/agent-${agentId}`, toolCallId: callId });
  }
  return spawns;
}

/** A user line whose text is a slash-command invocation. */
export function invokesCommand(env: Envelope): boolean {
  const content = env.message?.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((block) => ((block as { text?: unknown }).text as string) ?? '').join('')
        : '';
  return /^\s*<(command-message|command-name)>/.test(text);
}

function userMessages(env: Envelope, source: { file: string; line: number }, expansion = false): Message[] {
  const content = env.message?.content;
  const wholeInjected = (env.isMeta === true && !expansion) || env.isCompactSummary === true;
  if (typeof content === 'string') {
    return [
      {
        role: 'user',
        parts: [{ type: 'text', text: content }],
        injected: wholeInjected || isInjectedText(content),
        source,
      },
    ];
  }
  if (!Array.isArray(content)) return [];
  const messages: Message[] = [];
  const results: Part[] = [];
  let current: Message | undefined;
  for (const block of content) {
    const b = block as Record<string, unknown>;
    if (block.type === 'tool_result') {
      results.push({
        type: 'tool_result',
        callId: String(b.tool_use_id ?? ''),
        output: toolResultOutput(b.content),
        isError: b.is_error === true,
      });
      continue;
    }
    let part: Part | undefined;
    let injected = wholeInjected;
    if (block.type === 'text' && typeof b.text === 'string') {
      part = { type: 'text', text: b.text };
      injected ||= isInjectedText(b.text);
    } else if (block.type === 'image') part = image(b);
    else if (block.type === 'document') part = { type: 'text', text: '[document]' };
    if (!part) continue;
    // Text the harness prepends to a real prompt (IDE selections, reminders) becomes its own injected message.
    if (!current || (current.injected ?? false) !== injected) {
      current = { role: 'user', parts: [], source };
      if (injected) current.injected = true;
      messages.push(current);
    }
    current.parts.push(part);
  }
  if (results.length > 0) messages.unshift({ role: 'tool', parts: results, source });
  return messages;
}

function image(block: Record<string, unknown>): Part | undefined {
  const source = block.source as { media_type?: string; data?: string; url?: string } | undefined;
  if (!source) return undefined;
  return { type: 'image', mediaType: source.media_type ?? 'image/*', data: source.data ?? source.url ?? '' };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (typeof block?.text === 'string' ? block.text : '')).join('\n');
}

function usage(raw: ApiUsage): Usage {
  const out: Usage = {};
  if (raw.input_tokens !== undefined) out.inputTokens = raw.input_tokens;
  if (raw.output_tokens !== undefined) out.outputTokens = raw.output_tokens;
  if (raw.cache_read_input_tokens !== undefined) out.cacheReadTokens = raw.cache_read_input_tokens;
  if (raw.cache_creation_input_tokens !== undefined) out.cacheWriteTokens = raw.cache_creation_input_tokens;
  return out;
}

export function finishSession(
  base: Pick<Session, 'sourceId' | 'kind'> & Partial<Session>,
  entries: Entry[],
  messages: Message[],
  origin: ParsedSession['origin'],
): ParsedSession {
  nameResults(messages);
  markUnanswered(messages);
  const session: ParsedSession = { ...base, id: sessionId(agent, base.sourceId), agent, messages, origin };
  spanOf(session, entries);
  if (!session.title) {
    const title = firstTitle(messages);
    if (title !== undefined) session.title = title;
  }
  return session;
}

/** Takes the first cwd and version, and widens the session's time span, from the entries in conversation order. */
export function spanOf(
  session: Pick<Session, 'cwd' | 'version' | 'startedAt' | 'endedAt'>,
  entries: readonly Entry[],
): void {
  for (const { env } of entries) {
    if (!session.cwd && env.cwd) session.cwd = env.cwd;
    if (!session.version && env.version) session.version = env.version;
    if (env.timestamp) {
      if (!session.startedAt || env.timestamp < session.startedAt) session.startedAt = env.timestamp;
      if (!session.endedAt || env.timestamp > session.endedAt) session.endedAt = env.timestamp;
    }
  }
}

/** The title a session without a better one takes: the first line of its first typed prompt. */
export function firstTitle(messages: readonly Message[]): string | undefined {
  const first = messages.find(
    (m) => m.role === 'user' && !m.injected && m.parts.some((p) => p.type === 'text'),
  );
  const text = first?.parts.find((p) => p.type === 'text');
  return text && text.type === 'text' ? text.text.trim().split('\n')[0]?.slice(0, 80) : undefined;
}
