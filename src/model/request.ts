// The request a model turn was sent, as the agent recorded it (Claude Code 2.1.3xx writes delta-encoded request
// records into its transcript). Everything here is in the agent's own wire form (Anthropic Messages API), not in
// our normalized Message shape: the point is to be able to send the identical request again. Pure: no I/O.

import { hash } from 'node:crypto';
import type { OutputBlock } from './session.js';

/** One content block as the API takes it (text, thinking, tool_use, tool_result, image, …), kept verbatim. */
export type WireBlock = { type: string; [key: string]: unknown };

/** A message of the request: `role` and `content` as sent, plus whatever else the agent put on it. */
export interface WireMessage {
  role: 'user' | 'assistant' | 'system';
  content: string | WireBlock[];
  [key: string]: unknown;
}

/** The part of a request that rarely changes: the system blocks and the tool definitions. */
export interface RequestShape {
  system: WireBlock[];
  tools: unknown[];
}

/** Where a cache breakpoint sat: a path into the request (`["messages", 3, "content", 0]`) and its value. */
export interface CacheMark {
  path: (string | number)[];
  value: unknown;
}

/**
 * One recorded request, delta-encoded as the agent wrote it: the first `keep` messages of request `base`, then
 * the messages whose hashes are in `tail`.
 */
export interface RequestRecord {
  /** The agent's id of the record (`api-request.id`). */
  id: string;
  /** `nativeId` of the response message this request produced; absent when no model turn followed it. */
  responseId?: string;
  shapeHash: string;
  /** model, betas, max_tokens, thinking, context_management, output_config, … as recorded. */
  params: Record<string, unknown>;
  base?: string;
  keep: number;
  tail: string[];
  cacheControl: CacheMark[];
  digest?: string;
  /** Where the record was read (a file line), for messages pointing back at the log. */
  line?: number;
}

/** Where a message of a rebuilt request came from. */
export type MessageOrigin = 'blob' | 'transcript';

/** A session's recorded requests: the records in order, and what their hashes resolve to. */
export interface RequestLog {
  records: RequestRecord[];
  shapes: Record<string, RequestShape>;
  /** Every message a record's tail names that could be found, by its hash. */
  messages: Record<string, { message: WireMessage; origin: MessageOrigin }>;
}

/** Who wrote a message of the request. */
export type Author = 'user' | 'harness' | 'model' | 'tools';

export interface RequestMessage {
  role: WireMessage['role'];
  content: WireMessage['content'];
  /** Extra members the agent put on the message (e.g. `output_config` on a system message). */
  extra?: Record<string, unknown>;
  /** typed by the user, written by the harness (`injected`), by the model, or tool results. */
  by: Author;
  /** In a user message that mixes the two: the indexes of its blocks the harness wrote. */
  injectedBlocks?: number[];
  origin: MessageOrigin;
  /** The tail hash this message was found by. */
  hash: string;
}

/** A model turn's request rebuilt from the records: what the model received, ready to send again. */
export interface TurnRequest {
  recordId: string;
  responseId?: string;
  /** `exact`: every message was found; `partial`: `missing` lists the tail hashes that resolve to nothing. */
  fidelity: 'exact' | 'partial';
  /**
   * The system blocks as recorded. Claude Code sends one more block first, its billing header
   * (`x-anthropic-billing-header: cc_version=…`), which it does not record.
   */
  system: WireBlock[];
  tools: unknown[];
  messages: RequestMessage[];
  params: Record<string, unknown>;
  cacheControl: CacheMark[];
  missing: string[];
  digest?: string;
}

/**
 * Claude Code's tail hash of a message: sha256 of its canonical JSON (keys sorted, compact, no `cache_control`,
 * string content counted as one text block). Built in one pass, without copying the message: a transcript with
 * request records has every conversation message hashed.
 */
export function messageHash(message: WireMessage): string {
  const content =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  // the one-shot hash: a Hash object per message cost more than hashing most of them
  return hash('sha256', canonical({ ...message, content }), 'hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item = value[i];
      out += item === undefined ? 'null' : canonical(item);
    }
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    let out = '{';
    let first = true;
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member === undefined || key === 'cache_control') continue;
      // Keys are nearly always plain words, which JSON.stringify would only put in quotes.
      out += `${first ? '' : ','}${plainKey.test(key) ? `"${key}"` : JSON.stringify(key)}:${canonical(member)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const plainKey = /^[\w$-]*$/;

/** Text the harness writes into a user message: reminders, notifications, command wrappers, compaction summaries. */
const harnessText =
  /^\s*(<(system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|task-notification|teammate-message|user-prompt-submit-hook|ide_opened_file|ide_selection)>|\[Request interrupted by user|This session is being continued from a previous conversation)/;

/**
 * Whether a user text is the harness's and not the person's (a reminder, a notification, an interruption note),
 * so not a prompt to learn from. A compaction summary is the harness's too but stands for the history: not this.
 */
export function isHarnessText(text: string): boolean {
  return (
    harnessText.test(text) && !/^\s*This session is being continued from a previous conversation/.test(text)
  );
}

/** Who wrote the message, and which blocks of a user message the harness added. */
export function authorOf(message: WireMessage): { by: Author; injectedBlocks?: number[] } {
  if (message.role === 'assistant') return { by: 'model' };
  if (message.role === 'system') return { by: 'harness' };
  if (typeof message.content === 'string')
    return { by: harnessText.test(message.content) ? 'harness' : 'user' };
  const injected: number[] = [];
  let typed = false;
  let results = false;
  message.content.forEach((block, index) => {
    if (block.type === 'tool_result') results = true;
    else if (block.type === 'text' && typeof block.text === 'string' && harnessText.test(block.text))
      injected.push(index);
    else typed = true;
  });
  const by: Author = typed ? 'user' : results ? 'tools' : 'harness';
  return by !== 'harness' && injected.length > 0 ? { by, injectedBlocks: injected } : { by };
}

/**
 * Rebuilds each record's message list: the first `keep` messages of its base (the record named `base`, else
 * none), then its tail resolved through `log.messages`. Yields one request per record, in record order.
 */
export function* resolveRequests(log: RequestLog): Generator<TurnRequest> {
  const built = new Map<string, { hashes: string[] }>();
  for (const record of log.records) {
    const base = record.base !== undefined ? built.get(record.base) : undefined;
    const hashes = [...(base?.hashes.slice(0, record.keep) ?? []), ...record.tail];
    built.set(record.id, { hashes });
    const shape = log.shapes[record.shapeHash];
    const missing: string[] = [];
    // A base that was not recorded leaves `keep` messages unknown: each counts as missing.
    if (record.keep > 0 && (base === undefined || base.hashes.length < record.keep))
      for (let i = base?.hashes.length ?? 0; i < record.keep; i++)
        missing.push(`base:${record.base ?? '?'}#${i}`);
    const messages: RequestMessage[] = [];
    for (const hash of hashes) {
      const found = log.messages[hash];
      if (!found) {
        missing.push(hash);
        continue;
      }
      messages.push(requestMessage(found.message, found.origin, hash));
    }
    if (!shape) missing.push(`shape:${record.shapeHash}`);
    const request: TurnRequest = {
      recordId: record.id,
      fidelity: missing.length === 0 ? 'exact' : 'partial',
      system: shape?.system ?? [],
      tools: shape?.tools ?? [],
      messages,
      params: record.params,
      cacheControl: record.cacheControl,
      missing,
    };
    if (record.responseId !== undefined) request.responseId = record.responseId;
    if (record.digest !== undefined) request.digest = record.digest;
    yield request;
  }
}

function requestMessage(message: WireMessage, origin: MessageOrigin, hash: string): RequestMessage {
  const { role, content, ...extra } = message;
  const out: RequestMessage = { role, content, ...authorOf(message), origin, hash };
  if (Object.keys(extra).length > 0) out.extra = extra;
  return out;
}

/**
 * The request body as the agent sent it (and the betas of its header), but for what it does not record (Claude Code's billing-header system
 * block, `metadata`, `stream`): params, system, tools and messages, with the cache breakpoints put back where
 * the record says (a message whose content was a string is sent as blocks when a breakpoint sits in it).
 */
export function wireBody(request: TurnRequest): { body: Record<string, unknown>; betas: string[] } {
  const system = request.system.map((block) => ({ ...block }));
  const messages: WireMessage[] = request.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === 'string' ? m.content : m.content.map((block) => ({ ...block })),
    ...(m.extra ?? {}),
  }));
  for (const mark of request.cacheControl) {
    const [where, index, member, block] = mark.path;
    if (where === 'system' && typeof index === 'number') {
      const target = system[index];
      if (target) target.cache_control = mark.value;
    } else if (where === 'messages' && typeof index === 'number' && member === 'content') {
      const message = messages[index];
      if (!message) continue;
      if (typeof message.content === 'string') message.content = [{ type: 'text', text: message.content }];
      const target = typeof block === 'number' ? message.content[block] : undefined;
      if (target) target.cache_control = mark.value;
    }
  }
  // Claude Code sends a user or system message that is one text block with no breakpoint as a plain string
  // (the record keeps blocks; seen in every 2.1.328 request), an assistant message always as blocks.
  for (const message of messages) {
    const only =
      Array.isArray(message.content) && message.content.length === 1 ? message.content[0] : undefined;
    if (
      message.role !== 'assistant' &&
      only?.type === 'text' &&
      only.cache_control === undefined &&
      Object.keys(only).length === 2
    )
      message.content = String(only.text);
  }
  // The betas go in the `anthropic-beta` header, not in the body.
  const { betas, ...params } = request.params;
  const list = Array.isArray(betas) ? betas.filter((b): b is string => typeof b === 'string') : [];
  return { body: { ...params, system, tools: request.tools, messages }, betas: list };
}

/**
 * What the model saw of a `tool_result`'s content, as a stored output: the string, or its blocks — text and
 * images as they are, a tool reference named, any other block as its JSON text. The one reading for the
 * transcript's results (the Claude Code reader) and a request's (a replay's wire).
 */
export function toolResultOutput(content: unknown): string | OutputBlock[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    return content === undefined || content === null ? '' : JSON.stringify(content);
  const out: OutputBlock[] = [];
  for (const block of content as Record<string, unknown>[]) {
    if (block.type === 'text') out.push({ type: 'text', text: String(block.text ?? '') });
    else if (block.type === 'image') {
      const source = block.source as { media_type?: string; data?: string; url?: string } | undefined;
      out.push({
        type: 'image',
        mediaType: source?.media_type ?? 'image/*',
        data: source?.data ?? source?.url ?? '',
      });
    } else if (block.type === 'tool_reference')
      out.push({ type: 'text', text: `[tool_reference: ${String(block.tool_name ?? '')}]` });
    else out.push({ type: 'text', text: JSON.stringify(block) });
  }
  return out;
}
