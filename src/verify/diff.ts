import { baseName, comparePaths, type Entry, type EntryType, parentOf, sameEntry } from './entry.js';

export type ChangeKind =
  | 'created'
  | 'modified'
  | 'deleted'
  | 'renamed'
  | 'mode changed'
  | 'type changed'
  | 'link retargeted'
  | 'created and deleted';

/**
 * manifest: the before/after comparison (the proof); watcher: live file-system events (the timing); overlay: the
 * upper layer of the copy-on-write view an agent ran against (the exact record of what it wrote).
 */
export type Layer = 'manifest' | 'watcher' | 'overlay';

export interface Change {
  kind: ChangeKind;
  path: string;
  /** renamed: where it was. */
  from?: string;
  type: EntryType;
  /** What differs: content, size, mode, owner, links, mtime, ctime, inode, target, type. */
  fields: string[];
  detail?: string;
  layers: Layer[];
  /** When the watcher first saw it (ISO 8601). */
  time?: string;
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;

/** The fields in which two entries for one path differ. */
function differing(before: Entry, after: Entry): string[] {
  const fields: string[] = [];
  if (before.type === 'file') {
    const compared = before.hash !== undefined && after.hash !== undefined;
    const content = compared
      ? before.hash !== after.hash
      : before.size !== after.size || before.mtime !== after.mtime || before.ino !== after.ino;
    if (content) fields.push('content');
  }
  if (before.target !== after.target) fields.push('target');
  if (before.size !== after.size) fields.push('size');
  if (before.mode !== after.mode) fields.push('mode');
  if (before.uid !== after.uid || before.gid !== after.gid) fields.push('owner');
  if (before.nlink !== after.nlink) fields.push('links');
  if (before.ino !== after.ino || before.dev !== after.dev) fields.push('inode');
  if (before.mtime !== after.mtime) fields.push('mtime');
  if (before.ctime !== after.ctime) fields.push('ctime');
  return fields;
}

/**
 * Setting the access time (touch -a, utimes keeping mtime) moves ctime to the same instant, and reading does not
 * move ctime at all: when ctime alone changed and the access time is now at or after it, the access time is all
 * that changed. A change that leaves atime behind ctime (extended attributes, ACLs) is still reported.
 */
function accessOnly(before: Entry, after: Entry): boolean {
  return before.atime !== after.atime && BigInt(after.atime) >= BigInt(after.ctime);
}

/** How one path changed between the two manifests, or nothing if it did not. */
export function compare(before: Entry, after: Entry): Change | undefined {
  if (before.type !== after.type) {
    return {
      kind: 'type changed',
      path: after.path,
      type: after.type,
      fields: ['type'],
      detail: `${before.type} → ${after.type}`,
      layers: ['manifest'],
    };
  }
  if (sameEntry(before, after)) return undefined;
  const fields = differing(before, after);
  if (fields.length === 0) return undefined;
  if (fields.length === 1 && fields[0] === 'ctime' && accessOnly(before, after)) return undefined;
  const change: Change = {
    kind: 'modified',
    path: after.path,
    type: after.type,
    fields,
    layers: ['manifest'],
  };
  if (fields.includes('target')) {
    change.kind = 'link retargeted';
    change.detail = `${before.target} → ${after.target}`;
  } else if (fields.includes('content')) {
    change.detail =
      before.hash === undefined || after.hash === undefined
        ? 'content not compared (unreadable); metadata differs'
        : `content differs (${before.size} → ${after.size} bytes)`;
    if (fields.includes('mode')) change.detail += `, mode ${octal(before.mode)} → ${octal(after.mode)}`;
  } else if (fields.includes('mode')) {
    change.kind = 'mode changed';
    change.detail = `${octal(before.mode)} → ${octal(after.mode)}`;
  } else if (after.type === 'directory') {
    change.detail = 'its entries changed';
  } else {
    change.detail = `content identical; ${fields.join(', ')} changed`;
  }
  return change;
}

export function created(entry: Entry): Change {
  return { kind: 'created', path: entry.path, type: entry.type, fields: [], layers: ['manifest'] };
}

export function deleted(entry: Entry): Change {
  return { kind: 'deleted', path: entry.path, type: entry.type, fields: [], layers: ['manifest'] };
}

/**
 * Pairs a deleted path with a created one holding the same inode: a rename. Files must also keep their size
 * and mtime (or content), so a new file that happens to reuse a freed inode is not taken for a rename.
 */
export function pairRenames(gone: Entry[], appeared: Entry[]): Change[] {
  const byInode = new Map<string, Entry[]>();
  for (const entry of gone) {
    const key = `${entry.dev}:${entry.ino}`;
    byInode.set(key, [...(byInode.get(key) ?? []), entry]);
  }
  const changes: Change[] = [];
  const paired = new Set<Entry>();
  for (const entry of appeared) {
    const candidates = byInode.get(`${entry.dev}:${entry.ino}`) ?? [];
    const match = candidates.find(
      (old) =>
        !paired.has(old) &&
        old.type === entry.type &&
        (old.type !== 'file' ||
          (old.size === entry.size && old.mtime === entry.mtime) ||
          (old.hash !== undefined && old.hash === entry.hash)),
    );
    if (!match) {
      changes.push(created(entry));
      continue;
    }
    paired.add(match);
    // A rename sets ctime, and moving a directory rewrites its '..': neither is a change of its own.
    const fields = differing(match, entry).filter(
      (field) =>
        field !== 'ctime' && !(entry.type === 'directory' && (field === 'mtime' || field === 'size')),
    );
    changes.push({
      kind: 'renamed',
      path: entry.path,
      from: match.path,
      type: entry.type,
      fields,
      detail: `from ${match.path}${fields.length > 0 ? `; ${fields.join(', ')} changed too` : ''}`,
      layers: ['manifest'],
    });
  }
  for (const entry of gone) if (!paired.has(entry)) changes.push(deleted(entry));
  return changes;
}

const bookkeeping = new Set(['mtime', 'ctime', 'size', 'links']);

/**
 * The final list: entries that moved with a renamed directory are left to that rename, and a directory whose
 * only change is the bookkeeping of its entries (mtime, size, link count) is left out when a change of one of
 * those entries is reported, or when it is in `explained` (an excluded entry in it was made or removed). A
 * directory that changed with nothing to show for it stays: something was made and removed there.
 */
export function settle(changes: Change[], explained: ReadonlySet<string> = new Set()): Change[] {
  const renamedTo = new Map<string, string>();
  for (const change of changes)
    if (change.kind === 'renamed' && change.from) renamedTo.set(change.from, change.path);
  const kept = changes.filter((change) => {
    if (change.kind !== 'renamed' || !change.from || change.fields.length > 0) return true;
    return !(
      renamedTo.get(parentOf(change.from)) === parentOf(change.path) &&
      baseName(change.from) === baseName(change.path)
    );
  });
  const parents = new Set<string>();
  for (const change of kept) {
    parents.add(parentOf(change.path));
    if (change.from) parents.add(parentOf(change.from));
  }
  return kept
    .filter(
      (change) =>
        !(
          change.kind === 'modified' &&
          change.type === 'directory' &&
          change.fields.every((field) => bookkeeping.has(field)) &&
          (parents.has(change.path) || explained.has(change.path))
        ),
    )
    .sort((a, b) => comparePaths(a.path, b.path));
}
