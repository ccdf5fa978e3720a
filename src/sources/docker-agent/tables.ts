// The queries this adapter runs on docker-agent's database, built from the columns the database really has: a
// column added by a later migration (README.md lists them) reads as NULL in an older database.

import type Database from 'better-sqlite3';
import type { ItemRow, SessionRow } from './records.js';

export class Tables {
  readonly hasItems: boolean;
  private readonly sessionAfter: Database.Statement<[number], SessionRow>;
  private readonly itemsOf?: Database.Statement<[string], ItemRow>;
  private readonly openingOf?: Database.Statement<[string], Pick<ItemRow, 'message_json' | 'implicit'>>;
  private readonly exists: Database.Statement<[string], { found: number }>;
  private readonly workingDirOf: Database.Statement<[string], { working_dir: string | null }>;

  constructor(db: Database.Database) {
    const sessions = columns(db, 'sessions');
    const items = columns(db, 'session_items');
    if (!sessions.has('id') || (items.size === 0 && !sessions.has('messages')))
      throw new Error('no docker-agent session tables (sessions, session_items) in this database');
    const pick = (present: Set<string>, name: string) => (present.has(name) ? name : `NULL AS ${name}`);
    const sessionColumns = ['title', 'working_dir', 'created_at', 'parent_id', 'messages'].map((name) =>
      pick(sessions, name),
    );
    this.sessionAfter = db.prepare(
      `SELECT rowid AS rowid, id, ${sessionColumns.join(', ')} FROM sessions WHERE rowid > ? ORDER BY rowid LIMIT 1`,
    );
    this.exists = db.prepare('SELECT 1 AS found FROM sessions WHERE id = ?');
    this.workingDirOf = db.prepare(`SELECT ${pick(sessions, 'working_dir')} FROM sessions WHERE id = ?`);
    this.hasItems = items.size > 0;
    if (this.hasItems) {
      this.itemsOf = db.prepare(
        `SELECT id, position, item_type, agent_name, message_json, implicit, subsession_id, summary_text,
           ${pick(items, 'first_kept_entry')} FROM session_items WHERE session_id = ? ORDER BY position, id`,
      );
      this.openingOf = db.prepare(
        `SELECT message_json, implicit FROM session_items WHERE session_id = ? AND item_type = 'message'
           ORDER BY position, id LIMIT 3`,
      );
    }
  }

  /** Sessions one at a time in insertion order, so memory does not grow with their number. */
  *sessions(): Generator<SessionRow> {
    for (let row = this.sessionAfter.get(0); row; row = this.sessionAfter.get(row.rowid)) yield row;
  }

  items(sessionId: string): ItemRow[] {
    return this.itemsOf?.all(sessionId) ?? [];
  }

  /** The first messages of a session (where a sub-session states its task). */
  opening(sessionId: string): Pick<ItemRow, 'message_json' | 'implicit'>[] {
    return this.openingOf?.all(sessionId) ?? [];
  }

  has(sessionId: string): boolean {
    return this.exists.get(sessionId) !== undefined;
  }

  workingDir(sessionId: string): string | undefined {
    return this.workingDirOf.get(sessionId)?.working_dir || undefined;
  }
}

function columns(db: Database.Database, table: string): Set<string> {
  const rows = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[];
  return new Set(rows.map((row) => row.name));
}
