// Builds session databases the way docker-agent does: its bootstrap table, then its migrations in order
// (docker/docker-agent pkg/session/store.go `setupAndMigrate` and pkg/session/migrations.go), and rows as its
// SQLite store writes them (`AddSession`, `AddMessage`, `AddSubSession`, `AddSummary`), with chat.Message
// encoded the way Go's encoding/json does. Written here from reading that code, not copied.

import Database from 'better-sqlite3';

/** The last migration in the docker-agent source read for this adapter (029). */
export const latest = 29;
/** The last schema that kept every item in `sessions.messages` (before 014 added `session_items`). */
export const legacy = 13;

const migrations: [number, string, string][] = [
  [1, '001_add_tools_approved_column', 'ALTER TABLE sessions ADD COLUMN tools_approved BOOLEAN DEFAULT 0'],
  [2, '002_add_usage_column', 'ALTER TABLE sessions ADD COLUMN input_tokens INTEGER DEFAULT 0'],
  [3, '003_add_output_tokens_column', 'ALTER TABLE sessions ADD COLUMN output_tokens INTEGER DEFAULT 0'],
  [4, '004_add_title_column', "ALTER TABLE sessions ADD COLUMN title TEXT DEFAULT ''"],
  [5, '005_add_cost_column', 'ALTER TABLE sessions ADD COLUMN cost REAL DEFAULT 0'],
  [
    6,
    '006_add_send_user_message_column',
    'ALTER TABLE sessions ADD COLUMN send_user_message BOOLEAN DEFAULT 1',
  ],
  [7, '007_add_max_iterations_column', 'ALTER TABLE sessions ADD COLUMN max_iterations INTEGER DEFAULT 0'],
  [8, '008_add_working_dir_column', "ALTER TABLE sessions ADD COLUMN working_dir TEXT DEFAULT ''"],
  [9, '009_add_starred_column', 'ALTER TABLE sessions ADD COLUMN starred BOOLEAN DEFAULT 0'],
  [10, '010_add_permissions_column', "ALTER TABLE sessions ADD COLUMN permissions TEXT DEFAULT ''"],
  [
    11,
    '011_add_agent_model_overrides_column',
    "ALTER TABLE sessions ADD COLUMN agent_model_overrides TEXT DEFAULT '{}'",
  ],
  [
    12,
    '012_add_custom_models_used_column',
    "ALTER TABLE sessions ADD COLUMN custom_models_used TEXT DEFAULT '[]'",
  ],
  [13, '013_add_thinking_column', 'ALTER TABLE sessions ADD COLUMN thinking BOOLEAN DEFAULT 1'],
  [
    14,
    '014_normalize_session_items',
    `ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions(id) ON DELETE CASCADE;
     CREATE INDEX IF NOT EXISTS idx_sessions_parent_id ON sessions(parent_id);
     CREATE TABLE IF NOT EXISTS session_items (
       id INTEGER PRIMARY KEY AUTOINCREMENT,
       session_id TEXT NOT NULL,
       position INTEGER NOT NULL,
       item_type TEXT NOT NULL,
       agent_name TEXT,
       message_json TEXT,
       implicit BOOLEAN DEFAULT 0,
       subsession_id TEXT,
       summary_text TEXT,
       FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE,
       FOREIGN KEY (subsession_id) REFERENCES sessions(id) ON DELETE SET NULL
     );
     CREATE INDEX IF NOT EXISTS idx_session_items_session ON session_items(session_id, position);`,
  ],
  // 015 is a Go data migration (messages JSON → session_items); a fresh store has nothing to move.
  [15, '015_migrate_messages_to_session_items', ''],
  [
    16,
    '016_add_branching_columns',
    `ALTER TABLE sessions ADD COLUMN branch_parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL;
     ALTER TABLE sessions ADD COLUMN branch_parent_position INTEGER;
     ALTER TABLE sessions ADD COLUMN branch_created_at TEXT;
     CREATE INDEX IF NOT EXISTS idx_sessions_branch_parent ON sessions(branch_parent_session_id);`,
  ],
  [17, '017_add_split_diff_view_column', 'ALTER TABLE sessions ADD COLUMN split_diff_view BOOLEAN'],
  [
    18,
    '018_add_session_items_type_index',
    'CREATE INDEX IF NOT EXISTS idx_session_items_session_type ON session_items(session_id, item_type)',
  ],
  [
    19,
    '019_drop_branch_and_split_diff_columns',
    `DROP INDEX IF EXISTS idx_sessions_branch_parent;
     ALTER TABLE sessions DROP COLUMN branch_parent_session_id;
     ALTER TABLE sessions DROP COLUMN branch_parent_position;
     ALTER TABLE sessions DROP COLUMN branch_created_at;
     ALTER TABLE sessions DROP COLUMN split_diff_view;`,
  ],
  [20, '020_drop_messages_column', 'ALTER TABLE sessions DROP COLUMN messages'],
  [
    21,
    '021_add_first_kept_entry_column',
    'ALTER TABLE session_items ADD COLUMN first_kept_entry INTEGER DEFAULT 0',
  ],
  [
    22,
    '022_add_instruction_context_column',
    "ALTER TABLE sessions ADD COLUMN instruction_context TEXT DEFAULT ''",
  ],
  [23, '023_add_cost_to_session_items', 'ALTER TABLE session_items ADD COLUMN cost REAL NOT NULL DEFAULT 0'],
  [24, '024_add_safety_policy_column', "ALTER TABLE sessions ADD COLUMN safety_policy TEXT DEFAULT ''"],
  [
    25,
    '025_add_model_usage_to_session_items',
    `ALTER TABLE session_items ADD COLUMN model TEXT NOT NULL DEFAULT '';
     ALTER TABLE session_items ADD COLUMN usage_json TEXT NOT NULL DEFAULT '';`,
  ],
  [26, '026_add_session_attributes_column', "ALTER TABLE sessions ADD COLUMN attributes TEXT DEFAULT '{}'"],
  [27, '027_add_session_origin_column', "ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT 'run'"],
  [
    28,
    '028_add_generated_media_manifest_table',
    `CREATE TABLE IF NOT EXISTS generated_media_manifest (
       session_id TEXT NOT NULL,
       rel_path TEXT NOT NULL,
       mime_type TEXT NOT NULL,
       created_at TEXT NOT NULL,
       PRIMARY KEY (session_id, rel_path)
     )`,
  ],
  [
    29,
    '029_add_root_kind_to_generated_media_manifest',
    "ALTER TABLE generated_media_manifest ADD COLUMN root_kind TEXT NOT NULL DEFAULT 'workspace'",
  ],
];

/** A store at schema `version`, in WAL mode as docker-agent opens it (`_journal_mode=WAL`) unless told not to. */
export function createStore(file: string, options: { version?: number; wal?: boolean } = {}): Store {
  const { version = latest, wal = true } = options;
  const db = new Database(file);
  if (wal) db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, messages TEXT, created_at TEXT)');
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT, applied_at TEXT NOT NULL)`);
  for (const [id, name, sql] of migrations) {
    if (id > version) break;
    if (sql) db.exec(sql);
    db.prepare('INSERT INTO migrations (id, name, description, applied_at) VALUES (?, ?, ?, ?)').run(
      id,
      name,
      '',
      '2025-10-01T09:00:00+02:00',
    );
  }
  return new Store(db, version);
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** chat.Message fields in declaration order; `content` has no omitempty, the rest are dropped when empty. */
export interface Chat {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string;
  multi_content?: unknown[];
  reasoning_content?: string;
  thinking_signature?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  is_error?: boolean;
  created_at?: string;
  usage?: {
    input_tokens: number;
    output_tokens: number;
    cached_input_tokens: number;
    cached_write_tokens: number;
  };
  model?: string;
  cost?: number;
  finish_reason?: string;
}

const order = [
  'multi_content',
  'reasoning_content',
  'thinking_signature',
  'tool_calls',
  'tool_call_id',
  'is_error',
  'created_at',
  'usage',
  'model',
  'cost',
  'finish_reason',
] as const;

/** JSON as Go's json.Marshal writes it, HTML-escaping included (`<` is stored as \u003c). */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

export function chat(message: Chat): Record<string, unknown> {
  const out: Record<string, unknown> = { role: message.role, content: message.content ?? '' };
  for (const key of order) {
    const value = message[key];
    if (value !== undefined && value !== '' && value !== false && value !== 0) out[key] = value;
  }
  return out;
}

export function call(id: string, name: string, args: unknown): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

export function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0): Chat['usage'] {
  return {
    input_tokens: input,
    output_tokens: output,
    cached_input_tokens: cacheRead,
    cached_write_tokens: cacheWrite,
  };
}

export interface SessionFields {
  id: string;
  title?: string;
  workingDir?: string;
  createdAt?: string;
  parentId?: string;
}

export class Store {
  constructor(
    readonly db: Database.Database,
    readonly version: number,
  ) {}

  /** `AddSession`/`UpdateSession` (the columns this schema has), or the legacy `INSERT` with items JSON. */
  session(fields: SessionFields, legacyItems?: unknown[]): void {
    const row: Record<string, unknown> = {
      id: fields.id,
      created_at: fields.createdAt ?? '2025-11-03T14:05:09+01:00',
    };
    if (this.version >= 4) row.title = fields.title ?? '';
    if (this.version >= 8) row.working_dir = fields.workingDir ?? '';
    if (this.version >= 14 && fields.parentId) row.parent_id = fields.parentId;
    if (this.version < 20) row.messages = legacyItems ? goJson(legacyItems) : '[]';
    const columns = Object.keys(row);
    this.db
      .prepare(
        `INSERT INTO sessions (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
      )
      .run(row);
  }

  /** `AddMessage`: the next position, agent name, the chat.Message JSON, implicit. Returns the row id. */
  message(sessionId: string, message: Chat, options: { agent?: string; implicit?: boolean } = {}): number {
    return this.item(sessionId, {
      item_type: 'message',
      agent_name: options.agent ?? '',
      message_json: goJson(chat(message)),
      implicit: options.implicit ? 1 : 0,
    });
  }

  /** `AddSummary` (first_kept_entry from 021 on). */
  summary(sessionId: string, text: string, firstKeptEntry = 0): number {
    const fields: Record<string, unknown> = { item_type: 'summary', summary_text: text };
    if (this.version >= 21) fields.first_kept_entry = firstKeptEntry;
    return this.item(sessionId, fields);
  }

  /** `AddSubSession`: the child row with its items, then the reference in the parent, in one transaction. */
  subsession(parentId: string, child: SessionFields, items: (store: Store) => void): number {
    let id = 0;
    this.db.transaction(() => {
      this.session({ ...child, parentId });
      items(this);
      id = this.item(parentId, { item_type: 'subsession', subsession_id: child.id });
    })();
    return id;
  }

  /** Any row, for rows docker-agent would not write (bad JSON, unknown kinds). */
  item(sessionId: string, fields: Record<string, unknown>): number {
    const row = { session_id: sessionId, ...fields };
    const columns = Object.keys(row);
    const result = this.db
      .prepare(
        `INSERT INTO session_items (position, ${columns.join(', ')})
         VALUES ((SELECT COALESCE(MAX(position), -1) + 1 FROM session_items WHERE session_id = @session_id),
                 ${columns.map((c) => `@${c}`).join(', ')})`,
      )
      .run(row);
    return Number(result.lastInsertRowid);
  }

  close(): void {
    this.db.close();
  }
}
