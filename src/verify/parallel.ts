// The checker's walk and hashing on worker threads. A walk of a large tree is one lstat per entry, and on Node
// each costs a few microseconds of the calling thread (the call, the stats object, its garbage), so one thread
// sets the pace; the same calls made from several threads run side by side. Each worker lists the directories it
// is given, sorted, with every entry's stat packed in a Float64Array (no object per entry crosses threads), and
// hashes the files it is given; the main thread hands out directories as they are found and puts the manifest
// together in `comparePaths` order, exactly as `records` gives it.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EntryType } from './entry.js';
import { type Rec, Walker } from './manifest.js';

/** Numbers per entry in a listing: type, mode, uid, gid, size, nlink, three times (s, ns), dev, ino. */
const K = 14;
const types: EntryType[] = [
  'file',
  'directory',
  'symlink',
  'fifo',
  'socket',
  'character device',
  'block device',
];

/**
 * The number as a small integer where it is one: a double read from a Float64Array and stored as is would be kept
 * boxed (a heap number per field per entry, twice the memory of the manifest).
 */
const int = (x: number): number => (x === (x | 0) ? x | 0 : x);

/** What a listing holds beyond the numbers, for one entry. */
interface Extra {
  i: number;
  target?: string;
  unreadable?: string;
  dev?: string;
  ino?: string;
}

/** One directory as a worker lists it. */
interface Listing {
  /** Why it could not be listed. */
  error?: string;
  names: string[];
  data: Float64Array;
  /** Per entry index: link target, why it could not be looked at, an inode or device number beyond 2^53. */
  extra: Extra[];
}

// Plain JavaScript, run with `eval` so that it needs no file of its own (the same from src/ under a test runner
// and from dist/). comparePaths, hashFile and the entry types are those of entry.ts and manifest.ts; the tests
// check the walk against `records`.
const workerSource = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash, hash: oneShot } = require('node:crypto');
const excluded = new Set(workerData.excluded);
const K = ${K};
const G = 1000000000n;
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
const chunk = Buffer.allocUnsafe(1024 * 1024);
const code = (error) => (error && error.code) || 'EIO';
function comparePaths(a, b) {
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
function typeCode(s) {
  if (s.isFile()) return 0;
  if (s.isDirectory()) return 1;
  if (s.isSymbolicLink()) return 2;
  if (s.isFIFO()) return 3;
  if (s.isSocket()) return 4;
  if (s.isCharacterDevice()) return 5;
  return 6;
}
function list(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    return { error: code(error), names: [], data: new Float64Array(0), extra: [] };
  }
  names.sort(comparePaths);
  const data = new Float64Array(names.length * K);
  const kept = [];
  const extra = [];
  for (const name of names) {
    const path = dir === '/' ? '/' + name : dir + '/' + name;
    if (excluded.has(path)) continue;
    let stats;
    let failed;
    try {
      stats = fs.lstatSync(path, { bigint: true, throwIfNoEntry: false });
      // A name that is not valid UTF-8 comes back altered and cannot be looked up: say so, never skip it.
      if (!stats && name.includes('\uFFFD')) failed = 'EILSEQ';
    } catch (error) {
      failed = code(error);
    }
    if (!stats && !failed) continue; // removed between the listing and the look-up
    const i = kept.length;
    kept.push(name);
    if (failed) {
      extra.push({ i, unreadable: failed });
      continue;
    }
    const o = i * K;
    data[o] = typeCode(stats);
    data[o + 1] = Number(stats.mode & 0o7777n);
    data[o + 2] = Number(stats.uid);
    data[o + 3] = Number(stats.gid);
    data[o + 4] = Number(stats.size);
    data[o + 5] = Number(stats.nlink);
    data[o + 6] = Number(stats.mtimeNs / G);
    data[o + 7] = Number(stats.mtimeNs % G);
    data[o + 8] = Number(stats.ctimeNs / G);
    data[o + 9] = Number(stats.ctimeNs % G);
    data[o + 10] = Number(stats.atimeNs / G);
    data[o + 11] = Number(stats.atimeNs % G);
    let more;
    if (stats.dev <= maxSafe) data[o + 12] = Number(stats.dev);
    else more = { i, dev: stats.dev.toString() };
    if (stats.ino <= maxSafe) data[o + 13] = Number(stats.ino);
    else (more = more || { i }).ino = stats.ino.toString();
    if (data[o] === 2) {
      more = more || { i };
      try {
        more.target = fs.readlinkSync(path);
      } catch (error) {
        more.unreadable = code(error);
      }
    }
    if (more) extra.push(more);
  }
  return { names: kept, data: data.slice(0, kept.length * K), extra };
}
function hashFile(path) {
  let fd;
  try {
    // Never follow a symlink swapped in since the lstat, never block on a FIFO swapped in.
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    return '!' + code(error);
  }
  try {
    // one read and a one-shot hash for a file read whole at once (see manifest.ts hashFile)
    const first = fs.readSync(fd, chunk, 0, chunk.length, null);
    if (first < chunk.length) return oneShot('sha256', chunk.subarray(0, first), 'hex');
    const hash = createHash('sha256').update(chunk);
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
    }
    return hash.digest('hex');
  } catch (error) {
    return '!' + code(error);
  } finally {
    fs.closeSync(fd);
  }
}
parentPort.on('message', (message) => {
  if (message.dirs) parentPort.postMessage({ id: message.id, listings: message.dirs.map(list) });
  else parentPort.postMessage({ id: message.id, hashes: message.paths.map(hashFile) });
});
`;

/**
 * Whether the entry an earlier walk made for this name is exactly what the listing says now: every field (access
 * time included), the same link target and numbers, and nothing left to fill in later that would change the
 * earlier walk's entry too (a file without a hash is hashed; an unreadable one is reported; a directory that
 * cannot be listed now is marked so). Such an entry is the same object in both walks, so comparing them is free.
 */
function unchanged(
  old: Rec,
  /** Where the names of the directory's entries start in their paths. */
  base: number,
  name: string,
  data: Float64Array,
  o: number,
  more: Extra | undefined,
  listings: ReadonlyMap<string, Listing>,
): boolean {
  if (more?.unreadable !== undefined || old.unreadable !== undefined) return false;
  if (old.path.length !== base + name.length || !old.path.endsWith(name)) return false;
  if (
    old.type !== types[data[o] as number] ||
    old.mode !== data[o + 1] ||
    old.uid !== data[o + 2] ||
    old.gid !== data[o + 3] ||
    old.size !== data[o + 4] ||
    old.nlink !== data[o + 5] ||
    old.mtimeS !== data[o + 6] ||
    old.mtimeN !== data[o + 7] ||
    old.ctimeS !== data[o + 8] ||
    old.ctimeN !== data[o + 9] ||
    old.atimeS !== data[o + 10] ||
    old.atimeN !== data[o + 11] ||
    old.dev !== (more?.dev ?? data[o + 12]) ||
    old.ino !== (more?.ino ?? data[o + 13]) ||
    old.target !== more?.target
  )
    return false;
  if (old.type === 'file') return old.hash !== undefined;
  if (old.type === 'directory') {
    const listing = listings.get(old.path);
    return listing !== undefined && listing.error === undefined;
  }
  return true;
}

/**
 * The entries of a walk (as `walk` or `records` give them) by the directory holding them, in order: what a later
 * walk compares its listings with.
 */
export function byDirectory(recs: readonly Rec[]): Map<string, Rec[]> {
  const dirs = new Map<string, Rec[]>();
  // The directories on the path to the current entry, with their entries so far (a walk is depth-first).
  const stack: { path: string; entries: Rec[] }[] = [];
  for (const rec of recs) {
    const path = rec.path;
    while (stack.length > 0) {
      const top = (stack[stack.length - 1] as { path: string }).path;
      const prefix = top === '/' ? 0 : top.length;
      if (path.length > prefix + 1 && path.charCodeAt(prefix) === 47 && path.startsWith(top)) break;
      stack.pop();
    }
    const parent = stack[stack.length - 1];
    // A direct child: no separator after its directory's.
    if (parent && path.indexOf('/', (parent.path === '/' ? 0 : parent.path.length) + 1) < 0)
      parent.entries.push(rec);
    if (rec.type === 'directory') {
      const entries: Rec[] = [];
      dirs.set(path, entries);
      stack.push({ path, entries });
    }
  }
  return dirs;
}

export interface WalkOptions {
  /** Told the number of entries listed so far, every few thousand. */
  progress?: (entries: number) => void;
  /** An earlier walk's entries by directory (`byDirectory`, or `directories` of that walk): see `unchanged`. */
  previous?: ReadonlyMap<string, readonly Rec[]>;
  /** Filled with this walk's entries by directory, as `byDirectory` would give them. */
  directories?: Map<string, Rec[]>;
}

interface Job {
  id: number;
  resolve: (value: unknown) => void;
}

/** How many worker threads: one per core, at most 4 (the walk is bound by the file system's locks beyond). */
export function poolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

export class WalkPool {
  private readonly workers: Worker[] = [];
  /** Jobs each worker has been given and not answered yet. */
  private readonly busy: Job[][] = [];
  private nextId = 0;
  private excluded: ReadonlySet<string> = new Set();
  private failure: Error | undefined;
  private closed = false;

  /** The pool, or undefined when worker threads cannot be started here (the caller walks on its own thread). */
  static open(excluded: ReadonlySet<string>, size = poolSize()): WalkPool | undefined {
    const pool = new WalkPool();
    pool.excluded = excluded;
    try {
      for (let n = 0; n < size; n++) {
        const worker = new Worker(workerSource, { eval: true, workerData: { excluded: [...excluded] } });
        worker.unref();
        const index = n;
        pool.busy.push([]);
        worker.on('message', (message: { id: number }) => pool.answered(index, message));
        worker.on('error', (error) => pool.fail(error));
        worker.on('exit', (code) => {
          if (!pool.closed) pool.fail(new Error(`a walk worker stopped (exit code ${code})`));
        });
        pool.workers.push(worker);
      }
    } catch {
      pool.close();
      return undefined;
    }
    return pool;
  }

  private answered(index: number, message: { id: number }): void {
    const jobs = this.busy[index] as Job[];
    const at = jobs.findIndex((job) => job.id === message.id);
    if (at < 0) return;
    const [job] = jobs.splice(at, 1);
    // Idle, it does not keep the process alive (the checker waits for the command meanwhile).
    if (jobs.length === 0) this.workers[index]?.unref();
    job?.resolve(message);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const jobs of this.busy) for (const job of jobs.splice(0)) job.resolve(undefined);
  }

  /** The worker with the fewest jobs, when it has fewer than `depth`. */
  private idle(depth: number): number {
    let best = -1;
    for (let n = 0; n < this.workers.length; n++) {
      const jobs = (this.busy[n] as Job[]).length;
      if (jobs < depth && (best < 0 || jobs < (this.busy[best] as Job[]).length)) best = n;
    }
    return best;
  }

  private send(index: number, message: object, done: (answer: unknown) => void): void {
    const id = this.nextId++;
    const worker = this.workers[index] as Worker;
    // Working, it does: nothing else may be keeping the event loop alive while the answer is awaited.
    worker.ref();
    (this.busy[index] as Job[]).push({ id, resolve: done });
    worker.postMessage({ id, ...message });
  }

  /**
   * Every entry under the roots, in `comparePaths` order, as `records(roots, excluded)` gives them (the pool's
   * exclusions are the ones it was opened with). `progress` is told the number of entries listed so far.
   */
  async walk(roots: readonly string[], options: WalkOptions = {}): Promise<Rec[]> {
    if (this.failure) throw this.failure;
    // A walk not begun leaves its roots, looked at, in order.
    return this.walkFrom(new Walker(roots, this.excluded).rest(), options);
  }

  /**
   * Entries already looked at, in `comparePaths` order and not inside one another (`Walker.rest`), each followed
   * by everything below it: the directories among them are listed here (and marked unreadable if they cannot be).
   */
  async walkFrom(tops: readonly Rec[], options: WalkOptions = {}): Promise<Rec[]> {
    const { progress, previous, directories } = options;
    if (this.failure) throw this.failure;
    const listings = new Map<string, Listing>();
    const queue: string[] = tops
      .filter((top) => top.type === 'directory' && top.unreadable === undefined)
      .map((top) => top.path);
    let listed = 0;
    let reported = 0;
    await new Promise<void>((resolve, reject) => {
      let outstanding = 0;
      const pump = () => {
        if (this.failure) return reject(this.failure);
        for (;;) {
          if (queue.length === 0) break;
          const index = this.idle(2);
          if (index < 0) break;
          // Small batches while the tree is opening up, larger ones once there is plenty to hand out.
          const batch = Math.max(1, Math.min(64, Math.ceil(queue.length / (this.workers.length * 4))));
          const dirs = queue.splice(queue.length - batch, batch);
          outstanding++;
          this.send(index, { dirs }, (answer) => {
            outstanding--;
            if (!answer) return pump();
            const got = (answer as { listings: Listing[] }).listings;
            for (let d = 0; d < dirs.length; d++) {
              const dir = dirs[d] as string;
              const listing = got[d] as Listing;
              listings.set(dir, listing);
              listed += listing.names.length;
              const unreadable = new Set(listing.extra.filter((x) => x.unreadable).map((x) => x.i));
              for (let i = 0; i < listing.names.length; i++)
                if (listing.data[i * K] === 1 && !unreadable.has(i))
                  queue.push(dir === '/' ? `/${listing.names[i]}` : `${dir}/${listing.names[i]}`);
            }
            if (progress && listed - reported >= 5000) {
              reported = listed;
              progress(listed);
            }
            pump();
          });
        }
        if (outstanding === 0 && queue.length === 0) resolve();
      };
      pump();
    });

    const out: Rec[] = [];
    const emit = (dir: Rec) => {
      const listing = listings.get(dir.path) as Listing;
      if (listing.error) {
        dir.unreadable = listing.error;
        return;
      }
      const { names, data, extra } = listing;
      // The entries an earlier walk found here, if they are the same names: each one whose every field is the same
      // now is taken as it is (see `unchanged`) instead of being made again.
      let earlier = previous?.get(dir.path);
      if (earlier && earlier.length !== names.length) earlier = undefined;
      const base = dir.path === '/' ? 1 : dir.path.length + 1;
      const entries: Rec[] | undefined = directories ? [] : undefined;
      directories?.set(dir.path, entries as Rec[]);
      let x = 0;
      for (let i = 0; i < names.length; i++) {
        const o = i * K;
        const more = extra[x];
        const at = more && more.i === i ? more : undefined;
        if (at) x++;
        const old = earlier?.[i];
        if (old && unchanged(old, base, names[i] as string, data, o, at, listings)) {
          out.push(old);
          entries?.push(old);
          if (old.type === 'directory') emit(old);
          continue;
        }
        const rec: Rec = {
          path: dir.path === '/' ? `/${names[i]}` : `${dir.path}/${names[i]}`,
          type: types[data[o] as number] as EntryType,
          mode: int(data[o + 1] as number),
          uid: int(data[o + 2] as number),
          gid: int(data[o + 3] as number),
          size: int(data[o + 4] as number),
          nlink: int(data[o + 5] as number),
          mtimeS: int(data[o + 6] as number),
          mtimeN: int(data[o + 7] as number),
          ctimeS: int(data[o + 8] as number),
          ctimeN: int(data[o + 9] as number),
          atimeS: int(data[o + 10] as number),
          atimeN: int(data[o + 11] as number),
          dev: int(data[o + 12] as number),
          ino: int(data[o + 13] as number),
        };
        if (at) {
          if (at.target !== undefined) rec.target = at.target;
          if (at.unreadable !== undefined) rec.unreadable = at.unreadable;
          if (at.dev !== undefined) rec.dev = at.dev;
          if (at.ino !== undefined) rec.ino = at.ino;
        }
        out.push(rec);
        entries?.push(rec);
        if (rec.type === 'directory' && rec.unreadable === undefined) emit(rec);
      }
    };
    for (const top of tops) {
      out.push(top);
      if (top.type === 'directory' && top.unreadable === undefined) emit(top);
    }
    return out;
  }

  /**
   * Hashes the files, a batch per worker at a time, setting each one's `hash` (or `unreadable`, with why).
   * Returns the number of files and bytes hashed.
   */
  async hash(files: readonly Rec[]): Promise<{ hashed: number; bytes: number }> {
    if (this.failure) throw this.failure;
    let hashed = 0;
    let bytes = 0;
    let next = 0;
    await new Promise<void>((resolve, reject) => {
      let outstanding = 0;
      const pump = () => {
        if (this.failure) return reject(this.failure);
        for (;;) {
          if (next >= files.length) break;
          const index = this.idle(2);
          if (index < 0) break;
          // About 4 MB or 256 files a batch: large enough to amortise the messages, small enough to share out.
          const batch: Rec[] = [];
          let size = 0;
          while (next < files.length && batch.length < 256 && size < 4_000_000) {
            const file = files[next++] as Rec;
            batch.push(file);
            size += file.size;
          }
          outstanding++;
          this.send(index, { paths: batch.map((file) => file.path) }, (answer) => {
            outstanding--;
            if (answer) {
              const hashes = (answer as { hashes: string[] }).hashes;
              for (let n = 0; n < batch.length; n++) {
                const file = batch[n] as Rec;
                const result = hashes[n] as string;
                if (result.startsWith('!')) file.unreadable = result.slice(1);
                else {
                  file.hash = result;
                  hashed++;
                  bytes += file.size;
                }
              }
            }
            pump();
          });
        }
        if (outstanding === 0 && next >= files.length) resolve();
      };
      pump();
    });
    return { hashed, bytes };
  }

  close(): void {
    this.closed = true;
    for (const worker of this.workers) void worker.terminate();
    this.workers.length = 0;
  }
}
