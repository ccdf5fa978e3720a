import { existsSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb, StoreError, storeFailure } from '../../src/store/db.js';
import { openImmutable, stamp } from '../../src/store/immutable.js';
import { migrations } from '../../src/store/migrations.js';
import { SessionStore } from '../../src/store/sessions.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('replay-readonly-');
});
afterEach(() => dir.remove());

/** A store with every migration applied and one row of ours in it, closed (checkpointed: no -wal left). */
function madeStore(name = 'replay.db'): string {
  const path = join(dir.path, name);
  const db = openDb(path);
  db.prepare(
    `INSERT INTO source_files (path, agent, size, mtime_ms, inode, parsed_bytes, parser, ingested_at)
     VALUES ('/logs/a.jsonl', 'claude-code', 1, 1, 1, 1, '1', 'now')`,
  ).run();
  db.close();
  return path;
}

const sourceFiles = (db: Database.Database) =>
  db.prepare('SELECT path FROM source_files').pluck().all() as string[];

describe('opening the store read-only', () => {
  it('does not create a store that does not exist, nor its directory, and says how to make one', () => {
    const path = join(dir.path, 'data', 'replay-history', 'replay.db');
    expect(() => openDb(path, { readOnly: true })).toThrow(StoreError);
    expect(() => openDb(path, { readOnly: true })).toThrow(`there is no store at ${path} yet`);
    try {
      openDb(path, { readOnly: true });
    } catch (error) {
      expect((error as StoreError).hint).toContain(`replay-history ingest --db ${path}`);
    }
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  it('takes an empty file for no store yet and leaves it empty', () => {
    const path = join(dir.path, 'empty.db');
    writeFileSync(path, '');
    expect(() => openDb(path, { readOnly: true })).toThrow('there is no store at');
    expect(readFileSync(path).length).toBe(0);
  });

  it('reads the store through a connection that cannot write', () => {
    const path = madeStore();
    const db = openDb(path, { readOnly: true });
    expect(sourceFiles(db)).toEqual(['/logs/a.jsonl']);
    expect(new SessionStore(db).allIds()).toEqual([]);
    expect(() => db.prepare("DELETE FROM source_files WHERE path = '/logs/a.jsonl'").run()).toThrow(
      /readonly database/,
    );
    db.close();
    const again = new Database(path, { readonly: true });
    expect(sourceFiles(again)).toEqual(['/logs/a.jsonl']);
    again.close();
  });

  it('refuses an SQLite database that is not a store, and leaves it untouched', () => {
    const path = join(dir.path, 'other.db');
    const other = new Database(path);
    other.exec('CREATE TABLE notes (text TEXT)');
    other.close();
    const before = readFileSync(path);
    expect(() => openDb(path, { readOnly: true })).toThrow(
      `${path} is an SQLite database but not a replay-history store (tables: notes)`,
    );
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a store written by a newer version', () => {
    const path = madeStore();
    const raw = new Database(path);
    raw.prepare("INSERT INTO migrations (name, applied_at) VALUES ('m999_future', 'x')").run();
    raw.close();
    expect(() => openDb(path, { readOnly: true })).toThrow(/newer version .*unknown migration m999_future/);
  });

  it('upgrades a store of an older version first when this user can write it, then reads it read-only', () => {
    // An older replay-history's store: every migration but the last, recorded as migrate() records them.
    const path = join(dir.path, 'old.db');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(
      'CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)',
    );
    migrations.slice(0, -1).forEach((migration, index) => {
      old.exec(migration.sql);
      old.prepare('INSERT INTO migrations (name, applied_at) VALUES (?, ?)').run(migration.name, 'then');
      old.pragma(`user_version = ${index + 1}`);
    });
    old.close();
    const db = openDb(path, { readOnly: true });
    expect(db.prepare('SELECT name FROM migrations ORDER BY id').pluck().all()).toEqual(
      migrations.map((m) => m.name),
    );
    expect(() => db.prepare('DELETE FROM migrations').run()).toThrow(/readonly database/);
    db.close();
  });
});

describe('a store read without locks (immutable)', () => {
  it('reads it, and closes quietly when nothing wrote to it meanwhile', () => {
    const path = madeStore();
    const db = openImmutable(path, stamp(path));
    expect(sourceFiles(db)).toEqual(['/logs/a.jsonl']);
    expect(() => db.close()).not.toThrow();
    // Nothing was created beside it: no -wal, no -shm.
    expect(readdirSync(dir.path)).toEqual(['replay.db']);
  });

  it('fails at close when a writer reached the store file while it was read', () => {
    const path = madeStore();
    const db = openImmutable(path, stamp(path));
    expect(sourceFiles(db)).toEqual(['/logs/a.jsonl']);
    // A concurrent ingest: its commit is folded into the store file when its connection closes.
    const writer = openDb(path);
    writer.prepare("UPDATE source_files SET size = 2 WHERE path = '/logs/a.jsonl'").run();
    writer.close();
    expect(() => db.close()).toThrow(StoreError);
    expect(() => db.close()).toThrow(`the store ${path} was written while this command read it`);
  });
});

describe('a damaged store', () => {
  it('names a file that is not a database, for reading and for writing', () => {
    const path = join(dir.path, 'notes.db');
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(200));
    for (const options of [{ readOnly: true }, {}]) {
      let caught: unknown;
      try {
        openDb(path, options);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StoreError);
      expect((caught as StoreError).message).toBe(
        `the store ${path} is not an SQLite database (file is not a database)`,
      );
      expect((caught as StoreError).hint).toContain(`mv ${path} ${path}.damaged`);
    }
    expect(readFileSync(path, 'utf8')).toMatch(/^these are my notes/);
  });

  it('turns damage met in the middle of a query into a StoreError naming the store', () => {
    const path = madeStore();
    const raw = new Database(path, { readonly: true });
    const pages = raw
      .prepare("SELECT pageno FROM dbstat WHERE name LIKE '%source_files%'")
      .pluck()
      .all() as number[];
    const size = raw.pragma('page_size', { simple: true }) as number;
    raw.close();
    const fd = openSync(path, 'r+');
    for (const page of pages) writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (page - 1) * size);
    // Opening reads only the schema and the migrations: the damage is met by the first query of the table.
    const db = openDb(path, { readOnly: true });
    let caught: unknown;
    try {
      sourceFiles(db);
    } catch (error) {
      caught = error;
    }
    db.close();
    expect(caught).toBeInstanceOf(Database.SqliteError);
    const said = storeFailure(caught);
    expect(said).toBeInstanceOf(StoreError);
    expect(said?.message).toBe(`the store ${path} is damaged (database disk image is malformed)`);
    expect(storeFailure(new Error('unrelated'))).toBeUndefined();
  });
});

describe('opening the store for writing', () => {
  it('says so with the path when the store directory cannot be created', () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    const path = join(file, 'replay-history', 'replay.db');
    expect(() => openDb(path, { command: 'ingest' })).toThrow(
      `cannot create the store directory ${join(file, 'replay-history')}: a part of the path is a file, not a directory`,
    );
  });
});
