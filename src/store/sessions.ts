import type { Statement } from 'better-sqlite3';
import { contentHash, fieldsHash, sameJson } from '../model/canonical-json.js';
import { sessionId } from '../model/ids.js';
import {
  type MessageOrigin,
  type RequestLog,
  type RequestRecord,
  type RequestShape,
  resolveRequests,
  type TurnRequest,
  type WireMessage,
} from '../model/request.js';
import type { AgentId, Message, Session, SessionKind, ToolResult } from '../model/session.js';
import { toolCalls } from '../model/session.js';
import { recordedPartsJson } from '../sources/parts-json.js';
import type { GrownRequests, ParsedSession, Spawn } from '../sources/types.js';
import { type Db, StoreError, statementCache } from './db.js';

export type SaveOutcome = 'new' | 'updated' | 'unchanged' | 'kept';

export interface SessionRow {
  id: string;
  agent: AgentId;
  source_id: string;
  kind: SessionKind;
  origin: 'file' | 'mirror';
  parent_id: string | null;
  parent_tool_call_id: string | null;
  continues_session_id: string | null;
  continues_native_id: string | null;
  continues_line: number | null;
  cwd: string | null;
  title: string | null;
  started_at: string | null;
  ended_at: string | null;
  version: string | null;
  source_file: string | null;
  message_count: number;
  turn_count: number;
  tool_call_count: number;
  unanswered_count: number;
  meta_hash: string;
  /** What the session's request rows were made from (null: it has none). */
  requests_hash: string | null;
}

interface MessageRow {
  seq: number;
  role: Message['role'];
  native_id: string | null;
  model: string | null;
  timestamp: string | null;
  injected: number;
  compaction: number;
  preserved: string | null;
  attachment: string | null;
  usage: string | null;
  parts: string;
  source: string;
  hash: string;
}

function counts(messages: Message[]) {
  let turns = 0;
  let calls = 0;
  let unanswered = 0;
  for (const message of messages) {
    if (message.role === 'assistant' && !message.injected) turns++;
    for (const call of toolCalls(message)) {
      calls++;
      if (call.unanswered) unanswered++;
    }
  }
  return {
    message_count: messages.length,
    turn_count: turns,
    tool_call_count: calls,
    unanswered_count: unanswered,
  };
}

function metaOf(session: Session) {
  // The request log is compared by its own hash (requestsHash): hashing its JSON would cost as much as storing it.
  const { messages: _messages, requests: _requests, ...meta } = session;
  return meta;
}

/** Cheap identity of a request log: the records, and which hash resolved to what kind of message. */
function requestsHash(log: RequestLog | undefined): string | null {
  if (!log) return null;
  return logHash(
    log.records,
    Object.keys(log.shapes),
    Object.entries(log.messages).map(([hash, m]) => [hash, m.origin]),
  );
}

/** What requestsHash takes of a log, whether it was just read or is read back from the store's columns. */
function logHash(
  records: readonly Omit<RequestRecord, 'params' | 'cacheControl'>[],
  shapes: string[],
  messages: [string, string][],
): string | null {
  if (records.length === 0) return null;
  const fields: (string | number | null)[] = [];
  for (const r of records)
    fields.push(
      r.id,
      r.responseId ?? null,
      r.shapeHash,
      r.base ?? null,
      r.keep,
      r.tail.join(','),
      r.digest ?? null,
      r.line ?? null,
    );
  for (const hash of shapes.sort()) fields.push('shape', hash);
  messages.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [hash, origin] of messages) fields.push(hash, origin);
  return fieldsHash(fields);
}

export class SessionStore {
  /** Each statement is prepared once per store and reused. */
  private readonly sql: (text: string) => Statement;
  /** The last shapes stored, by the agent's shape hash: their values and body digest (see insertShapes). */
  private readonly shapes = new Map<string, { shape: RequestShape; digest: string }>();

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  /**
   * Stores a parsed session. Unchanged → nothing written; grown (the stored messages are a prefix of the new
   * ones) → only the new messages are added; anything else → the messages are replaced. Must run inside the
   * caller's transaction so a file's sessions land together or not at all.
   */
  save(
    parsed: ParsedSession,
    sourceFile: string,
  ): {
    outcome: SaveOutcome;
    /** Messages written by this save: all of them for a new or rewritten session, the new tail of one that grew. */
    added: number;
    /** The stored messages were not a prefix of the new ones: they were all replaced. */
    rewritten: boolean;
    stored: { messages: number; toolCalls: number };
  } {
    const existing = this.row(parsed.id);
    if (existing && parsed.origin === 'mirror' && existing.origin === 'file')
      return { outcome: 'kept', added: 0, rewritten: false, stored: { messages: 0, toolCalls: 0 } };
    const { origin, ...session } = parsed;
    // A session that names the history it continues by line keeps it; any other is checked for a copy.
    let messages = session.messages;
    if (session.continues?.line === undefined) {
      const dropped = this.dropCopiedHistory(session);
      messages = dropped.messages;
      if (dropped.continues) session.continues = dropped.continues;
      else delete session.continues;
    }
    const rows = messages.map(toRow);
    const hashes = rows.map((r) => r.hash);
    const metaHash = contentHash({ ...metaOf(session), origin, sourceFile });
    const row = {
      id: session.id,
      agent: session.agent,
      source_id: session.sourceId,
      kind: session.kind,
      origin,
      parent_id: session.parentId ?? null,
      parent_tool_call_id: session.parentToolCallId ?? null,
      continues_session_id: session.continues?.sessionId ?? null,
      continues_native_id: session.continues?.nativeId ?? null,
      continues_line: session.continues?.line ?? null,
      cwd: session.cwd ?? null,
      title: session.title ?? null,
      started_at: session.startedAt ?? null,
      ended_at: session.endedAt ?? null,
      version: session.version ?? null,
      source_file: sourceFile,
      ...counts(messages),
      meta_hash: metaHash,
      requests_hash: requestsHash(session.requests),
      ingested_at: new Date().toISOString(),
    };

    let keep = 0;
    let rewritten = false;
    if (existing) {
      const stored = this.sql('SELECT hash FROM messages WHERE session_id = ? ORDER BY seq')
        .pluck()
        .all(session.id) as string[];
      const isPrefix = stored.length <= hashes.length && stored.every((hash, i) => hash === hashes[i]);
      if (
        isPrefix &&
        stored.length === hashes.length &&
        existing.meta_hash === metaHash &&
        existing.requests_hash === row.requests_hash
      ) {
        return {
          outcome: 'unchanged',
          added: 0,
          rewritten: false,
          stored: { messages: row.message_count, toolCalls: row.tool_call_count },
        };
      }
      if (isPrefix) keep = stored.length;
      else {
        this.sql('DELETE FROM messages WHERE session_id = ?').run(session.id);
        rewritten = true;
      }
      this.sql(
        `UPDATE sessions SET kind=@kind, origin=@origin, parent_id=@parent_id,
             parent_tool_call_id=@parent_tool_call_id, continues_session_id=@continues_session_id,
             continues_native_id=@continues_native_id, continues_line=@continues_line, cwd=@cwd, title=@title,
             started_at=@started_at,
             ended_at=@ended_at, version=@version, source_file=@source_file, message_count=@message_count,
             turn_count=@turn_count, tool_call_count=@tool_call_count, unanswered_count=@unanswered_count,
             meta_hash=@meta_hash, requests_hash=@requests_hash, ingested_at=@ingested_at
           WHERE id=@id`,
      ).run(row);
    } else {
      this.sql(
        `INSERT INTO sessions (id, agent, source_id, kind, origin, parent_id, parent_tool_call_id,
             continues_session_id, continues_native_id, continues_line, cwd, title, started_at, ended_at, version,
             source_file, message_count, turn_count, tool_call_count, unanswered_count, meta_hash, requests_hash,
             ingested_at)
           VALUES (@id, @agent, @source_id, @kind, @origin, @parent_id, @parent_tool_call_id,
             @continues_session_id, @continues_native_id, @continues_line, @cwd, @title, @started_at, @ended_at, @version,
             @source_file, @message_count, @turn_count, @tool_call_count, @unanswered_count, @meta_hash,
             @requests_hash, @ingested_at)`,
      ).run(row);
    }
    this.insertRows(session.id, rows, keep, 0);
    if (!existing || existing.requests_hash !== row.requests_hash)
      this.saveRequests(session.id, session.requests, parsed.messages);
    return {
      outcome: existing ? 'updated' : 'new',
      added: messages.length - keep,
      rewritten,
      // What the session holds of its own, copied history left out.
      stored: { messages: row.message_count, toolCalls: row.tool_call_count },
    };
  }

  /**
   * Replaces the session's request records. Shapes and messages are content-addressed (by their hash), so those
   * already stored are kept and only new ones are written: a live log that grew adds its new messages only.
   */
  private saveRequests(id: string, log: RequestLog | undefined, conversation: readonly Message[]): void {
    this.sql('DELETE FROM requests WHERE session_id = ?').run(id);
    if (!log) {
      const digests = this.sql('SELECT DISTINCT digest FROM request_shapes WHERE session_id = ?')
        .pluck()
        .all(id) as string[];
      this.sql('DELETE FROM request_shapes WHERE session_id = ?').run(id);
      const unused = this.sql(
        'DELETE FROM shape_bodies WHERE digest = @digest AND NOT EXISTS (SELECT 1 FROM request_shapes WHERE digest = @digest)',
      );
      for (const digest of digests) unused.run({ digest });
      this.sql('DELETE FROM request_messages WHERE session_id = ?').run(id);
      return;
    }
    this.insertRecords(id, log.records, 0);
    this.insertShapes(id, log.shapes);
    this.insertRequestMessages(id, log.messages, conversation);
  }

  /**
   * Adds what a continued read found to the session's request log (records after those stored, a stored record
   * now answered, new shapes and messages) and re-hashes the log, so the row ends as save() would leave it.
   * `conversation` holds at least the messages the new request messages' tool results are in.
   */
  private extendRequests(id: string, grown: GrownRequests, conversation: readonly Message[]): void {
    const held = this.requestCount(id);
    if (held !== grown.from)
      throw new StoreError(
        `session ${id} holds ${held} request records, not the ${grown.from} the reader had`,
      );
    if (grown.bound)
      this.sql('UPDATE requests SET response_id = ? WHERE session_id = ? AND seq = ?').run(
        grown.bound.responseId,
        id,
        grown.bound.seq,
      );
    this.insertRecords(id, grown.records, grown.from);
    this.insertShapes(id, grown.shapes);
    this.insertRequestMessages(id, grown.messages, conversation);
    this.sql('UPDATE sessions SET requests_hash = ? WHERE id = ?').run(this.storedRequestsHash(id), id);
  }

  /** How many request records the session holds. */
  requestCount(id: string): number {
    return this.sql('SELECT count(*) FROM requests WHERE session_id = ?').pluck().get(id) as number;
  }

  /** Where the message of this hash in the session's request log came from; undefined when it holds none. */
  requestMessage(id: string, hash: string): MessageOrigin | undefined {
    return this.sql('SELECT origin FROM request_messages WHERE session_id = ? AND hash = ?')
      .pluck()
      .get(id, hash) as MessageOrigin | undefined;
  }

  /** requestsHash() of the log as stored, from the columns it hashes (no message or shape is parsed). */
  private storedRequestsHash(id: string): string | null {
    const records = this.sql(
      'SELECT record_id, response_id, shape_hash, base, keep, tail, digest, line FROM requests WHERE session_id = ? ORDER BY seq',
    ).all(id) as {
      record_id: string;
      response_id: string | null;
      shape_hash: string;
      base: string | null;
      keep: number;
      tail: string;
      digest: string | null;
      line: number | null;
    }[];
    const shapes = this.sql('SELECT hash FROM request_shapes WHERE session_id = ?')
      .pluck()
      .all(id) as string[];
    const messages = this.sql('SELECT hash, origin FROM request_messages WHERE session_id = ?')
      .raw()
      .all(id) as [string, string][];
    return logHash(
      records.map((r) => ({
        id: r.record_id,
        ...optional('responseId', r.response_id ?? undefined),
        shapeHash: r.shape_hash,
        ...optional('base', r.base ?? undefined),
        keep: r.keep,
        tail: JSON.parse(r.tail) as string[],
        ...optional('digest', r.digest ?? undefined),
        ...optional('line', r.line ?? undefined),
      })),
      shapes,
      messages,
    );
  }

  private insertRecords(id: string, records: readonly RequestRecord[], from: number): void {
    const record = this.sql(
      `INSERT INTO requests (session_id, seq, record_id, response_id, shape_hash, params, base, keep, tail,
         cache_control, digest, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    records.forEach((r, i) => {
      record.run(
        id,
        from + i,
        r.id,
        r.responseId ?? null,
        r.shapeHash,
        JSON.stringify(r.params),
        r.base ?? null,
        r.keep,
        JSON.stringify(r.tail),
        JSON.stringify(r.cacheControl),
        r.digest ?? null,
        r.line ?? null,
      );
    });
  }

  /** Shapes and messages are content-addressed: those the session holds already are not written again. */
  private insertShapes(id: string, shapes: RequestLog['shapes']): void {
    const entries = Object.entries(shapes);
    if (entries.length === 0) return;
    const stored = this.storedHashes('request_shapes', id);
    const shape = this.sql('INSERT INTO request_shapes (session_id, hash, digest) VALUES (?, ?, ?)');
    // OR IGNORE rather than a set of digests already written: a transaction rolled back would leave the set
    // naming bodies that are not there.
    const body = this.sql('INSERT OR IGNORE INTO shape_bodies (digest, system, tools) VALUES (?, ?, ?)');
    const present = this.sql('SELECT 1 FROM shape_bodies WHERE digest = ?').pluck();
    for (const [hash, s] of entries) {
      if (stored.has(hash)) continue;
      // Most sessions of a project offer the same system and tools: a shape equal to one stored in this process
      // (same values, same key order, so the same JSON) has its digest, and its body is not serialised again
      // while it is still there.
      const known = this.shapes.get(hash);
      if (known && sameJson(known.shape, s) && present.get(known.digest) !== undefined) {
        shape.run(id, hash, known.digest);
        continue;
      }
      const system = JSON.stringify(s.system);
      const tools = JSON.stringify(s.tools);
      const digest = fieldsHash([system, tools]);
      body.run(digest, system, tools);
      shape.run(id, hash, digest);
      if (this.shapes.size >= 64) this.shapes.delete(this.shapes.keys().next().value as string);
      this.shapes.set(hash, { shape: s, digest });
    }
  }

  private insertRequestMessages(
    id: string,
    messages: RequestLog['messages'],
    conversation: readonly Message[],
  ): void {
    const entries = Object.entries(messages);
    if (entries.length === 0) return;
    const stored = this.storedHashes('request_messages', id);
    const message = this.sql(
      'INSERT INTO request_messages (session_id, hash, message, origin) VALUES (?, ?, ?, ?)',
    );
    const outputs = resultOutputs(conversation);
    for (const [hash, m] of entries) {
      if (stored.has(hash)) continue;
      const slim = m.origin === 'transcript' ? withResultRefs(m.message, outputs) : undefined;
      message.run(id, hash, JSON.stringify(slim ?? m.message), m.origin);
    }
  }

  private storedHashes(table: 'request_shapes' | 'request_messages', id: string): Set<string> {
    return new Set(this.sql(`SELECT hash FROM ${table} WHERE session_id = ?`).pluck().all(id) as string[]);
  }

  /** The session's recorded request log, as saved; undefined when it has none. */
  requestLog(id: string): RequestLog | undefined {
    const records = this.sql('SELECT * FROM requests WHERE session_id = ? ORDER BY seq').all(id) as {
      record_id: string;
      response_id: string | null;
      shape_hash: string;
      params: string;
      base: string | null;
      keep: number;
      tail: string;
      cache_control: string;
      digest: string | null;
      line: number | null;
    }[];
    if (records.length === 0) return undefined;
    const log: RequestLog = { records: [], shapes: {}, messages: {} };
    for (const r of records) {
      const record: RequestLog['records'][number] = {
        id: r.record_id,
        shapeHash: r.shape_hash,
        params: JSON.parse(r.params),
        keep: r.keep,
        tail: JSON.parse(r.tail),
        cacheControl: JSON.parse(r.cache_control),
      };
      if (r.response_id !== null) record.responseId = r.response_id;
      if (r.base !== null) record.base = r.base;
      if (r.digest !== null) record.digest = r.digest;
      if (r.line !== null) record.line = r.line;
      log.records.push(record);
    }
    const shapes = this.sql(
      `SELECT s.hash, b.system, b.tools FROM request_shapes s JOIN shape_bodies b ON b.digest = s.digest
         WHERE s.session_id = ?`,
    ).all(id) as {
      hash: string;
      system: string;
      tools: string;
    }[];
    for (const s of shapes) log.shapes[s.hash] = { system: JSON.parse(s.system), tools: JSON.parse(s.tools) };
    const messages = this.sql('SELECT hash, message, origin FROM request_messages WHERE session_id = ?').all(
      id,
    ) as {
      hash: string;
      message: string;
      origin: 'blob' | 'transcript';
    }[];
    for (const m of messages) log.messages[m.hash] = { message: JSON.parse(m.message), origin: m.origin };
    return log;
  }

  saveSpawn(spawn: Spawn, agent: AgentId): void {
    this.sql('INSERT OR REPLACE INTO spawns (child_id, parent_id, tool_call_id) VALUES (?, ?, ?)').run(
      sessionId(agent, spawn.childSourceId),
      sessionId(agent, spawn.parentSourceId),
      spawn.toolCallId,
    );
  }

  /**
   * A resumed or forked session file starts with a copy of another session's history (same native ids). Keep
   * that history once: this session continues the other one at the last shared message.
   */
  private dropCopiedHistory(session: Session): { messages: Message[]; continues?: Session['continues'] } {
    const first = session.messages[0]?.nativeId;
    if (!first) return { messages: session.messages };
    const owner = this.sql('SELECT session_id FROM messages WHERE native_id = ? AND session_id != ? LIMIT 1')
      .pluck()
      .get(first, session.id) as string | undefined;
    if (!owner) return { messages: session.messages };
    const other = this.history(owner);
    // Only a copy from the very start of the other history is a continuation; anything else is left alone.
    if (other.messages[0]?.nativeId !== first) return { messages: session.messages };
    // A copy has the same ids and the same content; ids alone could be reused by a hand-made or tampered log.
    const same = (a: Message | undefined, b: Message | undefined) =>
      a?.nativeId !== undefined &&
      a.nativeId === b?.nativeId &&
      contentHash({ role: a.role, parts: a.parts }) === contentHash({ role: b.role, parts: b.parts });
    let shared = 0;
    while (shared < session.messages.length && same(session.messages[shared], other.messages[shared]))
      shared++;
    if (shared === 0) return { messages: session.messages };
    const last = other.owners[shared - 1] as { sessionId: string; nativeId: string };
    return { messages: session.messages.slice(shared), continues: last };
  }

  row(id: string): SessionRow | undefined {
    return this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
  }

  /** Writes rows[start…] as the session's messages, row i at seq `at + i`. */
  private insertRows(id: string, rows: ReturnType<typeof toRow>[], start: number, at: number): void {
    const insert = this.sql(
      `INSERT INTO messages (session_id, seq, role, native_id, model, timestamp, injected, compaction, preserved,
         usage, parts, source, hash, attachment)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (let i = start; i < rows.length; i++) {
      const r = rows[i] as ReturnType<typeof toRow>;
      insert.run(id, at + i, ...r.values, r.hash, r.attachment);
    }
  }

  /** The session's own messages from seq `from` on, in order. */
  messagesFrom(id: string, from: number): Message[] {
    return this.rowsFrom(id, from).map(toMessage);
  }

  private rowsFrom(id: string, from: number): MessageRow[] {
    return this.sql('SELECT * FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq').all(
      id,
      from,
    ) as MessageRow[];
  }

  /**
   * Continues a stored session that grew: its messages from seq `from` on are replaced by `messages` (the ones a
   * reader changed, then the new ones), its row takes the new metadata and its request log what the new lines
   * added to it. The row ends as save() of the whole session would leave it. Must run inside the caller's
   * transaction.
   */
  extend(
    id: string,
    from: number,
    messages: Message[],
    meta: Omit<Session, 'messages' | 'requests'>,
    origin: ParsedSession['origin'],
    sourceFile: string,
    requests?: GrownRequests,
  ): {
    outcome: 'updated' | 'unchanged';
    added: number;
    /** A message stored before changed (as save() reports a session stored again whole). */
    rewritten: boolean;
    stored: { messages: number; toolCalls: number };
  } {
    const existing = this.row(id);
    if (!existing) throw new StoreError(`session ${id} is not in the store; it cannot be continued`);
    // The stored rows from `from` on, read once: their messages for the counts, their hashes for what changed.
    const storedRows = this.rowsFrom(id, from);
    const old = storedRows.map(toMessage);
    const stored = storedRows.map((r) => r.hash);
    const rows = messages.map(toRow);
    const before = counts(old);
    const after = counts(messages);
    const row = {
      id,
      cwd: meta.cwd ?? null,
      title: meta.title ?? null,
      started_at: meta.startedAt ?? null,
      ended_at: meta.endedAt ?? null,
      version: meta.version ?? null,
      message_count: existing.message_count - before.message_count + after.message_count,
      turn_count: existing.turn_count - before.turn_count + after.turn_count,
      tool_call_count: existing.tool_call_count - before.tool_call_count + after.tool_call_count,
      unanswered_count: existing.unanswered_count - before.unanswered_count + after.unanswered_count,
      // As save() hashes it: the session's metadata with the history it continues, as the reader named it by
      // line, else as the store found it.
      meta_hash: contentHash({
        ...meta,
        ...optional('continues', meta.continues ?? continuesOf(existing)),
        origin,
        sourceFile,
      }),
      ingested_at: new Date().toISOString(),
    };
    const same =
      stored.length === rows.length &&
      stored.every((hash, i) => hash === rows[i]?.hash) &&
      existing.meta_hash === row.meta_hash;
    const total = { messages: row.message_count, toolCalls: row.tool_call_count };
    if (requests) this.extendRequests(id, requests, messages);
    if (same && !requests) return { outcome: 'unchanged', added: 0, rewritten: false, stored: total };
    // Rows that did not change stay; the first that did and everything after it are written again.
    let keep = 0;
    while (keep < stored.length && keep < rows.length && stored[keep] === rows[keep]?.hash) keep++;
    this.sql('DELETE FROM messages WHERE session_id = ? AND seq >= ?').run(id, from + keep);
    this.insertRows(id, rows, keep, from);
    this.sql(
      `UPDATE sessions SET cwd=@cwd, title=@title, started_at=@started_at, ended_at=@ended_at, version=@version,
         message_count=@message_count, turn_count=@turn_count, tool_call_count=@tool_call_count,
         unanswered_count=@unanswered_count, meta_hash=@meta_hash, ingested_at=@ingested_at
       WHERE id=@id`,
    ).run(row);
    return {
      outcome: 'updated',
      added: Math.max(0, messages.length - old.length),
      rewritten: keep < stored.length,
      stored: total,
    };
  }

  /** The session's own messages, in order. */
  messages(id: string): Message[] {
    const rows = this.sql('SELECT * FROM messages WHERE session_id = ? ORDER BY seq').all(id) as MessageRow[];
    return rows.map(toMessage);
  }

  /**
   * The whole history the session's model saw: inherited messages of the session it continues (recursively)
   * first, then its own. `own` is the index of its first own message.
   */
  history(id: string): {
    messages: Message[];
    own: number;
    owners: { sessionId: string; nativeId: string }[];
  } {
    // Each link: a session, and how much of it the next one continues (up to a message, or a line of its log).
    const chain: { id: string; upTo?: Session['continues'] }[] = [];
    const seen = new Set<string>();
    for (let current: string | undefined = id, upTo: Session['continues']; current && !seen.has(current); ) {
      seen.add(current);
      chain.unshift(upTo === undefined ? { id: current } : { id: current, upTo });
      const row = this.row(current);
      upTo = row ? continuesOf(row) : undefined;
      current = upTo?.sessionId;
    }
    const messages: Message[] = [];
    const owners: { sessionId: string; nativeId: string }[] = [];
    let own = 0;
    for (const link of chain) {
      if (link.id === id) own = messages.length;
      const { nativeId: upToId, line: upToLine } = link.upTo ?? {};
      for (const message of this.messages(link.id)) {
        if (upToLine !== undefined && lineOf(message) > upToLine) break;
        messages.push(message);
        owners.push({ sessionId: link.id, nativeId: message.nativeId ?? '' });
        if (upToId !== undefined && message.nativeId === upToId) break;
      }
    }
    return { messages, own, owners };
  }

  /** The full session, inherited history included in `messages`. */
  load(id: string): { session: Session; own: number } | undefined {
    const row = this.row(id);
    if (!row) return undefined;
    const { messages, own } = this.history(id);
    return { session: toSession(row, messages), own };
  }

  /**
   * The requests the session's model turns were sent, rebuilt from its recorded request log, by the native id
   * of the response each produced (a turn's `response.nativeId`); `unbound` holds requests no model turn
   * followed. Empty when the log recorded none (older transcripts, other agents). `history`: the session's
   * messages as `load` gave them, when the caller has them (else they are read again, for the tool results the
   * stored requests point at).
   */
  loadRequests(
    id: string,
    history?: readonly Message[],
  ): { byResponse: Map<string, TurnRequest>; unbound: TurnRequest[] } {
    const byResponse = new Map<string, TurnRequest>();
    const unbound: TurnRequest[] = [];
    const log = this.requestLog(id);
    if (!log) return { byResponse, unbound };
    const outputs = resultOutputs(history ?? this.history(id).messages);
    for (const entry of Object.values(log.messages)) entry.message = withResultsBack(entry.message, outputs);
    for (const request of resolveRequests(log)) {
      // A retried request is recorded again for the same response: the last one is what was answered.
      if (request.responseId !== undefined) byResponse.set(request.responseId, request);
      else unbound.push(request);
    }
    return { byResponse, unbound };
  }

  /** Sessions whose id or the agent's own id starts with the prefix. */
  find(prefix: string, limit = 20): SessionRow[] {
    const pattern = `${likeLiteral(prefix)}%`;
    return this.sql(
      `SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' OR source_id LIKE ? ESCAPE '\\'
         ORDER BY started_at LIMIT ?`,
    ).all(pattern, pattern, limit) as SessionRow[];
  }

  /** One session by prefix; an unknown or ambiguous prefix is a usage error that lists candidates. */
  resolve(prefix: string): SessionRow {
    const found = this.find(prefix, 11);
    const exact = found.find((row) => row.id === prefix || row.source_id === prefix);
    if (exact) return exact;
    if (found.length === 1) return found[0] as SessionRow;
    // The agent's id of a sub-agent starts with its parent's (`<session>/agent-<id>`): a prefix that matches a
    // session and only its own sub-sessions means that session.
    const parents = found.filter((row) =>
      found.every((other) => other === row || other.parent_id === row.id),
    );
    if (parents.length === 1 && found.length <= 10) return parents[0] as SessionRow;
    if (found.length === 0) {
      throw new StoreError(`no session matches '${prefix}'`, 'run replay-history sessions to list them');
    }
    const list = found
      .slice(0, 10)
      .map((row) => `  ${row.id.slice(0, 12)}  ${row.agent}  ${row.started_at ?? ''}  ${row.title ?? ''}`)
      .join('\n');
    throw new StoreError(
      `'${prefix}' matches ${found.length > 10 ? 'more than 10' : found.length} sessions:\n${list}`,
      'give a longer prefix',
    );
  }

  /** Every stored session, oldest first, streamed from the database. */
  *list(filter: { agent?: string } = {}): Generator<SessionRow & { spawned_by: string | null }> {
    const where = filter.agent ? 'WHERE s.agent = ?' : '';
    const statement = this.sql(
      `SELECT s.*, COALESCE(s.parent_tool_call_id, sp.tool_call_id) AS spawned_by
       FROM sessions s LEFT JOIN spawns sp ON sp.child_id = s.id ${where}
       ORDER BY s.started_at, s.id`,
    );
    yield* (filter.agent ? statement.iterate(filter.agent) : statement.iterate()) as Iterable<
      SessionRow & { spawned_by: string | null }
    >;
  }

  /** The sub-agents this session started, each with the tool call that started it (where known). */
  subagents(id: string): { id: string; toolCallId?: string }[] {
    const rows = this.sql(
      "SELECT * FROM sessions WHERE parent_id = ? AND kind = 'subagent' ORDER BY started_at, id",
    ).all(id) as SessionRow[];
    return rows.map((row) => {
      const toolCallId = this.spawnedBy(row);
      return { id: row.id, ...(toolCallId ? { toolCallId } : {}) };
    });
  }

  /** The tool call that started this sub-agent, from its own log or from the parent's. */
  spawnedBy(row: SessionRow): string | undefined {
    if (row.parent_tool_call_id) return row.parent_tool_call_id;
    return (this.sql('SELECT tool_call_id FROM spawns WHERE child_id = ?').pluck().get(row.id) ??
      undefined) as string | undefined;
  }

  /**
   * Ids of the sessions read from this file or from files under this directory, oldest first; abandoned rewind
   * branches only with `branches` (as allIds).
   */
  fromPath(path: string, options: { branches?: boolean } = {}): string[] {
    const under = `${likeLiteral(path.replace(/\/+$/, ''))}/%`;
    const branches = options.branches ? '' : "AND kind != 'branch'";
    return this.sql(
      `SELECT id FROM sessions WHERE (source_file = ? OR source_file LIKE ? ESCAPE '\\') ${branches}
         ORDER BY started_at, id`,
    )
      .pluck()
      .all(path, under) as string[];
  }

  /** How many sessions were stored from one log file. */
  countOf(file: string): number {
    return this.sql('SELECT count(*) FROM sessions WHERE source_file = ?').pluck().get(file) as number;
  }

  /** How many sessions were stored from each log file (by the path they were read by), in one pass. */
  countPerFile(): Map<string, number> {
    const rows = this.sql(
      'SELECT source_file AS file, count(*) AS n FROM sessions WHERE source_file IS NOT NULL GROUP BY source_file',
    ).all() as { file: string; n: number }[];
    return new Map(rows.map((row) => [row.file, row.n]));
  }

  /**
   * Every session id, oldest first. Abandoned rewind branches (kind `branch`) only with `branches`: they share
   * their prefix with their session, so taking them by default would count it twice.
   */
  allIds(options: { branches?: boolean } = {}): string[] {
    const where = options.branches ? '' : "WHERE kind != 'branch'";
    return this.sql(`SELECT id FROM sessions ${where} ORDER BY started_at, id`).pluck().all() as string[];
  }
}

/**
 * A tool result's output is in the conversation already (the message's tool part): a request message built from
 * the transcript names it by call id instead of holding it twice (`{"$result": id}`), and loading puts it back.
 * Only outputs of some size whose JSON is the same as the conversation's are replaced: a string, or a list of
 * text blocks (a sub-agent's or an MCP tool's answer; an image's blocks are stored otherwise, so they stay).
 */
const refMinimum = 256;

type Output = ToolResult['output'];

function outputSize(output: Output): number {
  if (typeof output === 'string') return output.length;
  let size = 0;
  for (const block of output) size += block.type === 'text' ? block.text.length : block.data.length;
  return size;
}

function resultOutputs(messages: readonly Message[]): Map<string, Output> {
  const outputs = new Map<string, Output>();
  for (const message of messages)
    for (const part of message.parts)
      if (part.type === 'tool_result' && outputSize(part.output) >= refMinimum)
        outputs.set(part.callId, part.output);
  return outputs;
}

function withResultRefs(message: WireMessage, outputs: Map<string, Output>): WireMessage | undefined {
  if (message.role !== 'user' || !Array.isArray(message.content)) return undefined;
  let replaced = false;
  const content = message.content.map((block) => {
    const id = block.tool_use_id;
    if (block.type !== 'tool_result' || typeof id !== 'string') return block;
    const output = outputs.get(id);
    if (output === undefined) return block;
    if (typeof block.content === 'string' ? block.content !== output : !sameJson(block.content, output))
      return block;
    replaced = true;
    return { ...block, content: { $result: id } };
  });
  return replaced ? { ...message, content } : undefined;
}

function withResultsBack(message: WireMessage, outputs: Map<string, Output>): WireMessage {
  if (message.role !== 'user' || !Array.isArray(message.content)) return message;
  if (!message.content.some((block) => typeof (block.content as { $result?: unknown })?.$result === 'string'))
    return message;
  const content = message.content.map((block) => {
    const ref = (block.content as { $result?: unknown } | undefined)?.$result;
    if (typeof ref !== 'string') return block;
    const output = outputs.get(ref);
    // A result the conversation no longer holds leaves the reference: the message's hash then says so.
    return output === undefined ? block : { ...block, content: output };
  });
  return { ...message, content };
}

/**
 * A message as its columns, serialized once. Its hash is taken over exactly what is stored (the adapters build
 * messages deterministically, so the same message always serializes alike): it decides what a re-ingest keeps.
 */
function toRow(m: Message) {
  const values = [
    m.role,
    m.nativeId ?? null,
    m.model ?? null,
    m.timestamp ?? null,
    m.injected ? 1 : 0,
    m.compaction ? 1 : 0,
    m.preserved ? JSON.stringify(m.preserved) : null,
    m.usage ? JSON.stringify(m.usage) : null,
    recordedPartsJson(m.parts) ?? JSON.stringify(m.parts),
    JSON.stringify(m.source),
  ] as const;
  // Hashed only when set, so the hash of every message without one is what it was before the column existed.
  const attachment = m.attachment ?? null;
  return { values, attachment, hash: fieldsHash(attachment === null ? values : [...values, attachment]) };
}

/** `{ [key]: value }` when value is set, else nothing: spread into an object whose hash must not see undefined. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The history a stored session continues, as its row says: another session, up to a message or a line. */
function continuesOf(row: SessionRow): Session['continues'] {
  if (!row.continues_session_id) return undefined;
  return {
    sessionId: row.continues_session_id,
    ...(row.continues_native_id ? { nativeId: row.continues_native_id } : {}),
    ...(row.continues_line !== null && row.continues_line !== undefined ? { line: row.continues_line } : {}),
  };
}

/** The log line a message was read from (its first); 0 when its source names none (a database row). */
function lineOf(message: Message): number {
  const source = message.source as { line?: unknown };
  return typeof source.line === 'number' ? source.line : 0;
}

/** Text matched literally by `LIKE … ESCAPE '\\'`: its own `%`, `_` and `\` escaped. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function toMessage(row: MessageRow): Message {
  const message: Message = {
    role: row.role,
    parts: JSON.parse(row.parts),
    source: JSON.parse(row.source),
  };
  if (row.native_id !== null) message.nativeId = row.native_id;
  if (row.model !== null) message.model = row.model;
  if (row.usage !== null) message.usage = JSON.parse(row.usage);
  if (row.timestamp !== null) message.timestamp = row.timestamp;
  if (row.injected) message.injected = true;
  if (row.compaction) message.compaction = true;
  if (row.preserved !== null) message.preserved = JSON.parse(row.preserved);
  if (row.attachment !== null && row.attachment !== undefined) message.attachment = row.attachment;
  return message;
}

function toSession(row: SessionRow, messages: Message[]): Session {
  const session: Session = {
    id: row.id,
    agent: row.agent,
    sourceId: row.source_id,
    kind: row.kind,
    messages,
  };
  if (row.parent_id) session.parentId = row.parent_id;
  if (row.parent_tool_call_id) session.parentToolCallId = row.parent_tool_call_id;
  const continues = continuesOf(row);
  if (continues && (continues.nativeId !== undefined || continues.line !== undefined))
    session.continues = continues;
  if (row.cwd) session.cwd = row.cwd;
  if (row.title) session.title = row.title;
  if (row.started_at) session.startedAt = row.started_at;
  if (row.ended_at) session.endedAt = row.ended_at;
  if (row.version) session.version = row.version;
  return session;
}
