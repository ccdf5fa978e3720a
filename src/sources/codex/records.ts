// The on-disk shape of Codex CLI rollout lines (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), as far as this
// adapter reads it, and how one line's payload becomes parts of the normalized model. Source of truth: openai/codex
// `codex-rs/protocol/src/protocol.rs` (RolloutLine, SessionMeta, TurnContextItem, CompactedItem, EventMsg) and
// `codex-rs/protocol/src/models.rs` (ResponseItem); README.md says which fact comes from where.

import type { OutputBlock, Part, ToolCall, Usage } from '../../model/session.js';

/** One rollout line: `{timestamp, type, payload}` (serde tag + content). */
export interface RolloutRecord {
  type: string;
  payload: Payload;
  timestamp?: string;
  /** 0.169: the envelope's `metadata.compaction_output` — this item is the answer to a compaction request. */
  compactionOutput?: boolean;
}

/** A payload as read: any JSON object; the fields this adapter uses are typed where it reads them. */
export type Payload = Record<string, unknown>;

export interface SessionMeta {
  id?: string;
  timestamp?: string;
  cwd?: string;
  cli_version?: string;
  /** Older builds: the instructions sent with every request. */
  instructions?: string | null;
  /** Newer builds: the system prompt. */
  base_instructions?: { text?: string } | null;
  /** `"cli" | "vscode" | "exec" | …` or `{subagent: "review" | "compact" | {thread_spawn: {…}} | {other}}`. */
  source?: unknown;
  model_provider?: string;
  forked_from_id?: string;
  /** 0.169 forks: the parent's rollout lines the fork's history starts with (none are copied into its file). */
  history_base?: unknown;
  /** Some builds put the parent here as well as in `source.subagent.thread_spawn`. */
  parent_thread_id?: string;
  agent_nickname?: string;
  agent_role?: string;
}

export interface TokenUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  output_tokens?: number;
  reasoning_output_tokens?: number;
  total_tokens?: number;
}

/** Top-level line types this adapter reads. Anything else is counted in a note. */
export const recordTypes = new Set([
  'session_meta',
  'response_item',
  'event_msg',
  'turn_context',
  'compacted',
  ...['world_state', 'token_usage_record'],
]);

/**
 * 0.169 lines that hold nothing the model saw and nothing this adapter stores: `world_state` (the state Codex
 * derives its context items from; the items themselves are `response_item`s) and `token_usage_record` (per
 * response usage, also in the `token_count` events read for usage). Read past without a note.
 */
export const quietRecordTypes = new Set(['world_state', 'token_usage_record']);

/** Items the model wrote: one model turn is a run of these. */
export const modelItemTypes = new Set([
  'reasoning',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'web_search_call',
  'tool_search_call',
  'image_generation_call',
]);

/** Items that answer a call of the turn before them. */
export const outputItemTypes = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'tool_search_output',
]);

/** Items that carry the opaque summary of a compaction. */
export const summaryItemTypes = new Set(['compaction', 'compaction_summary', 'context_compaction']);

/** Known items that the model never sees (undo snapshots, request controls, the tool list). */
export const hiddenItemTypes = new Set(['ghost_snapshot', 'compaction_trigger', 'additional_tools']);

/** Response item types of pre-September-2025 files, which wrote items bare (no envelope). */
const bareItemTypes = new Set([
  'message',
  ...modelItemTypes,
  ...outputItemTypes,
  ...hiddenItemTypes,
  ...summaryItemTypes,
]);

export const isObject = (value: unknown): value is Payload =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A parsed line as a rollout record. Old builds wrote a bare SessionMeta first (`{id, timestamp, instructions,
 * git}`), then bare response items between `{"record_type":"state"}` lines: those are read as if enveloped.
 * Returns 'state' for the old bookkeeping lines, undefined for anything that is not a rollout line.
 */
export function readRecord(value: unknown, first: boolean): RolloutRecord | 'state' | undefined {
  if (!isObject(value)) return undefined;
  const timestamp = typeof value.timestamp === 'string' ? value.timestamp : undefined;
  if (typeof value.type === 'string' && 'payload' in value) {
    if (!isObject(value.payload)) return undefined;
    const compactionOutput = isObject(value.metadata) && value.metadata.compaction_output === true;
    return {
      type: value.type,
      payload: value.payload,
      ...(timestamp ? { timestamp } : {}),
      ...(compactionOutput ? { compactionOutput } : {}),
    };
  }
  if (typeof value.record_type === 'string') return 'state';
  if (typeof value.type === 'string' && bareItemTypes.has(value.type))
    return { type: 'response_item', payload: value, ...(timestamp ? { timestamp } : {}) };
  if (first && typeof value.type !== 'string' && typeof value.id === 'string')
    return { type: 'session_meta', payload: value, ...(timestamp ? { timestamp } : {}) };
  return undefined;
}

/** The system prompt a session's requests carried. */
export function instructionsOf(meta: SessionMeta): string | undefined {
  const base = meta.base_instructions?.text;
  if (typeof base === 'string' && base !== '') return base;
  return typeof meta.instructions === 'string' && meta.instructions !== '' ? meta.instructions : undefined;
}

/** `source.subagent`: a thread spawned by another agent, a review, or a compaction run. */
export function subagentOf(meta: SessionMeta): { parent?: string; compaction: boolean } | undefined {
  const source = meta.source;
  const sub = isObject(source) ? source.subagent : undefined;
  const spawn = isObject(sub) && isObject(sub.thread_spawn) ? sub.thread_spawn : undefined;
  const parent =
    typeof spawn?.parent_thread_id === 'string'
      ? spawn.parent_thread_id
      : typeof meta.parent_thread_id === 'string'
        ? meta.parent_thread_id
        : undefined;
  if (sub === undefined && parent === undefined) return undefined;
  return { ...(parent ? { parent } : {}), compaction: sub === 'compact' };
}

/** Text that Codex writes into a user-role item itself: context, instructions, notices. */
const injectedPrefix =
  /^\s*(<(environment_context|user_instructions|permissions instructions|user_shell_command|turn_aborted|skill|subagent_notification|collaboration_mode|personality_spec|INSTRUCTIONS)>|# AGENTS\.md instructions for )/i;

export function isInjectedText(text: string): boolean {
  return injectedPrefix.test(text);
}

/** `data:image/png;base64,AAAA` → media type and data; any other URL is kept whole. */
function image(url: unknown): { mediaType: string; data: string } {
  const text = typeof url === 'string' ? url : '';
  const match = /^data:([^;,]+);base64,/.exec(text);
  if (match) return { mediaType: match[1] as string, data: text.slice(match[0].length) };
  return { mediaType: 'image/*', data: text };
}

/** Message content items (`input_text`, `output_text`, `input_image`, `refusal`) as parts. */
export function contentParts(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: Part[] = [];
  for (const item of content) {
    if (!isObject(item)) continue;
    if (typeof item.text === 'string') parts.push({ type: 'text', text: item.text });
    else if (item.type === 'input_image') parts.push({ type: 'image', ...image(item.image_url) });
    else if (typeof item.refusal === 'string') parts.push({ type: 'text', text: item.refusal });
    // An item kind this adapter does not know: keep what it said rather than drop it.
    else parts.push({ type: 'text', text: JSON.stringify(item) });
  }
  return parts;
}

/** What a tool output looked like to the model: a string, or content items (text and images). */
export function outputOf(output: unknown): { output: string | OutputBlock[]; isError: boolean } {
  if (typeof output === 'string') return { output, isError: false };
  if (Array.isArray(output)) {
    const blocks: OutputBlock[] = [];
    for (const item of output) {
      if (isObject(item) && typeof item.text === 'string') blocks.push({ type: 'text', text: item.text });
      else if (isObject(item) && item.type === 'input_image')
        blocks.push({ type: 'image', ...image(item.image_url) });
      else blocks.push({ type: 'text', text: JSON.stringify(item) });
    }
    return { output: blocks, isError: false };
  }
  // Some builds and forks wrote `{content, success}`.
  if (isObject(output) && 'content' in output)
    return { output: outputOf(output.content).output, isError: output.success === false };
  return { output: output === undefined || output === null ? '' : JSON.stringify(output), isError: false };
}

/** Reasoning: the raw text where the log has it, else the summary; the encrypted form goes back to the provider. */
export function reasoningPart(item: Payload): Part {
  const texts = (list: unknown): string[] =>
    Array.isArray(list)
      ? list.filter(isObject).flatMap((entry) => (typeof entry.text === 'string' ? [entry.text] : []))
      : [];
  const raw = texts(item.content);
  const summary = texts(item.summary);
  const text = (raw.length > 0 ? raw : summary).join('\n\n');
  const part: Extract<Part, { type: 'reasoning' }> = { type: 'reasoning', text };
  // The raw text is what the model wrote; its summary, what it showed: both are kept.
  if (raw.length > 0 && summary.length > 0) part.summary = summary;
  if (typeof item.encrypted_content === 'string') {
    part.signature = item.encrypted_content;
    if (text === '') part.redacted = true;
  }
  return part;
}

/**
 * A function call's `arguments` is a JSON string, which the model may have got wrong. A JSON object is parsed;
 * anything else is kept as the raw string (the exact text the model wrote), and `raw` says so.
 */
export function argumentsOf(value: unknown): { input: unknown; raw: boolean } {
  if (typeof value !== 'string') return { input: value ?? {}, raw: false };
  try {
    const parsed = JSON.parse(value) as unknown;
    if (isObject(parsed)) return { input: parsed, raw: false };
  } catch {
    // Not JSON: kept raw below.
  }
  return { input: value, raw: true };
}

/** The tool call an item of a model turn makes, if it makes one (`id` is the call id outputs answer). */
export function callOf(item: Payload, fallbackId: string): ToolCall | undefined {
  const id =
    typeof item.call_id === 'string' ? item.call_id : typeof item.id === 'string' ? item.id : fallbackId;
  switch (item.type) {
    case 'function_call':
      return {
        type: 'tool_call',
        id,
        name: String(item.name ?? ''),
        input: argumentsOf(item.arguments).input,
        ...(typeof item.namespace === 'string' ? { namespace: item.namespace } : {}),
      };
    case 'custom_tool_call':
      // Free-form tools (apply_patch) take raw text, never JSON.
      return {
        type: 'tool_call',
        id,
        name: String(item.name ?? ''),
        input: item.input ?? '',
        freeform: true,
      };
    case 'local_shell_call':
      return { type: 'tool_call', id, name: 'local_shell', input: item.action ?? {} };
    case 'web_search_call':
      return { type: 'tool_call', id, name: 'web_search', input: item.action ?? {} };
    case 'tool_search_call':
      return { type: 'tool_call', id, name: 'tool_search', input: item.arguments ?? {} };
    case 'image_generation_call':
      return {
        type: 'tool_call',
        id,
        name: 'image_generation',
        input: typeof item.revised_prompt === 'string' ? { prompt: item.revised_prompt } : {},
      };
    default:
      return undefined;
  }
}

/** Said in place of the results of a search the provider ran itself: the log does not hold them. */
export const serverSearchOutput = '[web search ran on the provider side; its results are not in the log]';

/** Codex `input_tokens` includes the cached part; the model's `inputTokens` does not (as Anthropic counts). */
export function usageOf(raw: TokenUsage): Usage {
  const out: Usage = {};
  const cached = raw.cached_input_tokens ?? 0;
  if (raw.input_tokens !== undefined) out.inputTokens = raw.input_tokens - cached;
  if (raw.output_tokens !== undefined) out.outputTokens = raw.output_tokens;
  if (raw.cached_input_tokens !== undefined) out.cacheReadTokens = raw.cached_input_tokens;
  return out;
}
