import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { StoreError } from './errors.js';

/** Why this process may not write the existing store file at `path`, or undefined if it may. */
export function writeProblem(path: string): string | undefined {
  const file = denied(path);
  if (file === 'EROFS') return 'it is on a read-only file system';
  if (file) return `the file is read-only for you (${owner(path)})`;
  // A WAL store needs its directory as well: SQLite creates PATH-wal and PATH-shm beside it (and removes them).
  const dir = dirname(path);
  const folder = denied(dir);
  if (folder === 'EROFS') return 'it is on a read-only file system';
  if (folder)
    return `its directory ${dir} is not writable for you (SQLite keeps ${basename(path)}-wal and ${basename(path)}-shm beside the store)`;
  return undefined;
}

/** Why this process may not read the existing store file at `path`, or undefined if it may. */
export function readProblem(path: string): string | undefined {
  try {
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    return `${reason(error as NodeJS.ErrnoException)} (${owner(path)})`;
  }
}

/** "mode 0644, owner uid 1000": what decides who may read and write the file. */
function owner(path: string): string {
  const { mode, uid } = statSync(path);
  return `mode ${(mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${uid}`;
}

/** The errno access(2) gives for writing `path` (EACCES, EROFS, …), or undefined when writing is allowed. */
function denied(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EACCES';
  }
}

/** Creates the directory a new store goes in; a path that cannot hold one is said with the path. */
export function makeStoreDirectory(path: string, command: string): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new StoreError(
      `cannot create the store directory ${dir}: ${reason(error as NodeJS.ErrnoException)}`,
      'pass a store file in a directory you can write with --db FILE, or set REPLAY_HISTORY_DB or XDG_DATA_HOME',
    );
  }
  const folder = denied(dir);
  if (folder)
    throw new StoreError(
      `${command} needs write access to create the store ${path}: ${folder === 'EROFS' ? 'it is on a read-only file system' : `its directory ${dir} is not writable for you`}`,
      'pass a store file in a directory you can write with --db FILE, or set REPLAY_HISTORY_DB or XDG_DATA_HOME',
    );
}

/** An errno in words (the raw message repeats the path and the system call). */
export function reason(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a directory';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOENT':
      return 'no such file or directory';
    default:
      return error.message;
  }
}
