// The on-disk shapes of opencode sessions, as far as this adapter reads them. opencode is open source and
// typed: see README.md for the source files each shape comes from. Only `unknown` comes in; the guards below
// decide what is usable.

import type { SourceRef } from '../../model/session.js';

/** Session.Info (JSON tree, export) and the `session` / `session_v2` table rows, as one shape. */
export interface SessionInfo {
  id: string;
  parentID?: string;
  directory?: string;
  title?: string;
  version?: string;
  time?: { created?: number; updated?: number };
  /** Messages from `messageID` on are undone (still stored until the next prompt deletes them). */
  revert?: { messageID?: string; partID?: string };
}

/** MessageV2.Info without its id (V1 `message.data`, tree and export files carry it, the table does not). */
export interface MessageInfo {
  role?: string;
  parentID?: string;
  time?: { created?: number; completed?: number };
  modelID?: string;
  providerID?: string;
  agent?: string;
  mode?: string;
  /** On an assistant message: it is a compaction summary. */
  summary?: unknown;
  finish?: string;
  error?: { name?: string; data?: { message?: string }; message?: string };
  tokens?: Tokens;
}

export interface Tokens {
  input?: number;
  output?: number;
  reasoning?: number;
  cache?: { read?: number; write?: number };
}

export type ToolStatus = 'pending' | 'running' | 'completed' | 'error';

export interface ToolState {
  status?: ToolStatus | string;
  input?: unknown;
  output?: string;
  error?: string;
  /** What opencode's UI shows for the call (e.g. a path); never sent to the model. */
  title?: string;
  metadata?: Record<string, unknown>;
  time?: { start?: number; end?: number; compacted?: number };
  attachments?: { mime?: string; url?: string; filename?: string }[];
}

/** MessageV2.Part without its ids; `type` says which fields are there. */
export interface PartData {
  type?: string;
  text?: string;
  synthetic?: boolean;
  ignored?: boolean;
  metadata?: Record<string, unknown>;
  // tool
  callID?: string;
  tool?: string;
  state?: ToolState;
  // step-finish
  reason?: string;
  tokens?: Tokens;
  // file
  mime?: string;
  url?: string;
  filename?: string;
  // compaction
  auto?: boolean;
  tail_start_id?: string;
}

/** A message with its parts, ids re-attached, in opencode's order, and where it was read. */
export interface RawMessage {
  id: string;
  info: MessageInfo;
  parts: (PartData & { id: string })[];
  source: SourceRef;
}

/** Part types opencode writes that are not conversation (or are rebuilt from other parts). */
export const knownPartTypes = new Set([
  'text',
  'reasoning',
  'tool',
  'file',
  'step-start',
  'step-finish',
  'snapshot',
  'patch',
  'agent',
  'subtask',
  'retry',
  'compaction',
]);

/** What opencode sends for a tool output it pruned (`state.time.compacted`); the stored output is kept. */
export const clearedOutput = '[Old tool result content cleared]';
/** What opencode sends in place of a user message's `compaction` part. */
export const compactionPrompt = 'What did we do so far?';
/** What opencode sends in place of a user message's `subtask` part. */
export const subtaskPrompt = 'The following tool was executed by the user';

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** Session.Info from a tree file or an export: needs a string id. */
export function sessionInfo(value: unknown): SessionInfo | undefined {
  if (!isObject(value) || typeof value.id !== 'string' || value.id === '') return undefined;
  const info: SessionInfo = { id: value.id };
  const parent = text(value.parentID);
  if (parent) info.parentID = parent;
  const directory = text(value.directory);
  if (directory) info.directory = directory;
  const title = text(value.title);
  if (title) info.title = title;
  const version = text(value.version);
  if (version) info.version = version;
  if (isObject(value.time)) {
    const created = number(value.time.created);
    const updated = number(value.time.updated);
    info.time = {};
    if (created !== undefined) info.time.created = created;
    if (updated !== undefined) info.time.updated = updated;
  }
  const revert = revertOf(value.revert);
  if (revert) info.revert = revert;
  return info;
}

export function revertOf(value: unknown): SessionInfo['revert'] | undefined {
  const parsed = typeof value === 'string' ? parseJson(value) : value;
  if (!isObject(parsed) || typeof parsed.messageID !== 'string') return undefined;
  const revert: NonNullable<SessionInfo['revert']> = { messageID: parsed.messageID };
  if (typeof parsed.partID === 'string') revert.partID = parsed.partID;
  return revert;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A message's info: an object with a role opencode writes. */
export function messageInfo(value: unknown): MessageInfo | undefined {
  if (!isObject(value)) return undefined;
  if (value.role !== 'user' && value.role !== 'assistant') return undefined;
  return value as MessageInfo;
}

/** A part: an object with a string type. */
export function partData(value: unknown): PartData | undefined {
  if (!isObject(value) || typeof value.type !== 'string') return undefined;
  return value as PartData;
}

/** opencode ids sort by creation time within a kind; ties in time_created are broken by id, as opencode does. */
export function byTimeThenId(a: RawMessage, b: RawMessage): number {
  const ta = a.info.time?.created ?? 0;
  const tb = b.info.time?.created ?? 0;
  if (ta !== tb) return ta - tb;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
