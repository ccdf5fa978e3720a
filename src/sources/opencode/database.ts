// Reading an `opencode.db` without touching it. opencode keeps it in WAL mode and is often running: opening the
// user's file (even read-only) can write its -shm, take locks, or checkpoint. So it is read through
// `../sqlite.ts`, which copies the database and its -wal into a private folder and opens only the copy (always,
// never in place: a database another process holds a lock on is still read, as of its last commit).

import Database from 'better-sqlite3';
import { checkHeader, openSqlite, type SqliteSnapshot, sqliteProblem } from '../sqlite.js';
import type { ParsedSession, Spawn, Warning } from '../types.js';
import { type Built, buildSession, rowSource, type Tally } from './parse.js';
import {
  byId,
  isObject,
  type MessageInfo,
  messageInfo,
  type PartData,
  parseJson,
  partData,
  type RawMessage,
  revertOf,
  type SessionInfo,
} from './records.js';

type Db = InstanceType<typeof Database>;

/** A private read-only copy of an opencode database (see `../sqlite.ts`). */
export function openDatabase(file: string): SqliteSnapshot {
  return openSqlite(file, { program: 'opencode' });
}

/** The conversation rows of the V2 `session_message` table (other types are events, not conversation). */
const v2Turns = ['user', 'assistant', 'compaction', 'synthetic', 'shell', 'system'];
/** V2 rows known to carry no conversation. */
const v2Quiet = new Set(['agent-switched', 'model-switched', 'location-switched', 'idle']);

interface SessionRow {
  id: string;
  parent_id?: string | null;
  directory?: string | null;
  title?: string | null;
  version?: string | null;
  time_created?: number | null;
  time_updated?: number | null;
  revert?: string | null;
}

export interface DatabaseRead {
  sessions: Iterable<ParsedSession>;
  spawns: Spawn[];
  /** Rows read and rows skipped, complete once `sessions` was iterated. */
  counts: { rows: number; skipped: number };
}

/** opencode's wording of a SQLite error (its tests pin it): SQLite's message, with a hint for a damaged file. */
function describeSqlite(error: unknown): Error {
  const message = (error as Error).message;
  const problem = sqliteProblem(error);
  if (problem === 'corrupt' || problem === 'not-sqlite')
    return new Error(`cannot read the database: ${message} (damaged or half-written?)`);
  return new Error(`cannot read the database: ${message}`);
}

/**
 * The sessions of one opencode.db, one at a time. V2 tables win over V1 for a session that has V2 turns (the
 * copy opencode 2.x keeps writing); every other session is read from the V1 tables.
 */
export function readDatabase(file: string, warnings: Warning[], tally: Tally): DatabaseRead {
  try {
    checkHeader(file, 'opencode.db');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code) throw error;
    throw new Error(`${(error as Error).message}; skipped`);
  }
  const spawns: Spawn[] = [];
  const counts = { rows: 0, skipped: 0 };
  const sessions = function* (): Generator<ParsedSession> {
    let snapshot: SqliteSnapshot;
    try {
      snapshot = openDatabase(file);
    } catch (error) {
      throw error instanceof Database.SqliteError ? describeSqlite(error) : error;
    }
    try {
      const reader = new Reader(snapshot.db, file, warnings, counts, tally);
      const spawnedBy = new Map<string, string>();
      for (const { info, generation } of reader.sessionList()) {
        let built: Built | undefined;
        try {
          const raw = generation === 'v2' ? reader.v2Messages(info.id) : reader.v1Messages(info.id);
          built = buildSession(info, raw, { origin: 'file', tally, spawnedBy });
        } catch (error) {
          if (!(error instanceof Database.SqliteError)) throw error;
          counts.skipped++;
          warnings.push({
            file,
            message: `session ${info.id}: ${describeSqlite(error).message}; skipped`,
          });
          continue;
        }
        spawns.push(...built.spawns);
        if (built.session.messages.length > 0) yield built.session;
      }
    } finally {
      snapshot.close();
    }
  };
  return { sessions: { [Symbol.iterator]: sessions }, spawns, counts };
}

class Reader {
  private readonly tables: Set<string>;
  /** The per-session queries, prepared once per database rather than once per session (issue 21). */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly warnings: Warning[],
    private readonly counts: { rows: number; skipped: number },
    private readonly tally: Tally,
  ) {
    try {
      this.tables = new Set(
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
      );
    } catch (error) {
      throw describeSqlite(error);
    }
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private columns(table: string): Set<string> {
    return new Set(this.db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]);
  }

  private bad(table: string, row: string, problem: string): void {
    this.counts.skipped++;
    this.warnings.push({ file: this.file, message: `table ${table}, row ${row}: ${problem}; skipped` });
  }

  /** Every session once, parents before their children (by creation time), with the generation to read. */
  sessionList(): { info: SessionInfo; generation: 'v1' | 'v2' }[] {
    const hasV1 = this.tables.has('message') && this.tables.has('part');
    const hasV2 = this.tables.has('session_message');
    const sessionTables = ['session_v2', 'session'].filter((table) => this.tables.has(table));
    if (sessionTables.length === 0 || (!hasV1 && !hasV2))
      throw new Error('no opencode session tables (session, message, part or session_v2, session_message)');
    const withV2Turns = new Set<string>(
      hasV2
        ? (this.db
            .prepare(
              `SELECT DISTINCT session_id FROM session_message WHERE type IN (${v2Turns.map(() => '?').join(', ')})`,
            )
            .pluck()
            .all(...v2Turns) as string[])
        : [],
    );
    const seen = new Map<string, SessionInfo>();
    // session_v2 first: for a session in both tables, its row there is the one opencode keeps updating.
    for (const table of sessionTables) {
      const have = this.columns(table);
      const wanted = [
        'id',
        'parent_id',
        'directory',
        'title',
        'version',
        'time_created',
        'time_updated',
        'revert',
      ];
      const select = wanted.filter((column) => have.has(column)).join(', ');
      const order = have.has('time_created') ? 'time_created, id' : 'id';
      for (const row of this.db
        .prepare(`SELECT ${select} FROM ${table} ORDER BY ${order}`)
        .iterate() as Iterable<SessionRow>) {
        this.counts.rows++;
        if (typeof row.id !== 'string' || row.id === '') {
          this.bad(table, String(row.id), 'no session id');
          continue;
        }
        if (!seen.has(row.id)) seen.set(row.id, sessionFromRow(row));
      }
    }
    const list = [...seen.values()]
      .map((info) => ({
        info,
        generation: withV2Turns.has(info.id) || !hasV1 ? ('v2' as const) : ('v1' as const),
      }))
      .sort((a, b) => (a.info.time?.created ?? 0) - (b.info.time?.created ?? 0) || byId(a.info, b.info));
    return list;
  }

  /** V1: `message.data` is MessageV2.Info without id/sessionID, `part.data` a Part without its ids. */
  v1Messages(session: string): RawMessage[] {
    const messages = new Map<string, RawMessage>();
    const rows = this.prepared(
      'SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id',
    ).iterate(session) as Iterable<{ id: string; time_created: number; data: string }>;
    for (const row of rows) {
      this.counts.rows++;
      const info = messageInfo(parseJson(row.data));
      if (!info) {
        this.bad(
          'message',
          row.id,
          isObject(parseJson(row.data)) ? 'no role user/assistant' : 'data is not valid JSON',
        );
        continue;
      }
      info.time ??= { created: row.time_created };
      messages.set(row.id, { id: row.id, info, parts: [], source: rowSource(this.file, 'message', row.id) });
    }
    const parts = this.prepared(
      `SELECT p.id, p.message_id, p.data FROM part p JOIN message m ON m.id = p.message_id
         WHERE m.session_id = ? ORDER BY p.message_id, p.id`,
    ).iterate(session) as Iterable<{ id: string; message_id: string; data: string }>;
    for (const row of parts) {
      this.counts.rows++;
      const message = messages.get(row.message_id);
      if (!message) continue;
      const part = partData(parseJson(row.data));
      if (!part) {
        this.bad('part', row.id, isObject(parseJson(row.data)) ? 'no part type' : 'data is not valid JSON');
        continue;
      }
      message.parts.push({ ...part, id: row.id });
    }
    return [...messages.values()];
  }

  /** V2: one `session_message` row per message, `type` the role, an assistant's parts in `data.content`. */
  v2Messages(session: string): RawMessage[] {
    const have = this.columns('session_message');
    const order = have.has('seq') ? 'seq' : 'time_created, id';
    const rows = this.prepared(
      `SELECT id, type, time_created, data FROM session_message WHERE session_id = ? ORDER BY ${order}`,
    ).iterate(session) as Iterable<{ id: string; type: string; time_created: number; data: string }>;
    const out: RawMessage[] = [];
    for (const row of rows) {
      this.counts.rows++;
      const data = parseJson(row.data);
      if (!isObject(data)) {
        this.bad('session_message', row.id, 'data is not valid JSON');
        continue;
      }
      const message = v2Message(row, data, rowSource(this.file, 'session_message', row.id));
      if (message) out.push(message);
      else if (!v2Quiet.has(row.type)) this.tally.unknown(`session_message/${row.type}`);
    }
    return out;
  }
}

function sessionFromRow(row: SessionRow): SessionInfo {
  const info: SessionInfo = { id: row.id };
  if (row.parent_id) info.parentID = row.parent_id;
  if (row.directory) info.directory = row.directory;
  if (row.title) info.title = row.title;
  if (row.version) info.version = row.version;
  info.time = {};
  if (typeof row.time_created === 'number') info.time.created = row.time_created;
  if (typeof row.time_updated === 'number') info.time.updated = row.time_updated;
  const revert = revertOf(row.revert);
  if (revert) info.revert = revert;
  return info;
}

type Data = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function created(data: Data, fallback: number): number {
  const time = data.time;
  return isObject(time) && typeof time.created === 'number' ? time.created : fallback;
}

/** A V2 row in the V1 shape the converter reads (packages/core/src/session/message.ts). */
function v2Message(
  row: { id: string; type: string; time_created: number },
  data: Data,
  source: RawMessage['source'],
): RawMessage | undefined {
  const time = { created: created(data, row.time_created) };
  const user = (parts: PartData[]): RawMessage => ({
    id: row.id,
    info: { role: 'user', time },
    parts: parts.map((part, index) => ({ ...part, id: `${row.id}:${index}` })),
    source,
  });
  switch (row.type) {
    case 'user': {
      const parts: PartData[] = [{ type: 'text', text: str(data.text) ?? '' }];
      for (const file of Array.isArray(data.files) ? data.files : []) {
        if (!isObject(file)) continue;
        const part: PartData = { type: 'file', mime: str(file.mime) ?? '' };
        const url = str(file.uri) ?? str(file.url);
        if (url) part.url = url;
        const name = str(file.name) ?? str(file.filename);
        if (name) part.filename = name;
        parts.push(part);
      }
      return user(parts);
    }
    case 'synthetic':
    case 'system':
      // Harness text: a synthetic prompt, or a context update opencode inserts.
      return user([{ type: 'text', text: str(data.text) ?? '', synthetic: true }]);
    case 'shell':
      return user([
        { type: 'text', text: `$ ${str(data.command) ?? ''}\n${str(data.output) ?? ''}`, synthetic: true },
      ]);
    case 'compaction':
      return {
        id: row.id,
        info: { role: 'assistant', summary: true, finish: 'stop', time },
        parts: [{ id: `${row.id}:0`, type: 'text', text: str(data.summary) ?? '' }],
        source,
      };
    case 'assistant':
      return v2Assistant(row.id, data, time, source);
    default:
      return undefined;
  }
}

function v2Assistant(
  id: string,
  data: Data,
  time: { created: number },
  source: RawMessage['source'],
): RawMessage {
  const info: MessageInfo = { role: 'assistant', time };
  const model = isObject(data.model) ? data.model : {};
  if (typeof model.id === 'string') info.modelID = model.id;
  if (typeof model.providerID === 'string') info.providerID = model.providerID;
  if (typeof data.finish === 'string') info.finish = data.finish;
  if (isObject(data.tokens)) info.tokens = data.tokens;
  if (data.error !== undefined && data.error !== null) info.error = v2Error(data.error);
  const parts: (PartData & { id: string })[] = [{ id: `${id}:start`, type: 'step-start' }];
  const content = Array.isArray(data.content) ? data.content : [];
  content.forEach((item, index) => {
    if (!isObject(item)) return;
    const partId = `${id}:${String(index).padStart(4, '0')}`;
    if (item.type === 'text')
      parts.push({ id: partId, type: 'text', text: str(item.text) ?? '', ignored: item.ignored === true });
    else if (item.type === 'reasoning') {
      const part: PartData & { id: string } = { id: partId, type: 'reasoning', text: str(item.text) ?? '' };
      if (isObject(item.providerMetadata)) part.metadata = item.providerMetadata;
      parts.push(part);
    } else if (item.type === 'tool')
      parts.push({
        id: partId,
        type: 'tool',
        callID: str(item.id) ?? partId,
        tool: str(item.name) ?? '',
        state: v2State(item.state, item.time),
      });
    else parts.push({ id: partId, type: String(item.type) });
  });
  if (info.tokens) parts.push({ id: `${id}:~finish`, type: 'step-finish', tokens: info.tokens });
  return { id, info, parts, source };
}

function v2Error(error: unknown): NonNullable<MessageInfo['error']> {
  if (typeof error === 'string') return { name: 'Error', message: error };
  if (!isObject(error)) return { name: 'Error' };
  const name = str(error.name) ?? str(error.type) ?? str(error._tag) ?? 'Error';
  const data = isObject(error.data) ? error.data : {};
  const message = str(error.message) ?? str(data.message);
  return message ? { name, message } : { name };
}

/** V2 tool state → V1: output is the text of `content`; pruned outputs were cleared for the model. */
function v2State(state: unknown, time: unknown): PartData['state'] {
  if (!isObject(state)) return { status: 'pending' };
  const status = str(state.status) ?? 'pending';
  const out: NonNullable<PartData['state']> = { status, input: state.input };
  const title = str(state.title);
  if (title) out.title = title;
  if (isObject(state.metadata)) out.metadata = state.metadata;
  const content = Array.isArray(state.content) ? state.content.filter(isObject) : [];
  const text = content
    .filter((item) => item.type === 'text')
    .map((item) => str(item.text) ?? '')
    .join('\n');
  if (status === 'completed') {
    out.output = text;
    const attachments = content
      .filter((item) => item.type === 'file')
      .map((item) => ({ mime: str(item.mime) ?? '', url: str(item.uri) ?? str(item.url) ?? '' }));
    if (attachments.length > 0) out.attachments = attachments;
    const pruned = isObject(time) ? time.pruned : undefined;
    if (typeof pruned === 'number') out.time = { compacted: pruned };
  }
  if (status === 'error') {
    const error = state.error;
    out.error =
      typeof error === 'string'
        ? error
        : isObject(error)
          ? (str(error.message) ?? JSON.stringify(error))
          : text;
  }
  return out;
}
