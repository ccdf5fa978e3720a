// The on-disk shape of Qwen Code 0.24 session records (`~/.qwen/projects/<slug>/chats/<sessionId>.jsonl`), as
// far as this adapter reads it; see README.md for what each field means and where it was observed.

/** Every record: one JSON line linked to the one before it by `parentUuid`. */
export interface QwenRecord {
  uuid: string;
  parentUuid: string | null;
  sessionId?: string;
  timestamp?: string;
  type: string;
  subtype?: string;
  /** Who wrote it: `real_user`, `assistant_output`, `tool_result`, `system`. */
  provenance?: string;
  cwd?: string;
  version?: string;
  gitBranch?: string;
  model?: string;
  message?: { role?: string; parts?: unknown };
  toolCallResult?: ToolCallResult;
  systemPayload?: Record<string, unknown>;
}

/** A content part in Gemini's shape (Qwen Code is a fork of Gemini CLI). */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
  functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
  inlineData?: { mimeType?: string; data?: string };
}

/** What Qwen kept beside a tool's answer for its UI: the model saw only the functionResponse. */
export interface ToolCallResult {
  callId?: string;
  status?: string;
  executionStatus?: string;
  errorType?: string;
  resultDisplay?: unknown;
}

/** `system/ui_telemetry` with `qwen-code.api_response`: one model request, side calls included. */
export interface ApiResponseEvent {
  responseId?: string;
  promptId?: string;
  subagent?: string;
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
}

export const recordTypes = new Set(['user', 'assistant', 'tool_result', 'system']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A line as a record, or why it is not one (the reason is reported with file:line). */
export function readRecord(value: unknown): QwenRecord | string {
  if (!isObject(value)) return 'not a Qwen Code record (not a JSON object)';
  if (typeof value.type !== 'string') return 'not a Qwen Code record (no "type")';
  if (typeof value.uuid !== 'string') return `"${value.type}" record without a "uuid"`;
  if (!recordTypes.has(value.type)) return `unknown record type "${value.type}"`;
  if (value.type === 'system') {
    if (typeof value.subtype !== 'string') return 'system record without a "subtype"';
  } else if (!isObject(value.message) || !Array.isArray(value.message.parts))
    return `"${value.type}" record without "message.parts"`;
  const parent = value.parentUuid;
  return { ...(value as unknown as QwenRecord), parentUuid: typeof parent === 'string' ? parent : null };
}

/** Is this parsed line a Qwen record? Claude Code lines share uuid/parentUuid/type, but never `message.parts`. */
export function looksLikeQwen(value: unknown): boolean {
  if (!isObject(value) || typeof value.uuid !== 'string' || typeof value.type !== 'string') return false;
  if (!('parentUuid' in value) || typeof value.sessionId !== 'string') return false;
  if (isObject(value.message) && Array.isArray(value.message.parts)) return true;
  return value.type === 'system' && isObject(value.systemPayload);
}

export function partsOf(record: QwenRecord): GeminiPart[] {
  const parts = record.message?.parts;
  return Array.isArray(parts) ? parts.filter(isObject) : [];
}

/** The api_response event of a `ui_telemetry` record, if it is one. */
export function apiResponse(record: QwenRecord): ApiResponseEvent | undefined {
  const event = record.systemPayload?.uiEvent;
  if (!isObject(event) || event['event.name'] !== 'qwen-code.api_response') return undefined;
  const number = (key: string): number | undefined =>
    typeof event[key] === 'number' ? (event[key] as number) : undefined;
  const text = (key: string): string | undefined =>
    typeof event[key] === 'string' ? (event[key] as string) : undefined;
  const out: ApiResponseEvent = {};
  const fields: [keyof ApiResponseEvent, string | undefined | number][] = [
    ['responseId', text('response_id')],
    ['promptId', text('prompt_id')],
    ['subagent', text('subagent_name')],
    ['inputTokens', number('input_token_count')],
    ['outputTokens', number('output_token_count')],
    ['cachedTokens', number('cached_content_token_count')],
  ];
  for (const [key, value] of fields) if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  return out;
}

/** `system/chat_compression`: the history the model had from there on, and why Qwen compressed. */
export function compression(
  record: QwenRecord,
): { history: { role?: string; parts: GeminiPart[] }[]; trigger?: string } | undefined {
  const payload = record.systemPayload;
  if (!payload || !Array.isArray(payload.compressedHistory)) return undefined;
  const history = payload.compressedHistory.filter(isObject).map((entry) => ({
    ...(typeof entry.role === 'string' ? { role: entry.role } : {}),
    parts: Array.isArray(entry.parts) ? entry.parts.filter(isObject) : [],
  }));
  const info = payload.info;
  const trigger = isObject(info) && typeof info.triggerReason === 'string' ? info.triggerReason : undefined;
  return { history, ...(trigger ? { trigger } : {}) };
}
