import { statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

type SqliteError = InstanceType<typeof Database.SqliteError>;

/** The store could not be opened or used as it is; the message says why and what to do. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    /** 2 when found before the command did anything (the CLI's default for the store), 1 when it failed midway. */
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/**
 * The store this process opened last, and the command that opened it for writing. SQLite's errors do not say
 * which file they came from, and a command opens one store; the sources read users' databases through their
 * own copies and word their own errors.
 */
let current: { path: string; writer?: string } | undefined;

export function rememberStore(path: string, writer?: string): void {
  current = writer === undefined ? { path } : { path, writer };
}

/** Below this many free bytes on the store's file system, an I/O error of SQLite's is taken for a full disk. */
const nearlyFull = 1024 * 1024;

/** Bytes this process may still write on the file system holding `path` (root may use the reserved ones). */
function freeBytes(path: string): number | undefined {
  try {
    const fs = statfsSync(dirname(resolve(path)));
    return (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
  } catch {
    return undefined;
  }
}

const amount = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(0)} KiB`
      : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/**
 * The store's disk is full: SQLite says SQLITE_FULL when a write finds no room, but growing the shared-memory
 * file (PATH-shm, which every connection to a WAL store maps) fails as a bare "disk I/O error"
 * (SQLITE_IOERR_SHMSIZE), so an I/O error on a file system with (nearly) no space left is taken for one too.
 * `midway`: the command had begun (exit 1) rather than failed to open the store (exit 2).
 */
export function fullDisk(path: string, error: unknown, midway = false): StoreError | undefined {
  if (!sqliteCode(error, /^SQLITE_(FULL|IOERR)/)) return undefined;
  const free = freeBytes(path);
  if (!error.code.startsWith('SQLITE_FULL') && (free === undefined || free >= nearlyFull)) return undefined;
  return new StoreError(
    `the disk holding the store ${path} is full${free === undefined ? '' : ` (${amount(free)} free)`}: SQLite could not write (${error.message})`,
    'free some space there and run it again (what the store held is kept: a write that does not fit is undone whole), or pass a store on another disk with --db FILE',
    midway ? 1 : 2,
  );
}

/** SQLite's word for a store that is not (or no longer) a whole database. */
export function isDamage(error: unknown): error is SqliteError {
  return sqliteCode(error, /^SQLITE_(CORRUPT|NOTADB)/);
}

/** Whether `error` is SQLite's with an (extended) result code matching `pattern`. */
export function sqliteCode(error: unknown, pattern: RegExp): error is SqliteError {
  return error instanceof Database.SqliteError && pattern.test(error.code);
}

export function damaged(path: string, error: SqliteError): StoreError {
  const what = error.code.startsWith('SQLITE_NOTADB')
    ? `the store ${path} is not an SQLite database (${error.message})`
    : `the store ${path} is damaged (${error.message})`;
  return new StoreError(
    what,
    `the agents' logs are the source: move it aside (mv ${path} ${path}.damaged) and run replay-history ingest again (replay runs stored in it are not rebuilt)`,
  );
}

export function writeDenied(path: string, command: string, reason: string): StoreError {
  return new StoreError(
    `${command} needs write access to the store ${path}: ${reason}`,
    `run it as a user who can write the store, or use a store of your own with --db FILE (cp ${path} FILE starts from this one)`,
  );
}

/**
 * The StoreError an error met while the store was in use stands for, if it is SQLite's: a damaged file or a
 * write refused, named with the store's path. Errors from a query can surface anywhere in a command, so the
 * CLI asks here once, where every error ends.
 */
export function storeFailure(error: unknown): StoreError | undefined {
  if (current === undefined) return undefined;
  if (isDamage(error)) return damaged(current.path, error);
  const full = fullDisk(current.path, error, true);
  if (full) return full;
  if (sqliteCode(error, /^SQLITE_BUSY/))
    // Every write transaction waits for the others' (IMMEDIATE, with a busy timeout): this one waited in vain.
    return new StoreError(
      `the store ${current.path} stayed busy: another replay-history process (an ingest of a large log, a replay) held it longer than this one could wait (${error.message})`,
      'run the command again when the other has finished; nothing of this one was half-written',
      1,
    );
  if (sqliteCode(error, /^SQLITE_READONLY/)) {
    return current.writer === undefined
      ? new StoreError(
          `the store ${current.path} is open read-only, and SQLite refused a write (${error.message})`,
        )
      : writeDenied(current.path, current.writer, `SQLite refused a write (${error.message})`);
  }
  return undefined;
}
