import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { makeStoreDirectory, readProblem, reason, writeProblem } from './access.js';
import { damaged, fullDisk, isDamage, rememberStore, StoreError, sqliteCode, writeDenied } from './errors.js';
import { openImmutable, stamp } from './immutable.js';
import { migrations } from './migrations.js';

export { StoreError, storeFailure } from './errors.js';

export type Db = Database.Database;

/** How long a statement waits for another connection's lock (a concurrent ingest or replay). */
const busyTimeout = 5000;

export interface OpenOptions {
  /** Only read: nothing is created, and a store this process cannot write is still read. */
  readOnly?: boolean;
  /** The command that writes, named when write access is missing ("ingest needs write access …"). */
  command?: string;
}

/** `$REPLAY_HISTORY_DB`, else `${XDG_DATA_HOME:-~/.local/share}/replay-history/replay.db`. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REPLAY_HISTORY_DB) return env.REPLAY_HISTORY_DB;
  const data = env.XDG_DATA_HOME || join(env.HOME ?? homedir(), '.local', 'share');
  return join(data, 'replay-history', 'replay.db');
}

/**
 * Opens the store at `path`. For writing (the default) it is created if missing and migrated; for reading
 * (`readOnly`) it must exist and is opened read-only, so a store shared by another user, on a read-only
 * mount or in a directory this user cannot write is still read.
 */
export function openDb(path: string, options: OpenOptions = {}): Db {
  return options.readOnly ? openForReading(path) : openForWriting(path, options.command ?? 'replay-history');
}

function openForWriting(path: string, command: string): Db {
  // Absolute: a relative name starting with `file:` would be read as a URI (see immutable.ts).
  const file = path === ':memory:' ? path : resolve(path);
  if (file !== ':memory:') {
    if (!existsSync(file)) makeStoreDirectory(file, command);
    else {
      const problem = writeProblem(file);
      if (problem) throw writeDenied(path, command, problem);
    }
  }
  let db: Db | undefined;
  try {
    db = new Database(file, { timeout: busyTimeout });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db, path);
  } catch (error) {
    db?.close();
    throw openFailure(path, error, command);
  }
  rememberStore(path, command);
  return db;
}

function openForReading(path: string): Db {
  const file = resolve(path);
  // Taken first: a write that lands after this is seen when a store read without locks is closed.
  const before = stamp(file);
  let kind: 'file' | 'other';
  try {
    kind = statSync(file).isFile() ? 'file' : 'other';
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw noStore(path);
    throw new StoreError(`cannot read the store ${path}: ${reason(e)}`, 'pass the store with --db FILE');
  }
  if (kind !== 'file')
    throw new StoreError(`the store ${path} is not a file`, 'pass the store with --db FILE');
  const unreadable = readProblem(file);
  if (unreadable)
    throw new StoreError(
      `cannot read the store ${path}: ${unreadable}`,
      "ask the store's owner for read access, or pass another store with --db FILE",
    );
  const db = connect(file, path, before);
  let pending: string[];
  try {
    pending = pendingMigrations(db, path);
  } catch (error) {
    db.close();
    throw openFailure(path, error);
  }
  if (pending.length === 0) {
    db.pragma('foreign_keys = ON');
    rememberStore(path);
    return db;
  }
  db.close();
  // Written by an older replay-history: its owner's first command upgrades it, as before; another user (or
  // a read-only mount) cannot, and the commands' SQL expects the current schema.
  const problem = writeProblem(file);
  if (problem) {
    throw new StoreError(
      `the store ${path} was made by an older replay-history and must be upgraded (${pending.join(', ')}) before it can be read, which needs write access: ${problem}`,
      `run replay-history ingest once as a user who can write it, or read a copy: cp ${path} FILE and pass --db FILE`,
    );
  }
  openForWriting(path, 'upgrading the store').close();
  return openForReading(path);
}

/**
 * A read-only connection to the existing store file, with its tables read once (which opens the WAL).
 * SQLite shares a WAL store through PATH-wal and PATH-shm, and a reader creates them when they are missing.
 * Made by a user who cannot write the store they would be that user's, and refuse the owner's next write;
 * in a directory that is not writable they cannot be made at all. So such a user reads through them only
 * when both are there (a writer may be active: SQLite reads them read-only), and otherwise, when no -wal
 * holds writes (no connection is open: the store file has every committed write), reads it as immutable. So
 * does anyone on a full disk, where the -shm file cannot grow.
 */
function connect(file: string, path: string, before: ReturnType<typeof stamp>): Db {
  const wal = sizeOf(`${file}-wal`);
  if (writeProblem(file) === undefined || (wal !== undefined && existsSync(`${file}-shm`))) {
    let db: Db | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeout });
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return db;
    } catch (error) {
      db?.close();
      // A full disk leaves no room for the -shm file a reader of a WAL store maps: read as below instead.
      const full = fullDisk(path, error);
      if (full && wal) throw full;
      if (!full && !sqliteCode(error, /^SQLITE_(READONLY|CANTOPEN)/)) throw openFailure(path, error);
    }
  }
  if (wal) {
    const name = basename(file);
    throw new StoreError(
      `cannot read the store ${path}: ${name}-wal beside it holds writes not yet in the store file, and reading them takes a ${name}-shm there, which only a user who can write the store may create`,
      `have the store's owner run replay-history ingest once (it folds them into the store file), or read a copy: cp ${path} ${path}-wal DIR and pass --db DIR/${name}`,
    );
  }
  let db: Db | undefined;
  try {
    db = openImmutable(file, before);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (error) {
    db?.close();
    throw openFailure(path, error);
  }
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** A store that does not exist is not created by a command that only reads. */
function noStore(path: string): StoreError {
  return new StoreError(
    `there is no store at ${path} yet`,
    `create it by ingesting logs: replay-history ingest --db ${path} [paths] (with no path, every agent's own log directory)`,
  );
}

/** An error met while opening: already a StoreError, or SQLite's, said with the store's path. */
function openFailure(path: string, error: unknown, writer?: string): Error {
  if (error instanceof StoreError) return error;
  if (isDamage(error)) return damaged(path, error);
  const full = fullDisk(path, error);
  if (full) return full;
  if (writer !== undefined && sqliteCode(error, /^SQLITE_READONLY/))
    return writeDenied(path, writer, `SQLite refused to write it (${error.message})`);
  return new StoreError(
    `cannot open the store ${path}: ${(error as Error).message}`,
    'pass another file with --db',
  );
}

/** Names of migrations applied to the store; refuses a store written by a newer version. */
function appliedMigrations(db: Db, path: string): Set<string> {
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
  return applied;
}

/** The migrations a store opened read-only still lacks; one without our tables is not taken for a store. */
function pendingMigrations(db: Db, path: string): string[] {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  if (!tables.includes('migrations')) {
    if (tables.length === 0) throw noStore(path);
    throw new StoreError(
      `${path} is an SQLite database but not a replay-history store (tables: ${tables.slice(0, 5).join(', ')})`,
      'pass the store with --db FILE',
    );
  }
  const applied = appliedMigrations(db, path);
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}

/** Applies pending migrations, each in one transaction; refuses a store written by a newer version. */
export function migrate(db: Db, path = 'the store'): void {
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)`);
  const applied = appliedMigrations(db, path);
  const record = db.prepare('INSERT INTO migrations (name, applied_at) VALUES (?, ?)');
  const done = db.prepare('SELECT 1 FROM migrations WHERE name = ?').pluck();
  migrations.forEach((migration, index) => {
    if (applied.has(migration.name)) return;
    // IMMEDIATE, and asked again inside: two processes opening a new or older store at once (hooks after the
    // turns of two sessions) each found it unapplied; the second waits for the first's write lock, then skips it.
    db.transaction(() => {
      if (done.get(migration.name)) return;
      db.exec(migration.sql);
      record.run(migration.name, new Date().toISOString());
      db.pragma(`user_version = ${index + 1}`);
    }).immediate();
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
