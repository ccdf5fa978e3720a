// Writes opencode sessions (given in `opencode export` shape) in each storage generation, for tests: the JSON
// storage tree, an `opencode.db` with the V1 tables, and one with the V2 tables. The schemas are opencode's own:
// V1 as opencode 1.18.33 creates it (packages/opencode/src/session/session.sql.ts), V2 from the migration
// that adds it (packages/core/src/database/migration/20260804233008_loose_psylocke.ts) with row data shaped
// as packages/core/src/session/message.ts defines.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

export interface ExportPart {
  id: string;
  sessionID?: string;
  messageID?: string;
  type: string;
  [key: string]: unknown;
}
export interface ExportMessage {
  info: { id: string; sessionID?: string; role: string; time?: { created?: number }; [key: string]: unknown };
  parts: ExportPart[];
}
export interface ExportSession {
  info: {
    id: string;
    parentID?: string;
    directory?: string;
    title?: string;
    version?: string;
    [key: string]: unknown;
  };
  messages: ExportMessage[];
}

export const v1Schema = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_url_override text, icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_initialized integer, sandboxes text NOT NULL, commands text);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
  slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL, version text NOT NULL,
  share_url text, summary_additions integer, summary_deletions integer, summary_files integer, summary_diffs text,
  metadata text, cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL,
  tokens_output integer DEFAULT 0 NOT NULL, tokens_reasoning integer DEFAULT 0 NOT NULL,
  tokens_cache_read integer DEFAULT 0 NOT NULL, tokens_cache_write integer DEFAULT 0 NOT NULL, revert text,
  permission text, agent text, model text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_compacting integer, time_archived integer,
  CONSTRAINT fk_session_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL,
  CONSTRAINT fk_message_session_id_session_id_fk FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL,
  CONSTRAINT fk_part_message_id_message_id_fk FOREIGN KEY (message_id) REFERENCES message(id) ON DELETE CASCADE);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_parent_idx ON session (parent_id);
`;

export const v2Schema = `
CREATE TABLE IF NOT EXISTS project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text,
  icon_url text, icon_url_override text, icon_color text, time_created integer NOT NULL,
  time_updated integer NOT NULL, time_initialized integer, sandboxes text NOT NULL, commands text);
CREATE TABLE session_v2 (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
  fork_session_id text, fork_boundary text, slug text NOT NULL, directory text NOT NULL, path text, title text,
  version text NOT NULL, share_url text, summary_additions integer, summary_deletions integer,
  summary_files integer, summary_diffs text, metadata text, cost real DEFAULT 0 NOT NULL,
  tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL,
  tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL,
  tokens_cache_write integer DEFAULT 0 NOT NULL, revert text, permission text, agent text, model text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer, time_archived integer,
  time_suspended integer,
  CONSTRAINT fk_session_v2_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE);
CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL,
  seq integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL,
  CONSTRAINT fk_session_message_session_id_session_v2_id_fk FOREIGN KEY (session_id) REFERENCES session_v2(id) ON DELETE CASCADE);
CREATE UNIQUE INDEX session_message_session_seq_idx ON session_message (session_id, seq);
`;

const created = (message: ExportMessage): number => message.info.time?.created ?? 0;

/** `storage/session/<project>/<id>.json`, `storage/message/<session>/<id>.json`, `storage/part/<message>/<id>.json`. */
export function writeTree(dataDir: string, sessions: ExportSession[]): void {
  const storage = join(dataDir, 'storage');
  for (const session of sessions) {
    const project = join(storage, 'session', 'global');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, `${session.info.id}.json`), JSON.stringify(session.info, null, 2));
    for (const message of session.messages) {
      const messages = join(storage, 'message', session.info.id);
      mkdirSync(messages, { recursive: true });
      writeFileSync(join(messages, `${message.info.id}.json`), JSON.stringify(message.info, null, 2));
      const parts = join(storage, 'part', message.info.id);
      mkdirSync(parts, { recursive: true });
      for (const part of message.parts)
        writeFileSync(join(parts, `${part.id}.json`), JSON.stringify(part, null, 2));
    }
  }
}

function strip<T extends Record<string, unknown>>(value: T, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

/** Opens (creating) a database in WAL mode, as opencode runs it. The caller closes it. */
export function openStore(path: string, schema: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(schema);
  db.prepare(
    `INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')`,
  ).run();
  return db;
}

/** V1 rows: ids in columns, the rest of each object in `data` (as opencode's own writer does). */
export function insertV1(db: Database.Database, sessions: ExportSession[]): void {
  const session = db.prepare(
    `INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, revert, time_created, time_updated)
     VALUES (?, 'global', ?, 'slug', ?, ?, ?, ?, ?, ?)`,
  );
  const message = db.prepare(
    'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
  );
  const part = db.prepare(
    'INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const s of sessions) {
      const time = s.info.time as { created?: number; updated?: number } | undefined;
      session.run(
        s.info.id,
        s.info.parentID ?? null,
        s.info.directory ?? '/',
        s.info.title ?? '',
        s.info.version ?? '1.18.33',
        s.info.revert ? JSON.stringify(s.info.revert) : null,
        time?.created ?? 0,
        time?.updated ?? 0,
      );
      for (const m of s.messages) {
        message.run(
          m.info.id,
          s.info.id,
          created(m),
          created(m),
          JSON.stringify(strip(m.info, ['id', 'sessionID'])),
        );
        for (const p of m.parts)
          part.run(
            p.id,
            m.info.id,
            s.info.id,
            created(m),
            created(m),
            JSON.stringify(strip(p, ['id', 'sessionID', 'messageID'])),
          );
      }
    }
  })();
}

/** V2 rows: one `session_message` per message, typed by role, an assistant's parts folded into `content`. */
export function insertV2(db: Database.Database, sessions: ExportSession[]): void {
  const session = db.prepare(
    `INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
     VALUES (?, 'global', ?, 'slug', ?, ?, ?, ?, ?)`,
  );
  const row = db.prepare(
    'INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const s of sessions) {
      const time = s.info.time as { created?: number; updated?: number } | undefined;
      session.run(
        s.info.id,
        s.info.parentID ?? null,
        s.info.directory ?? '/',
        s.info.title ?? null,
        '2.0.12',
        time?.created ?? 0,
        time?.updated ?? 0,
      );
      s.messages.forEach((m, seq) => {
        const [type, data] = v2Row(m);
        row.run(m.info.id, s.info.id, type, seq, created(m), created(m), JSON.stringify(data));
      });
    }
  })();
}

function v2Row(message: ExportMessage): [string, Record<string, unknown>] {
  const time = { created: created(message) };
  if (message.info.role === 'user') {
    const text = message.parts.filter((p) => p.type === 'text').map((p) => String(p.text));
    const synthetic = message.parts.every((p) => p.type !== 'text' || p.synthetic === true);
    if (synthetic && text.length > 0)
      return ['synthetic', { sessionID: message.info.sessionID, text: text.join('\n'), time }];
    return ['user', { text: text.join('\n'), files: [], agents: [], references: [], time }];
  }
  if (message.info.summary === true) {
    const summary = message.parts.find((p) => p.type === 'text')?.text;
    return ['compaction', { reason: 'auto', summary, recent: '', time }];
  }
  const content = message.parts.flatMap((p): Record<string, unknown>[] => {
    if (p.type === 'text') return [{ type: 'text', id: p.id, text: p.text }];
    if (p.type === 'reasoning') return [{ type: 'reasoning', id: p.id, text: p.text }];
    if (p.type !== 'tool') return [];
    const state = p.state as {
      status: string;
      input?: unknown;
      output?: string;
      error?: string;
      time?: { compacted?: number };
    };
    const toolTime: Record<string, number> = { created: time.created };
    if (state.time?.compacted) toolTime.pruned = state.time.compacted;
    const v2 =
      state.status === 'completed'
        ? {
            status: 'completed',
            input: state.input,
            content: [{ type: 'text', text: state.output }],
            structured: {},
            result: null,
            outputPaths: [],
          }
        : state.status === 'error'
          ? {
              status: 'error',
              input: state.input,
              content: [],
              structured: {},
              error: { type: 'unknown', message: state.error },
              result: null,
            }
          : state.status === 'running'
            ? { status: 'running', input: state.input, structured: {}, content: [] }
            : { status: 'pending', input: JSON.stringify(state.input ?? {}) };
    return [{ type: 'tool', id: p.callID, name: p.tool, state: v2, time: toolTime }];
  });
  const info = message.info as {
    modelID?: string;
    providerID?: string;
    tokens?: unknown;
    finish?: string;
    error?: unknown;
    agent?: string;
  };
  const data: Record<string, unknown> = {
    agent: info.agent ?? 'build',
    model: { id: info.modelID ?? 'model', providerID: info.providerID ?? 'provider' },
    content,
    time,
  };
  if (info.finish) data.finish = info.finish;
  if (info.tokens) data.tokens = info.tokens;
  if (info.error)
    data.error = {
      type: 'unknown',
      message: (info.error as { data?: { message?: string } }).data?.message ?? 'error',
    };
  return ['assistant', data];
}

/** A database holding the sessions in the V1 tables, closed (so checkpointed: no -wal left). */
export function writeV1(path: string, sessions: ExportSession[]): void {
  const db = openStore(path, v1Schema);
  insertV1(db, sessions);
  db.close();
}

/** A database with V2 tables (and V1 ones holding `v1` when given), closed. */
export function writeV2(path: string, sessions: ExportSession[], v1: ExportSession[] = []): void {
  const db = openStore(path, `${v1.length > 0 ? v1Schema : ''}${v2Schema}`);
  if (v1.length > 0) insertV1(db, v1);
  insertV2(db, sessions);
  db.close();
}

const t0 = 1770000000000;

/** A small session: one prompt, one step with a tool call, one answer. `tag` tells copies apart. */
export function smallSession(
  id: string,
  tag: string,
  extra: Partial<ExportSession['info']> = {},
): ExportSession {
  const part = (
    message: string,
    n: number,
    fields: { type: string; [key: string]: unknown },
  ): ExportPart => ({
    id: `prt_${message}_${n}`,
    sessionID: id,
    messageID: message,
    ...fields,
  });
  const user = `msg_${id}_1`;
  const step = `msg_${id}_2`;
  const answer = `msg_${id}_3`;
  const assistant = {
    role: 'assistant',
    parentID: user,
    modelID: 'm1',
    providerID: 'p',
    agent: 'build',
    mode: 'build',
  };
  return {
    info: {
      id,
      directory: '/work/project',
      title: `session ${id}`,
      version: '1.2.0',
      time: { created: t0, updated: t0 + 9 },
      ...extra,
    },
    messages: [
      {
        info: { id: user, sessionID: id, role: 'user', time: { created: t0 + 1 } },
        parts: [part(user, 1, { type: 'text', text: `prompt ${tag}` })],
      },
      {
        info: { id: step, sessionID: id, ...assistant, finish: 'tool-calls', time: { created: t0 + 2 } },
        parts: [
          part(step, 1, { type: 'step-start' }),
          part(step, 2, {
            type: 'tool',
            callID: `call_${id}`,
            tool: 'bash',
            state: {
              status: 'completed',
              input: { command: 'ls' },
              output: `files ${tag}`,
              title: 'ls',
              metadata: {},
              time: { start: t0, end: t0 },
            },
          }),
          part(step, 3, {
            type: 'step-finish',
            reason: 'tool-calls',
            cost: 0,
            tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 0, write: 0 } },
          }),
        ],
      },
      {
        info: { id: answer, sessionID: id, ...assistant, finish: 'stop', time: { created: t0 + 3 } },
        parts: [
          part(answer, 1, { type: 'step-start' }),
          part(answer, 2, { type: 'text', text: `answer ${tag}` }),
        ],
      },
    ],
  };
}
