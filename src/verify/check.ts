import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { leftByGone } from '../processes.js';
import { HashCache, rootIndexes, writeHashCache } from './cache.js';
import { type Change, compare, pairRenames, settle } from './diff.js';
import { comparePaths, parentOf } from './entry.js';
import { hashFile, type Rec, sameRec, sameStatRec, toEntry, Walker } from './manifest.js';
import { byDirectory, poolSize, WalkPool } from './parallel.js';
import { Watcher, type WatcherStatus } from './watcher.js';

export interface CheckOptions {
  /** Directories to watch. */
  roots: readonly string[];
  /** Paths left out, each with everything below it (exact paths, not patterns). */
  exclude?: readonly string[];
  /** Where manifests are kept between runs, so unchanged files are not hashed again. */
  cacheDir?: string;
  /**
   * false: no file-system watcher (--no-watch). The manifests still give the whole verdict; only the times of
   * changes and the names of files made and removed within the run are lost (their directory is still reported).
   */
  watch?: boolean;
  /** Worker threads for the walks and the hashing (default: one per core, at most 4); 0: all on this thread. */
  threads?: number;
  /** Called every few thousand entries while a manifest is taken. */
  progress?: (phase: 'before' | 'after', entries: number) => void;
}

export interface Report {
  clean: boolean;
  roots: string[];
  excluded: string[];
  /** Changes the checked command (or replay) made, or that it cannot be told apart from: the verdict. */
  changes: Change[];
  /**
   * Changes provably made by another process (a replay's agent ran against a copy-on-write view of those
   * directories, or with them read-only): said, never counted against the run.
   */
  others: Change[];
  /** Entries whose content or listing could not be read: not checked, and said so. */
  gaps: { path: string; reason: string }[];
  manifest: {
    before: number;
    after: number;
    /** Files whose content was hashed in this run (the rest reused a hash from the cache). */
    hashed: number;
    hashedBytes: number;
    cached: number;
    beforeMs: number;
    afterMs: number;
  };
  watcher: WatcherStatus & {
    /** Changes the manifest proved that the watcher never reported (hard links from outside, overflow, …). */
    missed: number;
  };
  startedAt: string;
  finishedAt: string;
}

/** The path with symlinks in its existing part resolved, so it compares with what a walk produces. */
export function canonicalPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(canonicalPath(parent), basename(absolute));
}

/** Roots made canonical, duplicates and roots inside other roots dropped. */
export function canonicalRoots(paths: readonly string[]): string[] {
  const roots = [...new Set(paths.map(canonicalPath))].sort(comparePaths);
  return roots.filter(
    (root) => !roots.some((other) => other !== root && (other === '/' || root.startsWith(`${other}/`))),
  );
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(env.HOME ?? homedir(), '.cache');
  return join(cache, 'replay-history', 'manifests');
}

/** Lets timers and the watcher's callbacks run while a walk holds the thread. */
const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Entries walked between two yields. */
const yieldEvery = 2000;
/**
 * When the worker threads pay for their start: trees of `entries` entries or more are walked on them (the size is
 * the hash cache's, or the first manifest's), and `files` files or more to hash are hashed on them. Tests lower
 * them to check the pool on small trees.
 */
export const poolFrom = { entries: 20_000, files: 2_000 };

/** Whether a sorted list of entries holds `path` (binary search in `comparePaths` order). */
function holds(sorted: readonly Rec[], path: string): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const order = comparePaths((sorted[mid] as Rec).path, path);
    if (order === 0) return true;
    if (order < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * The side-effect checker. `start` sets up the watcher and, while its watches are being added, takes the first
 * manifest (in memory); `finish` takes the second manifest, comparing it entry by entry with the first, while the
 * watcher settles, and reports every difference with the layers that saw it. The manifest is the verdict; the
 * watcher only adds when, and what came and went in between.
 */
export class Checker {
  /** The identity of each excluded path when the run started (see `identity`). */
  private readonly excludedBefore = new Map<string, string>();
  /** The first manifest, in walk order. */
  private before: Rec[] = [];
  /** The first manifest's entries by directory, when the workers took it (else made from it when needed). */
  private beforeDirectories: Map<string, Rec[]> | undefined;
  /** The cache was read, every file of the first manifest took its hash from it, and it holds nothing else. */
  private cacheExact = false;

  private constructor(
    private readonly roots: string[],
    private readonly excluded: Set<string>,
    private readonly watcher: Watcher,
    private readonly cacheDir: string,
    private readonly cacheFile: string,
    private readonly tempFile: string,
    private readonly counts: Report['manifest'],
    private readonly gaps: Report['gaps'],
    private readonly startedAt: string,
    private readonly ownCache: boolean,
    /** Worker threads allowed (0: all on this thread). */
    private readonly threads: number,
    private readonly progress?: CheckOptions['progress'],
  ) {}

  static async start(options: CheckOptions): Promise<Checker> {
    const roots = canonicalRoots(options.roots);
    let cacheDir = options.cacheDir ?? defaultCacheDir();
    let ownCache = false;
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    } catch {
      // No writable cache (read-only home): a private one for this run, removed at the end.
      cacheDir = mkdtempSync(join(tmpdir(), 'replay-history-verify-'));
      ownCache = true;
    }
    cacheDir = canonicalPath(cacheDir);
    removeStale(cacheDir);
    const excluded = new Set([...(options.exclude ?? []).map(canonicalPath), cacheDir]);
    const key = createHash('sha256')
      .update(JSON.stringify({ roots, excluded: [...excluded].sort() }))
      .digest('hex')
      .slice(0, 16);
    const cacheFile = join(cacheDir, `${key}.hashes`);
    // What the checker wrote before the hashes had a format of their own (one JSON object per entry): unused.
    rmSync(join(cacheDir, `${key}.jsonl`), { force: true });
    const tempFile = join(cacheDir, `${key}.${process.pid}.${randomBytes(4).toString('hex')}.after`);
    const startedAt = new Date().toISOString();

    const threads = options.threads ?? poolSize();
    // The watcher first. Its watches are added by its own thread while the first manifest is taken, and are all
    // in place before `start` returns: whatever the checked command does is seen by both.
    const { watcher, ready } =
      options.watch === false
        ? { watcher: Watcher.off(), ready: Promise.resolve() }
        : await Watcher.start(roots, [...excluded]);
    const counts: Report['manifest'] = {
      before: 0,
      after: 0,
      hashed: 0,
      hashedBytes: 0,
      cached: 0,
      beforeMs: 0,
      afterMs: 0,
    };
    const checker = new Checker(
      roots,
      excluded,
      watcher,
      cacheDir,
      cacheFile,
      tempFile,
      counts,
      [],
      startedAt,
      ownCache,
      threads,
      options.progress,
    );
    try {
      await checker.takeBefore();
    } catch (error) {
      checker.closePool();
      await ready;
      await watcher.stop();
      throw error;
    }
    await ready;
    return checker;
  }

  /** Worker threads for the walks and the hashing, while they pay for their start (see `usePool`). */
  private pool: WalkPool | undefined;

  /**
   * Opens the pool if there is enough to share out (see `poolFrom`): starting the workers costs tens of
   * milliseconds, more than a small tree's walk.
   */
  private usePool(entries: number, files = 0): void {
    if (this.pool || this.threads === 0 || (entries < poolFrom.entries && files < poolFrom.files)) return;
    this.pool = WalkPool.open(this.excluded, this.threads);
  }

  /** Lets the first manifest go (the run is over, or could not be checked). */
  private forgetBefore(): void {
    this.before = [];
    this.beforeDirectories = undefined;
  }

  private closePool(): void {
    this.pool?.close();
    this.pool = undefined;
  }

  /** A manifest of the roots: on the worker threads, or on this one (yielding now and then) without them. */
  private async walkAll(phase: 'before' | 'after'): Promise<Rec[]> {
    if (this.pool) {
      const progress = (entries: number) => this.progress?.(phase, entries);
      if (phase === 'before') {
        this.beforeDirectories = new Map();
        return this.pool.walk(this.roots, { progress, directories: this.beforeDirectories });
      }
      // The second walk on the workers takes each entry that did not change from the first as it is.
      const previous = this.beforeDirectories ?? byDirectory(this.before);
      this.beforeDirectories = undefined;
      return this.pool.walk(this.roots, { progress, previous });
    }
    const recs: Rec[] = [];
    const walker = new Walker(this.roots, this.excluded);
    for (let rec = walker.next(); rec; rec = walker.next()) {
      recs.push(rec);
      // A tree found larger than the cache said (or with no cache): the rest of it on the workers, which pay for
      // their start from this size on.
      if (recs.length === poolFrom.entries && this.threads > 0) {
        this.usePool(recs.length);
        const pool = this.pool as WalkPool | undefined;
        if (pool) {
          const walked = recs.length;
          const rest = await pool.walkFrom(walker.rest(), {
            progress: (entries) => this.progress?.(phase, walked + entries),
          });
          for (const entry of rest) recs.push(entry);
          return recs;
        }
      }
      if (recs.length % yieldEvery === 0) {
        if (recs.length % 5000 === 0) this.progress?.(phase, recs.length);
        await yieldNow();
      }
    }
    return recs;
  }

  /** Hashes the files (setting `hash`, or `unreadable` with why), and counts them. */
  private async hashAll(files: Rec[]): Promise<void> {
    if (this.pool) {
      const { hashed, bytes } = await this.pool.hash(files);
      this.counts.hashed += hashed;
      this.counts.hashedBytes += bytes;
      return;
    }
    for (const file of files) {
      const { hash, error } = hashFile(file.path);
      if (hash) {
        file.hash = hash;
        this.counts.hashed++;
        this.counts.hashedBytes += file.size;
      } else file.unreadable = error;
    }
  }

  private async takeBefore(): Promise<void> {
    const started = performance.now();
    for (const path of this.excluded) this.excludedBefore.set(path, identity(path));
    // A tree the cache says is large is walked on the workers; without a cache, on this thread (the hashing that
    // follows, of every file, goes to the workers if there are many). The workers start while the cache is read:
    // its size tells the number of files near enough (over 100 bytes each).
    this.usePool(cacheBytes(this.cacheFile) / 100);
    // The cache is read while the tree is walked (it is only looked at once the walk is done).
    const walking = this.walkAll('before');
    const cache = await HashCache.load(this.cacheFile, this.roots);
    const before = await walking;
    const unhashed: Rec[] = [];
    for (const [rec, root] of rootIndexes(this.roots, before)) {
      if (rec.type !== 'file' || rec.unreadable) continue;
      const cached = cache?.find(rec, root);
      if (cached) {
        rec.hash = cached;
        this.counts.cached++;
      } else unhashed.push(rec);
    }
    this.usePool(0, unhashed.length);
    await this.hashAll(unhashed);
    // Kept for the second walk if the tree is large, else closed (not held while the command runs).
    if (before.length < poolFrom.entries) this.closePool();
    this.before = before;
    this.cacheExact = cache !== undefined && this.counts.hashed === 0 && this.counts.cached === cache.size;
    this.counts.before = before.length;
    this.counts.beforeMs = performance.now() - started;
  }

  async finish(): Promise<Report> {
    try {
      return await this.compareAfter();
    } catch (error) {
      // No verdict (a worker failed, the roots vanished): nothing is left running or behind, and the caller
      // reports the error rather than a clean tree.
      this.closePool();
      await this.watcher.stop();
      this.forgetBefore();
      if (this.ownCache) rmSync(this.cacheDir, { recursive: true, force: true });
      throw error;
    }
  }

  private async compareAfter(): Promise<Report> {
    // The watcher settles while the second manifest is taken: the walk makes no events, and yields often enough
    // for the watcher's batches to be recorded when they come.
    const settling = this.watcher.settle(150, 2000, Date.now());
    const started = performance.now();
    const changes: Change[] = [];
    const gone: Rec[] = [];
    const appeared: Rec[] = [];
    const before = this.before;
    const hashedBefore = this.counts.hashed;
    const after = await this.walkAll('after');
    // Each entry with the first manifest's entry for its path: a file whose stat is the same keeps its hash, the
    // others are hashed.
    const olds: (Rec | undefined)[] = new Array(after.length);
    const unhashed: Rec[] = [];
    let i = 0;
    for (let n = 0; n < after.length; n++) {
      const rec = after[n] as Rec;
      // The first walk's own entry (nothing about it changed): no path to compare, nothing to hash.
      if (before[i] === rec) {
        olds[n] = rec;
        i++;
        continue;
      }
      while (i < before.length && comparePaths((before[i] as Rec).path, rec.path) < 0)
        gone.push(before[i++] as Rec);
      const old =
        i < before.length && (before[i] as Rec).path === rec.path ? (before[i++] as Rec) : undefined;
      olds[n] = old;
      if (rec.type === 'file' && !rec.unreadable) {
        if (old?.hash && sameStatRec(old, rec)) rec.hash = old.hash;
        else unhashed.push(rec);
      }
    }
    this.usePool(0, unhashed.length);
    await this.hashAll(unhashed);
    this.closePool();
    for (let n = 0; n < after.length; n++) {
      const rec = after[n] as Rec;
      const old = olds[n];
      if (old === rec) continue;
      if (rec.unreadable) this.gaps.push({ path: rec.path, reason: rec.unreadable });
      if (!old) appeared.push(rec);
      else if (!sameRec(old, rec)) {
        const change = compare(toEntry(old), toEntry(rec));
        if (change) changes.push(change);
      }
    }
    while (i < before.length) gone.push(before[i++] as Rec);
    this.counts.after = after.length;
    // The cache would be written again as it is: every file the same, none hashed.
    const unchanged =
      this.cacheExact &&
      this.counts.hashed === hashedBefore &&
      gone.length === 0 &&
      appeared.length === 0 &&
      changes.length === 0 &&
      after.every((rec, n) => rec === before[n] || rec.type !== 'file' || sameRec(rec, before[n] as Rec));
    this.counts.afterMs = performance.now() - started;

    await settling;
    // Stopping takes over 100 ms on a large tree, in the watcher's thread: the cache is written and the report
    // made meanwhile, from what the watcher had seen when it settled (nothing after that can be the command's).
    const stopping = this.watcher.stop();
    const writing = performance.now();
    if (!unchanged) writeHashCache(this.cacheFile, this.tempFile, this.roots, after);
    this.counts.afterMs += performance.now() - writing;
    changes.push(...pairRenames(gone.map(toEntry), appeared.map(toEntry)));

    // What the watcher saw of paths in neither manifest: made and removed within the run.
    for (const [path, seen] of this.watcher.seen) {
      if (holds(before, path) || holds(after, path) || this.isExcluded(path)) continue;
      changes.push({
        kind: 'created and deleted',
        path,
        // Gone before the second manifest, and the watcher does not say what it was.
        type: 'unknown',
        fields: [],
        detail: seen.created ? 'appeared and was removed during the run' : 'touched and gone by the end',
        layers: ['watcher'],
      });
    }
    let missed = 0;
    // An excluded entry made, removed or replaced changes the listing of the directory holding it: that directory
    // is not reported for it (as it is not for a reported entry).
    const explained = new Set<string>();
    for (const [path, before] of this.excludedBefore)
      if (identity(path) !== before) explained.add(parentOf(path));
    const settled = settle(changes, explained);
    const watching = this.watcher.status.backend !== 'none';
    for (const change of settled) {
      const seen =
        this.watcher.seen.get(change.path) ?? (change.from ? this.watcher.seen.get(change.from) : undefined);
      if (seen) {
        if (!change.layers.includes('watcher')) change.layers.push('watcher');
        change.time = new Date(seen.first).toISOString();
      } else if (watching && !(change.type === 'directory' && change.kind === 'modified')) missed++;
    }
    this.forgetBefore();
    if (this.ownCache) rmSync(this.cacheDir, { recursive: true, force: true });
    await stopping;

    return {
      clean: settled.length === 0,
      roots: this.roots,
      excluded: [...this.excluded],
      changes: settled,
      others: [],
      gaps: this.gaps,
      manifest: this.counts,
      watcher: { ...this.watcher.status, missed },
      startedAt: this.startedAt,
      finishedAt: new Date().toISOString(),
    };
  }

  /** Gives up without a report (the run could not start): the watcher is stopped and temporary files go. */
  async abandon(): Promise<void> {
    this.closePool();
    await this.watcher.stop();
    this.forgetBefore();
    if (this.ownCache) rmSync(this.cacheDir, { recursive: true, force: true });
  }

  private isExcluded(path: string): boolean {
    for (const excluded of this.excluded)
      if (path === excluded || path.startsWith(`${excluded}/`)) return true;
    return false;
  }
}

function cacheBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Temporary manifests left by a checker that was killed (its pid is in the name and no longer runs). */
function removeStale(cacheDir: string): void {
  for (const name of leftByGone(cacheDir, /^[0-9a-f]{16}\.(\d+)\.[0-9a-f]{8}\.(before|after)$/))
    rmSync(join(cacheDir, name), { force: true });
}

/**
 * What an excluded path is, without looking inside it, or '' when there is none. With its ctime: a file system
 * may give a freed inode number to the next entry made (ext4 does), so a replaced entry can have the same one.
 */
function identity(path: string): string {
  try {
    const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    return stats ? `${stats.dev}:${stats.ino}:${stats.mode & 0o170000n}:${stats.ctimeNs}` : '';
  } catch (error) {
    // Below a file or an unreadable directory: nothing there that could change a listing we compare.
    return (error as NodeJS.ErrnoException).code ?? 'EIO';
  }
}
