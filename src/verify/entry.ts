import type { BigIntStats } from 'node:fs';

export type EntryType =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'fifo'
  | 'socket'
  | 'character device'
  | 'block device'
  /** Only for what came and went during a run: nothing was left to look at. */
  | 'unknown';

/**
 * One entry under a watched root as a manifest records it. Times and inode numbers are decimal strings:
 * nanosecond times and 64-bit inodes do not fit a double.
 */
export interface Entry {
  path: string;
  type: EntryType;
  /** Permission bits, setuid/setgid/sticky included. */
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: string;
  ctime: string;
  /** Never compared on its own (reading is not a side effect); it only explains a change of ctime alone. */
  atime: string;
  dev: string;
  ino: string;
  nlink: number;
  /** A symlink's target, as stored (not resolved). */
  target?: string;
  /** sha256 of a regular file's content. */
  hash?: string;
  /** Why this entry could not be looked into: a directory that could not be listed, a file not read. */
  unreadable?: string;
}

export function typeOf(stats: BigIntStats): EntryType {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  return 'block device';
}

export function entryOf(path: string, stats: BigIntStats): Entry {
  return {
    path,
    type: typeOf(stats),
    mode: Number(stats.mode & 0o7777n),
    uid: Number(stats.uid),
    gid: Number(stats.gid),
    size: Number(stats.size),
    mtime: stats.mtimeNs.toString(),
    ctime: stats.ctimeNs.toString(),
    atime: stats.atimeNs.toString(),
    dev: stats.dev.toString(),
    ino: stats.ino.toString(),
    nlink: Number(stats.nlink),
  };
}

/**
 * The order both walks produce and the merge relies on: paths compared name by name, i.e. as strings in which
 * '/' sorts before every other character. A directory comes right before everything below it.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 47) return -1;
    if (y === 47) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/** Same inode, size and times: the content is taken as unchanged without reading it (as git does). */
export function sameStat(a: Entry, b: Entry): boolean {
  return (
    a.type === b.type &&
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.size === b.size &&
    a.mtime === b.mtime &&
    a.ctime === b.ctime
  );
}

/** Equal in everything a manifest compares (atime is never compared: reading a file is not a side effect). */
export function sameEntry(a: Entry, b: Entry): boolean {
  return (
    sameStat(a, b) &&
    a.mode === b.mode &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    a.nlink === b.nlink &&
    a.target === b.target &&
    (a.hash === undefined || b.hash === undefined || a.hash === b.hash)
  );
}

export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
