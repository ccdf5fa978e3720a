// Reading a user's SQLite database without touching it. A read-only SQLite connection still writes beside a WAL
// database: it creates a missing -shm file (and fails where it cannot), every reader writes its marks into the
// -shm, and the last connection to close may checkpoint. So the database and its -wal (or rollback -journal) are
// copied into a private folder (a reflink where the filesystem has them) and only the copy is opened. A caller
// may let a plain rollback-mode database with no -wal or -journal be opened in place, read-only: that takes
// nothing but a shared read lock, so it waits for (and then reports) a writer instead of reading around it.

import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';

/** How long to wait for a writer's lock on a database read in place (the agents' writes are short). */
export const busyTimeout = 2000;
const copyAttempts = 5;
const sidecars = ['-wal', '-journal'] as const;
const magic = Buffer.from('SQLite format 3\0', 'latin1');
const headerSize = 100;

export function isSqliteHeader(head: Buffer): boolean {
  return head.length >= magic.length && head.subarray(0, magic.length).equals(magic);
}

/** The file's 100-byte header: whether it is SQLite at all, whole, and in WAL mode. */
export function readHeader(file: string): 'not-sqlite' | 'truncated' | { wal: boolean } {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(headerSize);
    const read = readSync(fd, head, 0, headerSize, 0);
    if (!isSqliteHeader(head.subarray(0, read))) return 'not-sqlite';
    if (read < headerSize) return 'truncated';
    // Header bytes 18–19 (write and read version) are 2 in WAL mode: the latest state may be in the -wal.
    return { wal: head[18] === 2 || head[19] === 2 };
  } finally {
    closeSync(fd);
  }
}

/** Throws a clear error unless the file starts like a whole SQLite header; `name` is what should be one. */
export function checkHeader(file: string, name?: string): { wal: boolean } {
  const header = readHeader(file);
  if (header === 'not-sqlite')
    throw new Error(name ? `not an SQLite database (${name} should be one)` : 'not an SQLite database');
  if (header === 'truncated') throw new Error('SQLite header cut short (a half-written database?)');
  return header;
}

export interface SqliteOptions {
  /** The program that writes the database, named in errors ("opencode is writing"). */
  program: string;
  /** Open a rollback-mode database that has no -wal or -journal in place instead of copying it. */
  inPlace?: boolean;
}

export interface SqliteSnapshot {
  /** Read-only (query_only) connection to the copy, or to the file itself when read in place. */
  db: Database.Database;
  /** Closes the connection and removes the private copy. */
  close(): void;
}

// Private copies still on disk, removed when the process exits even if a reader was abandoned mid-way.
const live = new Set<string>();
let cleanupRegistered = false;

function removeAll(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

/**
 * Opens a user's database for reading without writing, locking or checkpointing it (see the top of this file).
 * SQLite's own errors are thrown as they are: `describeSqliteError` says them for a user.
 */
export function openSqlite(file: string, options: SqliteOptions): SqliteSnapshot {
  const { wal } = checkHeader(file);
  if (options.inPlace && !wal && !sidecars.some((suffix) => existsSync(file + suffix))) {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeout });
    return { db, close: () => db.close() };
  }
  if (!cleanupRegistered) {
    process.once('exit', removeAll);
    cleanupRegistered = true;
  }
  const dir = mkdtempSync(join(tmpdir(), `replay-history-${options.program}-`));
  live.add(dir);
  const remove = () => {
    rmSync(dir, { recursive: true, force: true });
    live.delete(dir);
  };
  try {
    const target = join(dir, basename(file));
    const journal = copyConsistent(file, target, options.program);
    // A hot rollback journal is rolled back when the copy is opened, which needs write access to the copy;
    // query_only still keeps our own statements from writing it.
    const db = new Database(target, { readonly: !journal, fileMustExist: true, timeout: busyTimeout });
    try {
      db.pragma('query_only = 1');
    } catch (error) {
      db.close();
      throw error;
    }
    return {
      db,
      close: () => {
        db.close();
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}

/**
 * Copies the database and its -wal/-journal, main file first: a writer's new pages only ever land in the main
 * file after they are safe in the journal, and a checkpoint shows as a change of the main file. A checkpoint
 * between the copies would pair a database and a log from different moments, so if anything changed while
 * copying, copy again. The -shm is not copied: SQLite rebuilds it from the -wal. Returns whether a rollback
 * journal came along.
 */
function copyConsistent(file: string, target: string, program: string): boolean {
  for (let attempt = 0; attempt < copyAttempts; attempt++) {
    const before = stamp(file);
    copyFileSync(file, target, constants.COPYFILE_FICLONE);
    for (const suffix of sidecars) {
      if (existsSync(file + suffix)) copyFileSync(file + suffix, target + suffix, constants.COPYFILE_FICLONE);
      else rmSync(target + suffix, { force: true });
    }
    if (stamp(file) === before) return existsSync(`${target}-journal`);
  }
  throw new Error(`the database kept changing while it was being copied (${program} is writing); try again`);
}

/** Size and mtime of the database and its sidecars: what a write or a checkpoint changes. */
function stamp(file: string): string {
  return ['', ...sidecars]
    .map((suffix) => {
      try {
        const stat = statSync(file + suffix);
        return `${stat.size}:${stat.mtimeMs}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}

export type SqliteProblem = 'not-sqlite' | 'corrupt' | 'locked' | 'cannot-open' | 'other';

/** What kind of trouble a SQLite error means, by its code or, for an error without one, its message. */
export function sqliteProblem(error: unknown): SqliteProblem {
  const { code, message = '' } = error as { code?: string; message?: string };
  if (code === 'SQLITE_NOTADB' || /not a database|file is not/i.test(message)) return 'not-sqlite';
  if (code?.startsWith('SQLITE_CORRUPT') || /malformed|disk image/i.test(message)) return 'corrupt';
  if (code?.startsWith('SQLITE_BUSY') || code?.startsWith('SQLITE_LOCKED')) return 'locked';
  if (code?.startsWith('SQLITE_CANTOPEN')) return 'cannot-open';
  return 'other';
}

/** SQLite's error, said so that a user knows what is wrong with the file; `program` is the one writing it. */
export function describeSqliteError(error: unknown, program: string): string {
  const detail = (error as { message?: string }).message ?? String(error);
  switch (sqliteProblem(error)) {
    case 'not-sqlite':
      return `not a SQLite database, or an encrypted one (${detail})`;
    case 'corrupt':
      return `the database is corrupt or truncated (${detail})`;
    case 'locked':
      return `the database is locked by another program (${program} writing?); try again when it is idle`;
    case 'cannot-open':
      return `the database cannot be opened (${detail})`;
    default:
      return detail;
  }
}
