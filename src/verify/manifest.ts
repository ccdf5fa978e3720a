import { createHash, hash as oneShot } from 'node:crypto';
import {
  type BigIntStats,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  writeSync,
} from 'node:fs';
import { readLines } from '../sources/lines.js';
import { comparePaths, type Entry, type EntryType, typeOf } from './entry.js';

const chunk = Buffer.allocUnsafe(1024 * 1024);

/** sha256 of a file's content, read in fixed chunks (constant memory whatever its size). */
export function hashFile(path: string): { hash?: string; error?: string } {
  let fd: number;
  try {
    // Never follow a symlink swapped in since the lstat, never block on a FIFO swapped in.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
  try {
    // Most files are read whole at once: a read of a regular file that returns less than it was asked is at its
    // end, so they take one read and a one-shot hash (a hash object and a second read cost more than the hashing
    // of a small file).
    const first = readSync(fd, chunk, 0, chunk.length, null);
    if (first < chunk.length) return { hash: oneShot('sha256', chunk.subarray(0, first), 'hex') };
    const hash = createHash('sha256').update(chunk);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
    }
    return { hash: hash.digest('hex') };
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  } finally {
    closeSync(fd);
  }
}

function code(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'EIO';
}

/**
 * One entry as a walk holds it in memory: the fields a manifest compares, as plain numbers so that a manifest of a
 * large tree is cheap to hold and to compare. A time is whole seconds and nanoseconds (a nanosecond time does
 * not fit a double); an inode or device number beyond 2^53 is a decimal string. `toEntry` gives the manifest's
 * `Entry`, with decimal strings, for the few entries that are reported or compared in detail.
 */
export interface Rec {
  path: string;
  type: EntryType;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink: number;
  mtimeS: number;
  mtimeN: number;
  ctimeS: number;
  ctimeN: number;
  atimeS: number;
  atimeN: number;
  dev: number | string;
  ino: number | string;
  target?: string;
  hash?: string;
  unreadable?: string;
}

const G = 1_000_000_000n;
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
const id = (n: bigint): number | string => (n <= maxSafe ? Number(n) : n.toString());

export function recOf(path: string, stats: BigIntStats): Rec {
  return {
    path,
    type: typeOf(stats),
    mode: Number(stats.mode & 0o7777n),
    uid: Number(stats.uid),
    gid: Number(stats.gid),
    size: Number(stats.size),
    nlink: Number(stats.nlink),
    mtimeS: Number(stats.mtimeNs / G),
    mtimeN: Number(stats.mtimeNs % G),
    ctimeS: Number(stats.ctimeNs / G),
    ctimeN: Number(stats.ctimeNs % G),
    atimeS: Number(stats.atimeNs / G),
    atimeN: Number(stats.atimeNs % G),
    dev: id(stats.dev),
    ino: id(stats.ino),
  };
}

/** Seconds and nanoseconds (as `recOf` splits them) back to decimal nanoseconds. */
export const ns = (s: number, n: number): string => (BigInt(s) * G + BigInt(n)).toString();

export function toEntry(rec: Rec): Entry {
  const entry: Entry = {
    path: rec.path,
    type: rec.type,
    mode: rec.mode,
    uid: rec.uid,
    gid: rec.gid,
    size: rec.size,
    mtime: ns(rec.mtimeS, rec.mtimeN),
    ctime: ns(rec.ctimeS, rec.ctimeN),
    atime: ns(rec.atimeS, rec.atimeN),
    dev: String(rec.dev),
    ino: String(rec.ino),
    nlink: rec.nlink,
  };
  if (rec.target !== undefined) entry.target = rec.target;
  if (rec.hash !== undefined) entry.hash = rec.hash;
  if (rec.unreadable !== undefined) entry.unreadable = rec.unreadable;
  return entry;
}

/** Same inode, size and times: the content is taken as unchanged without reading it (as `sameStat`). */
export function sameStatRec(a: Rec, b: Rec): boolean {
  return (
    a.type === b.type &&
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.size === b.size &&
    a.mtimeS === b.mtimeS &&
    a.mtimeN === b.mtimeN &&
    a.ctimeS === b.ctimeS &&
    a.ctimeN === b.ctimeN
  );
}

/**
 * Equal in everything a manifest compares, hashes included when both have one: the fast path of a comparison.
 * When it says no, `compare` on the two entries says what differs (it may still find nothing worth reporting,
 * an access time alone).
 */
export function sameRec(a: Rec, b: Rec): boolean {
  return (
    sameStatRec(a, b) &&
    a.mode === b.mode &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    a.nlink === b.nlink &&
    a.target === b.target &&
    a.unreadable === b.unreadable &&
    (a.hash === undefined || b.hash === undefined || a.hash === b.hash)
  );
}

export function statRec(path: string): Rec | undefined {
  const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (!stats) return undefined;
  const rec = recOf(path, stats);
  if (rec.type === 'symlink') {
    try {
      rec.target = readlinkSync(path);
    } catch (error) {
      rec.unreadable = code(error);
    }
  }
  return rec;
}

/** An entry that could not be looked at: recorded so the report can say what was not checked. */
export function placeholder(path: string, reason: string): Rec {
  return {
    path,
    type: 'file',
    mode: 0,
    uid: 0,
    gid: 0,
    size: 0,
    nlink: 0,
    mtimeS: 0,
    mtimeN: 0,
    ctimeS: 0,
    ctimeN: 0,
    atimeS: 0,
    atimeN: 0,
    dev: 0,
    ino: 0,
    unreadable: reason,
  };
}

function join(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

const byName = (a: string, b: string) => comparePaths(a, b);

/**
 * Every entry under the roots, in `comparePaths` order, without following symlinks. Roots must be absolute,
 * resolved and not nested in one another; an excluded path is left out with everything below it. Only the
 * names of the directories on the current path are held, so memory does not grow with the tree.
 */
export function* records(roots: readonly string[], excluded: ReadonlySet<string>): Generator<Rec> {
  const walker = new Walker(roots, excluded);
  for (let rec = walker.next(); rec; rec = walker.next()) yield rec;
}

/**
 * `records` one entry at a time, which can stop part way and give what is left as entries of their own
 * (`rest`): each is looked at (a directory is not listed yet), and the walk of them, each followed by
 * everything below it, in order, is the rest of this walk.
 */
export class Walker {
  /** The roots not begun, sorted, last first (popped). */
  private readonly roots: string[];
  /** Each frame: a directory and its sorted names not yet visited, last name first (popped). */
  private readonly stack: { dir: string; names: string[] }[] = [];

  constructor(
    roots: readonly string[],
    private readonly excluded: ReadonlySet<string>,
  ) {
    this.roots = [...roots].sort(comparePaths).reverse();
  }

  private enter(entry: Rec): void {
    if (entry.type !== 'directory') return;
    try {
      const names = readdirSync(entry.path).sort(byName).reverse();
      this.stack.push({ dir: entry.path, names });
    } catch (error) {
      entry.unreadable = code(error);
    }
  }

  /** The next entry, or undefined at the end. */
  next(): Rec | undefined {
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (!frame) {
        const root = this.roots.pop();
        if (root === undefined) return undefined;
        const top = this.top(root);
        if (!top) continue;
        this.enter(top);
        return top;
      }
      const name = frame.names.pop();
      if (name === undefined) {
        this.stack.pop();
        continue;
      }
      const entry = this.look(join(frame.dir, name), name);
      if (!entry) continue; // removed between the listing and the look-up
      this.enter(entry);
      return entry;
    }
  }

  /** A root looked at; undefined if it is excluded or not there. */
  private top(root: string): Rec | undefined {
    return this.excluded.has(root) ? undefined : statRec(root);
  }

  /** One name of a listing looked at; undefined if it is excluded or gone. */
  private look(path: string, name: string): Rec | undefined {
    if (this.excluded.has(path)) return undefined;
    try {
      const entry = statRec(path);
      // A name that is not valid UTF-8 comes back altered and cannot be looked up: say so, never skip it.
      if (!entry && name.includes('\uFFFD')) return placeholder(path, 'EILSEQ');
      return entry;
    } catch (error) {
      return placeholder(path, code(error));
    }
  }

  /**
   * What is left of the walk: the names not visited yet in every directory on the current path and the roots
   * not begun, looked at, in order. Walking each of them (the directories among them not listed yet) in turn is
   * the rest of this walk; this walker is done.
   */
  rest(): Rec[] {
    const tops: Rec[] = [];
    // The deepest directory's names come first: they sort before those of the directories above it. Names and
    // roots are held last first.
    for (let f = this.stack.length - 1; f >= 0; f--) {
      const frame = this.stack[f] as { dir: string; names: string[] };
      for (let n = frame.names.length - 1; n >= 0; n--) {
        const name = frame.names[n] as string;
        const entry = this.look(join(frame.dir, name), name);
        if (entry) tops.push(entry);
      }
    }
    for (let r = this.roots.length - 1; r >= 0; r--) {
      const top = this.top(this.roots[r] as string);
      if (top) tops.push(top);
    }
    this.stack.length = 0;
    this.roots.length = 0;
    return tops;
  }
}

/** `records` as manifest entries. */
export function* walk(roots: readonly string[], excluded: ReadonlySet<string>): Generator<Entry> {
  for (const rec of records(roots, excluded)) yield toEntry(rec);
}

/** Writes entries as JSON lines through a buffer, so a manifest of any size streams to disk. */
export class ManifestWriter {
  private readonly fd: number;
  private pending: string[] = [];
  private bytes = 0;
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w', 0o600);
  }

  add(entry: Entry): void {
    const line = `${JSON.stringify(entry)}\n`;
    this.pending.push(line);
    this.bytes += line.length;
    this.count++;
    if (this.bytes > 256 * 1024) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.fd, this.pending.join(''));
    this.pending = [];
    this.bytes = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export function* readManifest(path: string): Generator<Entry> {
  for (const line of readLines(path)) yield JSON.parse(line.text) as Entry;
}

/**
 * Steps through a sorted manifest alongside a walk: `find(path)` returns the entry for that path if the
 * manifest has one, skipping past the ones before it. Paths must be asked for in ascending order.
 */
export class SortedLookup {
  private readonly entries: Iterator<Entry>;
  private current: Entry | undefined;

  constructor(entries: Iterable<Entry>) {
    this.entries = entries[Symbol.iterator]();
    this.current = this.next();
  }

  private next(): Entry | undefined {
    const step = this.entries.next();
    return step.done ? undefined : step.value;
  }

  find(path: string): Entry | undefined {
    while (this.current && comparePaths(this.current.path, path) < 0) this.current = this.next();
    return this.current && this.current.path === path ? this.current : undefined;
  }
}

/** Pairs of the same path from two sorted streams: [before, after], one side missing when the other is new. */
export function* mergeSorted(
  before: Iterable<Entry>,
  after: Iterable<Entry>,
): Generator<[Entry | undefined, Entry | undefined]> {
  const b = before[Symbol.iterator]();
  const a = after[Symbol.iterator]();
  let x = b.next();
  let y = a.next();
  while (!x.done || !y.done) {
    if (y.done || (!x.done && comparePaths(x.value.path, y.value.path) < 0)) {
      yield [x.value as Entry, undefined];
      x = b.next();
    } else if (x.done || comparePaths(x.value.path, y.value.path) > 0) {
      yield [undefined, y.value];
      y = a.next();
    } else {
      yield [x.value, y.value];
      x = b.next();
      y = a.next();
    }
  }
}
