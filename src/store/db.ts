import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';

export type Db = Database.Database;

/** The store could not be opened or used as it is; the message says why and what to do. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** `$REPLAY_HISTORY_DB`, else `${XDG_DATA_HOME:-~/.local/share}/replay-history/replay.db`. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REPLAY_HISTORY_DB) return env.REPLAY_HISTORY_DB;
  const data = env.XDG_DATA_HOME || join(env.HOME ?? homedir(), '.local', 'share');
  return join(data, 'replay-history', 'replay.db');
}

export function openDb(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = new Database(path, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
  } catch (error) {
    throw new StoreError(
      `cannot open the store ${path}: ${(error as Error).message}`,
      'pass another file with --db',
    );
  }
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  try {
    migrate(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Applies pending migrations, each in one transaction; refuses a store written by a newer version. */
export function migrate(db: Db, path = 'the store'): void {
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT name FROM migrations').all() as { name: string }[]).map((row) => row.name),
  );
  const known = new Set(migrations.map((m) => m.name));
  const unknown = [...applied].filter((name) => !known.has(name));
  const version = db.pragma('user_version', { simple: true }) as number;
  if (unknown.length > 0 || version > migrations.length) {
    throw new StoreError(
      `${path} was written by a newer version of replay-history (unknown migration ${unknown[0] ?? `#${version}`})`,
      'upgrade replay-history (npm install -g replay-history@latest), or use another --db',
    );
  }
  const record = db.prepare('INSERT INTO migrations (name, applied_at) VALUES (?, ?)');
  migrations.forEach((migration, index) => {
    if (applied.has(migration.name)) return;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.name, new Date().toISOString());
      db.pragma(`user_version = ${index + 1}`);
    })();
  });
}

/** A preparer that prepares each SQL text once per connection and reuses it (ingest runs a few per file). */
export function statementCache(db: Db): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}
