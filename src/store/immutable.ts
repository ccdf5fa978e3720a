// Reading a WAL store where SQLite cannot create its -wal and -shm files (a directory or mount that is not
// writable for us). SQLite then opens it only as `immutable`: no locks, no WAL. That is exact when no writer
// is active, which the caller checks first (no -wal beside the store: every open connection keeps one). A
// writer that starts later writes its -wal first and reaches the store file only at a checkpoint, so the
// store file's size and mtime are compared at close: if they moved, what was read may mix two states, and
// the command fails rather than pass that on as data.

import { type BigIntStats, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { StoreError } from './errors.js';

// better-sqlite3 is built with URI file names off; it turns them on if SQLITE_USE_URI=1 is set when its addon
// loads (at the first connection of the process). `immutable=1` can only be given in a URI. Store paths are
// made absolute before they are opened, so none of them starts with `file:` and is read as a URI.
process.env.SQLITE_USE_URI = '1';

/** The store file's identity and content stamp, taken before it is opened without locks. */
export function stamp(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

function moved(before: BigIntStats | undefined, after: BigIntStats | undefined): boolean {
  return (
    !before ||
    !after ||
    before.ino !== after.ino ||
    before.size !== after.size ||
    before.mtimeNs !== after.mtimeNs
  );
}

/**
 * Opens the store at the absolute `path` read-only without locks or WAL. `before` is its stamp taken before the
 * caller checked that no writer is active; closing throws a StoreError if the file was written since.
 */
export function openImmutable(path: string, before: BigIntStats | undefined): Database.Database {
  const db = new Database(`${pathToFileURL(path).href}?immutable=1`, { readonly: true, fileMustExist: true });
  const close = db.close.bind(db);
  // The commands close the store in `finally`: that is where a read that may have been torn is caught.
  db.close = () => {
    close();
    if (moved(before, stamp(path))) {
      throw new StoreError(
        `the store ${path} was written while this command read it; it is read without locks (SQLite cannot create its -wal and -shm files there), so the output may mix data from before and after that write`,
        'run the command again once the writer (replay-history ingest or replay) is done',
      );
    }
    return db;
  };
  return db;
}
