// The on-disk shape of docker-agent's (formerly cagent's) session store, as far as this adapter reads it. Every
// field comes from docker-agent's own Go types and SQL; README.md names the files they were read from.

/** `chat.Message`, stored as JSON in `session_items.message_json` (and inside the legacy `sessions.messages`). */
export interface ChatMessage {
  role?: unknown;
  content?: unknown;
  multi_content?: unknown;
  reasoning_content?: unknown;
  thinking_signature?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  is_error?: unknown;
  created_at?: unknown;
  usage?: unknown;
  model?: unknown;
}

/** `tools.ToolCall`: OpenAI-style, arguments as a JSON string. */
export interface ToolCallRecord {
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** `chat.MessagePart`: text, or an attachment in one of three generations (image_url, file, document). */
export interface MessagePartRecord {
  type?: unknown;
  text?: unknown;
  image_url?: { url?: unknown };
  file?: { path?: unknown; mime_type?: unknown };
  document?: {
    name?: unknown;
    mime_type?: unknown;
    source?: { inline_text?: unknown; inline_data?: unknown; artifact_path?: unknown };
  };
}

/** `chat.Usage`. */
export interface UsageRecord {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cached_input_tokens?: unknown;
  cached_write_tokens?: unknown;
}

/** One row of `session_items` (migration 014; `first_kept_entry` from migration 021). */
export interface ItemRow {
  id: number;
  position: number;
  item_type: string;
  agent_name: string | null;
  message_json: string | null;
  implicit: number | null;
  subsession_id: string | null;
  summary_text: string | null;
  first_kept_entry: number | null;
}

/** One row of `sessions`, with the columns this adapter reads (absent in old schemas: read as NULL). */
export interface SessionRow {
  rowid: number;
  id: string;
  title: string | null;
  working_dir: string | null;
  created_at: string | null;
  parent_id: string | null;
  messages: string | null;
}

/**
 * A legacy item (before migration 015 moved them into `session_items`): `session.Item` marshalled into the
 * `sessions.messages` JSON array. The oldest cagent builds stored bare `session.Message`s there instead.
 */
export interface LegacyItem {
  message?: { agentName?: unknown; message?: unknown; implicit?: unknown; role?: unknown };
  agentName?: unknown;
  sub_session?: LegacySession;
  summary?: unknown;
  first_kept_entry?: unknown;
}

/** `session.Session` as JSON (the legacy embedded sub-session). */
export interface LegacySession {
  id?: unknown;
  title?: unknown;
  messages?: unknown;
  created_at?: unknown;
  working_dir?: unknown;
}

/** The item kinds `loadSessionItems` knows. Only messages and summaries reach the model. */
export const itemKinds = new Set(['message', 'subsession', 'summary', 'error', 'termination']);

export const roles = new Set(['system', 'user', 'assistant', 'tool']);

/** What docker-agent puts before a summary when it rebuilds the context (`buildSessionSummaryMessages`). */
export const summaryPrefix = 'Session Summary: ';

/** The system message `newSubSession` gives a delegated agent: the task sits between these tags. */
const taskPattern = /<task>\n([\s\S]*?)\n<\/task>/;

export function taskOf(systemText: string): string | undefined {
  return taskPattern.exec(systemText)?.[1];
}

/** The implicit user message of a transferred task when the caller gave none (`newSubSession`). */
export const defaultImplicitPrompt = 'Please proceed.';

/** Tools whose call runs a sub-session (transfer_task blocks; the others may finish later). */
export const spawningTools = new Set(['transfer_task', 'delegate', 'run_background_agent', 'run_skill']);

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Does a CREATE TABLE statement (as SQLite stores it, ALTERed columns appended) declare this column? */
export function hasColumn(createSql: string, column: string): boolean {
  return new RegExp(`[(,]\\s*[\`"'\\[]?${column}[\`"'\\]]?(?=[\\s,)])`, 'i').test(createSql);
}

/**
 * What a SQLite schema is to this adapter. docker-agent's `sessions` is created with `id, messages, created_at`
 * and grows by migrations (`tools_approved` is 001, `send_user_message` 006); `session_items` arrives with
 * migration 014 and `sessions.messages` leaves with 020. Our own store also has a `sessions` table, but with
 * `agent` and `source_id`; opencode's tables are `session`, `message`, `part` (and `session_v2`). 'damaged':
 * unmistakably docker-agent's, but without the tables that hold the conversation.
 */
export function classify(tables: Map<string, string>): 'docker-agent' | 'damaged' | 'empty' | 'other' {
  if (tables.size === 0) return 'empty';
  const sessions = tables.get('sessions');
  const items = tables.get('session_items');
  if (sessions === undefined) return items === undefined ? 'other' : 'damaged';
  if (hasColumn(sessions, 'agent') || hasColumn(sessions, 'source_id')) return 'other';
  const own = hasColumn(sessions, 'tools_approved') || hasColumn(sessions, 'send_user_message');
  if (!hasColumn(sessions, 'id') || !hasColumn(sessions, 'created_at'))
    return own || items !== undefined ? 'damaged' : 'other';
  if (items !== undefined)
    return hasColumn(items, 'session_id') && hasColumn(items, 'item_type') ? 'docker-agent' : 'damaged';
  if (hasColumn(sessions, 'messages')) return 'docker-agent';
  return own ? 'damaged' : 'other';
}
