// Read access that leaves the user's database byte for byte as it was. A read-only SQLite connection still
// writes beside a WAL database: it creates a missing -shm file (and fails where it cannot), and every reader
// writes its marks into the -shm. So a database in WAL mode, or with a -wal or rollback -journal beside it, is
// copied with those files into a private directory and the copy is read; only a plain rollback-mode database
// with no journal is opened in place, read-only (which takes nothing but a shared read lock).

import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** How long to wait for a writer's lock on a database read in place (docker-agent's writes are short). */
export const busyTimeout = 2000;
const copyAttempts = 3;
const sidecars = ['-wal', '-journal'] as const;

export interface Snapshot {
  db: Database.Database;
  close(): void;
}

// Private copies still on disk, removed when the process exits even if a reader was abandoned mid-way.
const live = new Set<string>();
let cleanupRegistered = false;

function removeAll(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

export function openSnapshot(file: string, walMode: boolean): Snapshot {
  const copy = walMode || sidecars.some((suffix) => existsSync(file + suffix));
  if (!copy) {
    const db = open(() => new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeout }));
    return { db, close: () => db.close() };
  }
  if (!cleanupRegistered) {
    process.once('exit', removeAll);
    cleanupRegistered = true;
  }
  const dir = mkdtempSync(join(tmpdir(), 'replay-history-docker-agent-'));
  live.add(dir);
  const remove = () => {
    rmSync(dir, { recursive: true, force: true });
    live.delete(dir);
  };
  try {
    const target = join(dir, 'session.db');
    const journal = copyConsistent(file, target);
    // A hot rollback journal is rolled back when the copy is opened, which needs write access to the copy.
    const db = open(
      () => new Database(target, { readonly: !journal, fileMustExist: true, timeout: busyTimeout }),
    );
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
 * file after they are safe in the journal, and a checkpoint shows as a change of the main file. If anything
 * changed while copying, copy again. Returns whether a rollback journal came along.
 */
function copyConsistent(file: string, target: string): boolean {
  for (let attempt = 0; attempt < copyAttempts; attempt++) {
    const before = stamp(file);
    copyFileSync(file, target);
    for (const suffix of sidecars) {
      if (existsSync(file + suffix)) copyFileSync(file + suffix, target + suffix);
      else rmSync(target + suffix, { force: true });
    }
    if (stamp(file) === before) return existsSync(`${target}-journal`);
  }
  throw new Error(
    'the database kept changing while it was being copied (docker-agent is writing); try again',
  );
}

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

function open(make: () => Database.Database): Database.Database {
  try {
    return make();
  } catch (error) {
    throw new Error(describeSqliteError(error));
  }
}

/** SQLite's error, said so that a user knows what is wrong with the file. */
export function describeSqliteError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const detail = message ?? String(error);
  if (code === 'SQLITE_NOTADB') return `not a SQLite database, or an encrypted one (${detail})`;
  if (code?.startsWith('SQLITE_CORRUPT')) return `the database is corrupt or truncated (${detail})`;
  if (code?.startsWith('SQLITE_BUSY') || code?.startsWith('SQLITE_LOCKED'))
    return 'the database is locked by another program (docker-agent writing?); try again when it is idle';
  if (code?.startsWith('SQLITE_CANTOPEN')) return `the database cannot be opened (${detail})`;
  return detail;
}
