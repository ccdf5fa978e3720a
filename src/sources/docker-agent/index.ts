import type { Stats } from 'node:fs';
import { describeSqliteError, openSqlite, type SqliteSnapshot } from '../sqlite.js';
import type { FileResult, Fingerprint, ParsedSession, SourceAdapter } from '../types.js';
import { SessionBuilder, Tally } from './parse.js';
import { dockerAgentStores, isStoreName, statIfPresent, walOf } from './paths.js';
import { DockerAgentReader } from './read.js';
import { classify } from './records.js';
import { readShape, SchemaError, type SqliteShape } from './schema.js';
import { Tables } from './tables.js';

/**
 * A SQLite file whose schema has docker-agent's session tables. Reads the file's own pages (no SQLite, so no
 * lock and no -shm); only a schema that exists solely in the -wal (a store created moments ago) needs a copy.
 * A file named session.db that is broken, or is docker-agent's without its tables, is reported, not ignored.
 */
function detect(file: string): boolean {
  const shape = shapeOf(file);
  if (!shape) {
    if (isStoreName(file))
      throw new Error('not a SQLite database, yet named like docker-agent’s session store');
    return false;
  }
  let tables = shape.tables;
  if (tables.size === 0 && (statIfPresent(walOf(file))?.size ?? 0) > 0) tables = walTables(file);
  switch (classify(tables)) {
    case 'docker-agent':
      return true;
    case 'damaged':
      throw new Error(
        'a docker-agent database without the tables that hold sessions (sessions, session_items)',
      );
    case 'empty':
      if (isStoreName(file)) throw new Error('a SQLite database with no tables, so no docker-agent sessions');
      return false;
    default:
      return false;
  }
}

function shapeOf(file: string): SqliteShape | undefined {
  try {
    return readShape(file);
  } catch (error) {
    if (!(error instanceof SchemaError)) throw error;
    // A broken SQLite file of any other name is someone else's problem.
    if (isStoreName(file)) throw new Error(`a SQLite database that cannot be read: ${error.message}`);
    return { wal: false, tables: new Map() };
  }
}

/** The store through the shared safe reader; a rollback-mode store with no journal is read in place. */
function open(file: string): SqliteSnapshot {
  try {
    return openSqlite(file, { program: 'docker-agent', inPlace: true });
  } catch (error) {
    throw new Error(describeSqliteError(error, 'docker-agent'));
  }
}

function walTables(file: string): Map<string, string> {
  const snapshot = open(file);
  try {
    const rows = snapshot.db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
      sql: string | null;
    }[];
    return new Map(rows.map((row) => [row.name, row.sql ?? '']));
  } catch (error) {
    throw new Error(describeSqliteError(error, 'docker-agent'));
  } finally {
    snapshot.close();
  }
}

function parseFile(file: string): FileResult {
  let shape: SqliteShape | undefined;
  try {
    shape = readShape(file);
  } catch (error) {
    if (error instanceof SchemaError)
      throw new Error(`a SQLite database that cannot be read: ${error.message}`);
    throw error;
  }
  if (!shape) throw new Error('not a SQLite database');
  const snapshot = open(file);
  let tables: Tables;
  try {
    tables = new Tables(snapshot.db);
  } catch (error) {
    snapshot.close();
    throw new Error(describeSqliteError(error, 'docker-agent'));
  }
  const size = (statIfPresent(file)?.size ?? 0) + (statIfPresent(walOf(file))?.size ?? 0);
  const result: FileResult = {
    sessions: [],
    spawns: [],
    warnings: [],
    notes: [],
    lines: 0,
    skipped: 0,
    parsedBytes: size,
  };
  const tally = new Tally();
  const reader = new DockerAgentReader(file, tables, result, new SessionBuilder(file, result, tally), tally);
  result.sessions = (function* (): Generator<ParsedSession> {
    try {
      yield* reader.sessions();
    } catch (error) {
      throw new Error(describeSqliteError(error, 'docker-agent'));
    } finally {
      snapshot.close();
    }
  })();
  return result;
}

/** A write that only reached the -wal changes neither the main file's size nor (always) its mtime. */
function fingerprint(file: string, stat: Stats): Fingerprint {
  const wal = statIfPresent(walOf(file));
  return {
    size: stat.size + (wal?.size ?? 0),
    mtimeMs: Math.max(stat.mtimeMs, wal?.mtimeMs ?? 0),
    ino: stat.ino,
  };
}

export const dockerAgent: SourceAdapter = {
  agent: 'docker-agent',
  version: '1',
  detect,
  defaultRoots: () => dockerAgentStores(),
  parseFile,
  fingerprint,
};
