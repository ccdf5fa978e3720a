// The on-disk shape of Claude Code transcript lines (`~/.claude/projects/<slug>/<session>.jsonl`), as far as
// this adapter reads it. Claude Code has no published schema: see README.md for where each fact comes from.

export interface Envelope {
  type: string;
  uuid?: string;
  parentUuid?: string | null;
  /** On `system/compact_boundary`: the last message before the compaction (its parentUuid is null). */
  logicalParentUuid?: string | null;
  sessionId?: string;
  agentId?: string;
  isSidechain?: boolean;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  isApiErrorMessage?: boolean;
  cwd?: string;
  version?: string;
  timestamp?: string;
  subtype?: string;
  message?: ApiMessage;
  toolUseResult?: unknown;
  compactMetadata?: { preservedSegment?: { headUuid?: string; anchorUuid?: string; tailUuid?: string } };
  data?: { type?: string; agentId?: string; message?: unknown };
  parentToolUseID?: string;
  attachment?: { type?: string; prompt?: unknown; content?: unknown };
  /** On attachments (2.1.3xx): the exact text Claude Code sent the model for it, and as which role. */
  rendered?: { content?: unknown }[];
  renderedRole?: string;
  // metadata lines
  summary?: string;
  leafUuid?: string;
  aiTitle?: string;
  customTitle?: string;
}

export interface ApiMessage {
  id?: string;
  role?: string;
  model?: string;
  content?: string | Block[];
  usage?: ApiUsage;
}

export interface ApiUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export type Block =
  | { type: 'text'; text?: string }
  | { type: 'thinking'; thinking?: string; signature?: string }
  | { type: 'redacted_thinking'; data?: string }
  | { type: 'tool_use' | 'server_tool_use'; id?: string; name?: string; input?: unknown }
  | { type: 'tool_result'; tool_use_id?: string; content?: string | Block[]; is_error?: boolean }
  | { type: 'image'; source?: { type?: string; media_type?: string; data?: string; url?: string } }
  | { type: string; [key: string]: unknown };

/** Lines that carry the conversation (user and assistant) — everything else stays out of the transcript. */
export const conversationTypes = new Set(['user', 'assistant']);

/** Line types that are known and deliberately kept out of the conversation. */
export const knownTypes = new Set([
  'user',
  'assistant',
  'system',
  'attachment',
  'progress',
  'summary',
  'ai-title',
  'custom-title',
  'agent-name',
  'last-prompt',
  'permission-mode',
  'mode',
  'pr-link',
  'file-history-snapshot',
  'queue-operation',
  'agent-setting',
  'worktree-state',
  'bridge-session',
  // 2.1.3xx: the request records (read for each turn's exact request, see requests.ts) and bookkeeping
  // lines that hold nothing the model was sent (README.md, "Request records").
  'api-request',
  'api-request-shape',
  'api-request-blob',
  'atis-latch',
  'tools-used',
  'cost-state',
]);

export function isEnvelope(value: unknown): value is Envelope {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}

/** Text that Claude Code writes into a user turn itself: slash commands, hook output, reminders, interrupts. */
const injectedPrefix =
  /^\s*(<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder|bash-input|bash-stdout|bash-stderr|task-notification|teammate-message|user-prompt-submit-hook|ide_opened_file|ide_selection)>|\[Request interrupted by user)/;

export function isInjectedText(text: string): boolean {
  return injectedPrefix.test(text);
}
