// An overlay's upper layer read back as changes. The agent ran against lower+upper mounted over the real
// directory; everything it wrote went to the upper layer, so the upper layer is the exact record of its writes:
// a file or directory there is one it made or changed (copied up), a whiteout (a character device 0/0) is one it
// deleted, and an opaque directory (xattr overlay.opaque=y) is one it removed and made again, hiding everything
// the lower one held. Each change is said as the real directory would have shown it (the path is the lower
// path, where the agent saw it), so it reads like a manifest change.
import { type BigIntStats, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { type Change, compare, deleted, settle } from './diff.js';
import { comparePaths, type Entry, entryOf } from './entry.js';
import { hashFile, walk } from './manifest.js';

/** Reads whether a directory of an upper layer is opaque (from its xattrs). */
export type OpaqueTest = (dir: string) => boolean;

const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

function isWhiteout(stats: BigIntStats): boolean {
  return stats.isCharacterDevice() && stats.rdev === 0n;
}

function look(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    // Below something that is not a directory (the real tree changed under us): nothing there.
    return undefined;
  }
}

const overlay = (change: Change): Change => ({ ...change, layers: ['overlay'] });

/**
 * The changes an upper layer records against its lower directory, with the paths of the lower one. `opaque`
 * says which upper directories are opaque. The lower directory is read as it is now: other processes may have changed it meanwhile, which
 * affects only how a change is described (what a deleted entry was), never whether the agent made it.
 */
export function readUpper(
  upper: string,
  lower: string,
  opaque: OpaqueTest,
  /** The lower directory when the view was made (the upper root stood for it); default: as it is now. */
  rootAsMade?: Entry,
): { changes: Change[]; gaps: { path: string; reason: string }[] } {
  const changes: Change[] = [];
  const gaps: { path: string; reason: string }[] = [];

  /** The agent's version of an entry, with what cannot compare across file systems taken from the lower one. */
  const agents = (stats: BigIntStats, old: Entry): Entry => {
    const entry = entryOf(old.path, stats);
    entry.dev = old.dev;
    entry.ino = old.ino;
    entry.ctime = old.ctime;
    entry.atime = old.atime;
    entry.nlink = old.nlink;
    // Directory sizes and times are the file system's bookkeeping; what changed in one is said by its entries.
    if (entry.type === 'directory') {
      entry.size = old.size;
      entry.mtime = old.mtime;
    }
    return entry;
  };
  const withContent = (entry: Entry, from: string): Entry => {
    if (entry.type !== 'file') return entry;
    const { hash, error } = hashFile(from);
    if (hash) entry.hash = hash;
    else {
      entry.unreadable = error;
      gaps.push({ path: entry.path, reason: `${error} (in the copy-on-write layer)` });
    }
    return entry;
  };
  const removedTree = (path: string) => {
    for (const entry of walk([path], new Set())) changes.push(overlay(deleted(entry)));
  };
  const createdTree = (at: string, path: string, stats: BigIntStats) => {
    const entry = entryOf(path, stats);
    changes.push({ kind: 'created', path, type: entry.type, fields: [], layers: ['overlay'] });
    if (entry.type !== 'directory') return;
    for (const name of list(at)) {
      const child = look(join(at, name));
      // A whiteout in a directory that is new anyway hides nothing.
      if (child && !isWhiteout(child)) createdTree(join(at, name), join(path, name), child);
    }
  };
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir).sort(comparePaths);
    } catch (error) {
      gaps.push({
        path: dir,
        reason: `${(error as NodeJS.ErrnoException).code ?? 'EIO'} (in the copy-on-write layer)`,
      });
      return [];
    }
  };

  /** `up` is a directory of the upper layer standing for `down`, a directory of the lower one. */
  const visit = (up: string, down: string, hiding: boolean) => {
    // Below an opaque directory nothing of the lower layer shows: what is not in the upper one is gone.
    const opaqueHere = hiding || opaque(up);
    const names = list(up);
    if (opaqueHere) {
      const kept = new Set(names);
      let old: string[] = [];
      try {
        old = readdirSync(down);
      } catch {
        // No lower directory (any more): nothing hidden.
      }
      for (const name of old.sort(comparePaths)) if (!kept.has(name)) removedTree(join(down, name));
    }
    for (const name of names) {
      const at = join(up, name);
      const path = join(down, name);
      const stats = look(at);
      if (!stats) continue;
      const before = look(path);
      if (isWhiteout(stats)) {
        if (before) removedTree(path);
        else if (!opaqueHere)
          changes.push({
            kind: 'deleted',
            path,
            type: 'unknown',
            fields: [],
            detail: 'deleted by the agent; gone from the real directory as well',
            layers: ['overlay'],
          });
        continue;
      }
      if (!before) {
        createdTree(at, path, stats);
        continue;
      }
      const old = entryOf(path, before);
      if (old.type === 'file') withContent(old, path);
      const now = withContent(agents(stats, old), at);
      if (old.type === 'symlink' || now.type === 'symlink') {
        old.target = target(path);
        now.target = target(at);
      }
      const change = compare(old, now);
      if (change) changes.push(overlay(change));
      if (now.type === 'directory') {
        if (old.type === 'directory') visit(at, path, opaqueHere);
        else for (const child of list(at)) createUnder(at, path, child);
      }
    }
  };
  const createUnder = (up: string, down: string, name: string) => {
    const stats = look(join(up, name));
    if (stats && !isWhiteout(stats)) createdTree(join(up, name), join(down, name), stats);
  };

  const top = look(upper);
  const base = look(lower);
  if (top && base) {
    // The root of the view is the upper directory itself: its mode and owner are what the agent saw.
    const old = rootAsMade ?? entryOf(lower, base);
    const change = compare(old, agents(top, old));
    if (change) changes.push(overlay(change));
    visit(upper, lower, false);
  }
  return { changes: settle(changes), gaps };
}

function target(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
