// The one internal shape every export format is rendered from. Pure types and helpers, no I/O.
import type { AgentId } from '../model/session.js';

/** A tool call with its arguments parsed; `raw` keeps arguments that were not valid JSON, as the model wrote them. */
export interface SampleCall {
  id: string;
  name: string;
  /** Parsed arguments (an object for every well-formed call). */
  arguments: unknown;
  /** The recorded argument text when it was not valid JSON (then `arguments` is `{}`). */
  raw?: string;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** '' when the message is only tool calls. */
  content: string;
  /** Visible reasoning, where the source kept it (formats that have no place for it drop it). */
  reasoning?: string;
  calls: SampleCall[];
  /** Whether a trainer should learn this message (the --train-on choice). */
  train: boolean;
}

export interface ToolMessage {
  role: 'tool';
  callId: string;
  /** The tool's name (from the call it answers). */
  name: string;
  content: string;
  isError: boolean;
}

export type SampleMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface SampleTool {
  name: string;
  description: string;
  /** JSON Schema, always `type: 'object'`. */
  parameters: Record<string, unknown>;
}

export type Unit = 'session' | 'user-turn' | 'model-turn';

/**
 * One training sample: a conversation with a train flag on every assistant message, and the tools it may call.
 * Invariants the builders guarantee and renderers may rely on: at most one system message and only first; every
 * tool message answers a call of an earlier assistant message, and every call before the last assistant message
 * has its tool message (no dangling call inside a sample); the last message is an assistant message — except in a
 * preference sample, whose messages are the prompt and end before the answers.
 */
export interface Sample {
  /** Stable across exports: session, unit and position. */
  id: string;
  /** Our session id: what the train/validation split is keyed on. */
  session: string;
  agent: AgentId;
  unit: Unit;
  messages: SampleMessage[];
  tools: SampleTool[];
  /** dpo only: `messages` is the prompt (ending before the turn); chosen = the original turn, rejected = the replayed one. */
  preference?: { chosen: AssistantMessage; rejected: AssistantMessage };
}

/** What a renderer makes of a sample: one output row, or a reason it cannot be expressed in that format. */
export type Rendered = { row: unknown; warnings?: string[] } | { skip: string };

export interface Format {
  name: 'openai' | 'trl' | 'sharegpt' | 'axolotl' | 'dpo';
  /** One JSON value per line of the output. */
  render(sample: Sample): Rendered;
  /** A file written beside the output (e.g. LLaMA-Factory's dataset_info.json), given the output's file name. */
  companion?(outFile: string): { file: string; content: string };
}
