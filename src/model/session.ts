// The normalized session model: every source adapter produces these shapes and everything downstream reads
// only them. Types and pure functions only — no I/O.

import type { RequestLog } from './request.js';

export const agents = ['claude-code', 'opencode', 'codex', 'docker-agent', 'gemini', 'qwen'] as const;
export type AgentId = (typeof agents)[number];

/** Where a message came from, so any output traces back to a log line or a database row. */
export type SourceRef =
  | { file: string; line: number; endLine?: number }
  | { db: string; table: string; row: string };

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** A block of tool output as the model saw it: text, or an image it was shown. */
export type OutputBlock = { type: 'text'; text: string } | { type: 'image'; mediaType: string; data: string };

export interface TextPart {
  type: 'text';
  text: string;
  /** What the model said the text is, where its API says (Codex/Responses `phase`: commentary, final_answer). */
  phase?: string;
}
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Provider signature needed to send thinking back (Anthropic); absent elsewhere. */
  signature?: string;
  redacted?: boolean;
  /**
   * The summary the provider showed of reasoning whose raw text is `text` (Responses API items with both a
   * `summary` and `content`), one entry per summary item. Absent when `text` is the summary itself.
   */
  summary?: string[];
}
export interface ToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  input: unknown;
  /** The namespace the tool was offered in, where its API has them (Codex 0.169: `multi_agent_v1`). */
  namespace?: string;
  /**
   * A free-form tool (Codex's custom `apply_patch`): `input` is the raw text the model wrote. Chat form and the
   * short-circuit take it as the function form such a tool is offered in, `{input: "<text>"}` (`callInput`).
   */
  freeform?: boolean;
  /** No result was ever recorded (an interrupted turn). Contexts get a synthetic error result for it. */
  unanswered?: boolean;
}
export interface ToolResult {
  type: 'tool_result';
  callId: string;
  name?: string;
  output: string | OutputBlock[];
  isError: boolean;
  /** Made by us, not recorded: the error result given to an unanswered call when a context is built. */
  synthetic?: boolean;
  /** What the agent kept beside the output for its own UI (the model never saw it): replayed as recorded. */
  display?: ResultDisplay;
}

/** opencode's `title` and `metadata` of a tool result (a read's preview, an edit's diff, a task's session id). */
export interface ResultDisplay {
  title?: string;
  metadata?: Record<string, unknown>;
}
export interface ImagePart {
  type: 'image';
  mediaType: string;
  data: string;
}
export type Part = TextPart | ReasoningPart | ToolCall | ToolResult | ImagePart;

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface Message {
  role: Role;
  parts: Part[];
  /** The source's own id for this message (Claude: uuid of its first line; opencode: message id). */
  nativeId?: string;
  model?: string;
  usage?: Usage;
  timestamp?: string;
  /** Harness-written text that looks like a user turn (or a harness-made assistant error): not typed by a person. */
  injected?: boolean;
  /** A summary that replaced the earlier history: contexts after it start here. */
  compaction?: boolean;
  /**
   * With `compaction`: native ids of earlier messages that stay visible after the summary (in order). The
   * summary's own id among them puts it there (Codex sends it after the items it kept); without it, first.
   */
  preserved?: string[];
  /**
   * Harness text the agent logged as a rendered attachment (Claude Code 2.1.3xx: `environment`, `date`,
   * `session_context`, `file`, …): the attachment's type. Always `injected`.
   */
  attachment?: string;
  source: SourceRef;
}

/** `branch`: a rewind's abandoned branch, its parent the session the rewind continued (the prefix is shared). */
export type SessionKind = 'main' | 'subagent' | 'compaction' | 'branch';

export interface Session {
  /** Stable: a hash of agent and the agent's own session id (see ids.ts). */
  id: string;
  agent: AgentId;
  /** The agent's own id for this session (for Claude sub-agents: `<parent session id>/agent-<agentId>`). */
  sourceId: string;
  kind: SessionKind;
  parentId?: string;
  /** The parent's tool call that spawned this sub-agent, where the log says. */
  parentToolCallId?: string;
  /**
   * History this session shares with another one, stored only once, there: the messages of session
   * `sessionId` come first — up to and including `nativeId` (a resumed or forked session that copied them), or
   * those read from the first `line` lines of that session's log (a fork that points at its parent's log
   * instead of copying it: Codex 0.169's `history_base`). With `line`, the other session may not be stored
   * yet: its messages join this session's history once it is (`sourceId`, its agent's own id, names it then).
   */
  continues?: { sessionId: string; nativeId?: string; line?: number; sourceId?: string };
  cwd?: string;
  title?: string;
  startedAt?: string;
  endedAt?: string;
  /** Version of the agent that wrote the log. */
  version?: string;
  messages: Message[];
  /**
   * The requests the agent recorded for its model turns (Claude Code 2.1.3xx), delta-encoded as written:
   * `resolveRequests` (request.ts) rebuilds each one. Absent when the log records none.
   */
  requests?: RequestLog;
}

/** A call's input as a function takes it: a free-form tool's raw text as `{input}`, anything else as it is. */
export function callInput(call: ToolCall): unknown {
  return call.freeform && typeof call.input === 'string' ? { input: call.input } : call.input;
}

export function isToolCall(part: Part): part is ToolCall {
  return part.type === 'tool_call';
}

export function isToolResult(part: Part): part is ToolResult {
  return part.type === 'tool_result';
}

/** The text of a tool output, images named but not inlined. */
export function outputText(output: ToolResult['output']): string {
  if (typeof output === 'string') return output;
  return output
    .map((block) => (block.type === 'text' ? block.text : `[image ${block.mediaType}]`))
    .join('\n');
}

export function toolCalls(message: Message): ToolCall[] {
  return message.parts.filter(isToolCall);
}

export function toolResults(message: Message): ToolResult[] {
  return message.parts.filter(isToolResult);
}

/**
 * Mark every tool call that has no recorded result anywhere in the list, nor among `answeredElsewhere` (the calls
 * a continued read knows were answered before the messages it holds). Returns the number marked.
 */
export function markUnanswered(messages: Message[], answeredElsewhere: Iterable<string> = []): number {
  const answered = new Set<string>(answeredElsewhere);
  for (const message of messages) for (const result of toolResults(message)) answered.add(result.callId);
  let marked = 0;
  for (const message of messages) {
    for (const call of toolCalls(message)) {
      if (answered.has(call.id)) delete call.unanswered;
      else {
        call.unanswered = true;
        marked++;
      }
    }
  }
  return marked;
}

/** Fill in tool_result.name from the call it answers, where the source leaves it out. */
export function nameResults(messages: Message[]): void {
  const names = new Map<string, string>();
  for (const message of messages) for (const call of toolCalls(message)) names.set(call.id, call.name);
  for (const message of messages) {
    for (const result of toolResults(message)) {
      if (result.name === undefined) {
        const name = names.get(result.callId);
        if (name !== undefined) result.name = name;
      }
    }
  }
}
